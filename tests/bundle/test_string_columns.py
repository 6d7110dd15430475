"""An embedded string column decodes to shared ``str`` objects, never a fixed-width
``<U`` array as wide as its longest value on every row (issue 28: one 10,000-character
string in an 80,000-row column took 3.1 GB to ``verify --recompute``)."""

import base64
import tracemalloc
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bundle.helpers import sample_bundle
from tests.investigations.fakes import fake_compare
from workbench.bundle.columns import decode_column, decode_tables, encode_column
from workbench.bundle.export import dumps
from workbench.bundle.reader import parse_strict
from workbench.bundle.verify import verify_bundle

ROWS, HUGE = 80_000, "w" * 10_000


def _wide_column() -> np.ndarray:
    values = np.array([f"r{i % 97}" for i in range(ROWS)], dtype=object)
    values[123] = HUGE
    return values


def test_a_decoded_string_column_is_objects_not_fixed_width():
    back = decode_column(encode_column(_wide_column()))
    assert back.dtype == object and back.dtype != np.dtype("<U10000")
    assert back.shape == (ROWS,) and back[123] == HUGE and back[0] == "r0" and back[-1] == f"r{(ROWS - 1) % 97}"
    assert back.nbytes == ROWS * back.itemsize  # pointers, not 40 kB a row


def test_recompute_of_a_bundle_with_a_wide_string_column_stays_small():
    bundle = sample_bundle()
    text = dumps(bundle)
    doc = parse_strict(text)
    doc["samples"]["content"]["runs"]["run/4"]["notes"] = {"text": encode_column(_wide_column())}
    from workbench.bundle.export import reseal_digests

    doc = reseal_digests(doc)
    decoded = decode_tables(doc["samples"]["content"]["runs"]["run/4"])
    assert decoded["notes"]["text"].dtype == object
    tracemalloc.start()
    try:
        report = verify_bundle(doc, recompute=True, engine=fake_compare)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok, report
    assert peak < 300e6, f"peak {peak / 1e6:.0f} MB"  # a <U10000 column alone would be 3.2 GB


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(['"', ",", "\\", "a", "é", "\n", "😀", "\u200b"]), max_size=6), max_size=60
    )
)
def test_a_string_column_read_a_piece_at_a_time_is_the_column(monkeypatch, values):
    """Cut into pieces of a few bytes (quotes, commas and backslashes inside values), the column
    reads back exactly, equal values shared."""
    import workbench.bundle.columns as columns

    monkeypatch.setattr(columns, "PIECE", 7)  # the same for every example: nothing to reset
    values = [unicodedata.normalize("NFC", v) for v in values]
    back = decode_column(encode_column(np.array(values, dtype=object)))
    assert back.tolist() == values
    assert len({id(v) for v in back.tolist()}) == len(set(values))


@pytest.mark.parametrize(
    "text",
    ['["a","b"],["c"]', '["a",1,"c"]', '["a","b"', '{"a":"b"}', '["a","\\ud800"]', '["a","e\u0301"]', '["a"]'],
)
def test_a_str_column_that_is_not_its_length_of_nfc_strings_is_refused(monkeypatch, text):
    import workbench.bundle.columns as columns

    monkeypatch.setattr(columns, "PIECE", 3)
    column = {"dtype": "str", "encoding": "json-base64", "length": 3, "data": base64.b64encode(text.encode()).decode()}
    with pytest.raises(ValueError, match="samples.run/1.x"):
        decode_column(column, where="samples.run/1.x")
