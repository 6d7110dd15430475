"""Canonical form: the bundle rules for values, and the checksum is exactly JCS."""

import hashlib
import json
import math
import unicodedata

import numpy as np
import rfc8785

from tests.bundle.helpers import sample_bundle
from workbench.bundle.canonical import bundle_value, digest
from workbench.bundle.columns import decode_column, encode_column
from workbench.bundle.format import CanonicalParts


def test_big_integers_become_strings_and_safe_ones_stay():
    assert bundle_value({"ts_ns": 2**60, "n": 2**53 - 1, "neg": -(2**53)}) == {
        "ts_ns": str(2**60),
        "n": 2**53 - 1,
        "neg": str(-(2**53)),
    }


def test_nan_and_infinity_become_null():
    assert bundle_value([math.nan, math.inf, -math.inf, 1.5, np.float64("nan")]) == [None, None, None, 1.5, None]


def test_text_and_keys_are_nfc():
    nfd = unicodedata.normalize("NFD", "café")
    assert nfd != "café"
    out = bundle_value({nfd: [nfd]})
    assert out == {"café": ["café"]}
    assert digest(bundle_value({nfd: nfd})) == digest({"café": "café"})


def test_keys_equal_after_nfc_are_refused():
    import pytest

    with pytest.raises(ValueError, match="twice"):
        bundle_value({"café": 1, unicodedata.normalize("NFD", "café"): 2})


def test_numpy_values_become_plain_json():
    out = bundle_value({"a": np.array([1.0, np.nan]), "b": np.int64(3), "c": (1, 2)})
    assert out == {"a": [1.0, None], "b": 3, "c": [1, 2]}
    json.dumps(out, allow_nan=False)


def test_checksum_is_sha256_of_rfc8785_without_checksum():
    bundle = sample_bundle()
    body = {k: v for k, v in bundle.items() if k != "checksum"}
    assert hashlib.sha256(rfc8785.dumps(body)).hexdigest() == bundle["checksum"]["value"]


def test_streamed_digests_equal_rfc8785_with_non_bmp_keys():
    # JCS sorts by UTF-16 code units: U+1F600 (surrogates D83D..) sorts before U+FB01.
    obj = {"\U0001f600": 1, "\ufb01": 2, "a": [1.0, 1e21, 1e-7]}
    # The checksum streamed member by member, in the same order, is the digest of those bytes.
    streamed = CanonicalParts({**obj, "recipe": {"digest": {"sha256": "x"}, "content": {"\ufb01": [1]}}})
    whole = {**obj, "recipe": {"digest": {"sha256": "x"}, "content": {"\ufb01": [1]}}}
    assert streamed.checksum == hashlib.sha256(rfc8785.dumps(whole)).hexdigest()
    assert streamed.part_digests["a"] == hashlib.sha256(rfc8785.dumps(obj["a"])).hexdigest()
    assert streamed.content_digests["recipe"] == hashlib.sha256(rfc8785.dumps({"\ufb01": [1]})).hexdigest()


def test_columns_round_trip_exactly_with_nan():
    values = np.array([0.1, np.nan, -0.0, 1e300, 5e-324])
    col = encode_column(values)
    back = decode_column(json.loads(json.dumps(col)))
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back, values)
    assert np.signbit(back[2])
    strings = decode_column(encode_column(np.array(["a", "é"])))
    assert list(strings) == ["a", "é"]


def test_equal_data_gives_equal_column_bytes_whatever_the_nan_payload():
    a = np.array([1.0, np.nan])
    b = a.copy()
    b.view(np.uint64)[1] = 0x7FF8000000000ABC  # another NaN bit pattern
    assert encode_column(a) == encode_column(b)
