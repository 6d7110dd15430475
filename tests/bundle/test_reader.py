"""The strict reader: what cannot be canonicalized the same way everywhere is refused."""

import json
import unicodedata

import pytest

from workbench.bundle.reader import parse_strict, read_bundle_file
from workbench.errors import BadInput, EXIT_USAGE


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"verdict": "same", "verdict": "different"}', "duplicate key 'verdict'"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": Infinity}', "Infinity is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ('{"a": 1e400}', "overflows a double"),
        ('{"ts": 1152921504606846976}', "outside ±(2^53−1)"),
        ('{"a": "\\ud800"}', "lone surrogate"),
        ('{"a": [1, 2}', "not valid JSON"),
    ],
)
def test_refused_with_a_clear_error(text, message):
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)").replace("^", r"\^")) as err:
        parse_strict(text, source="b.json")
    assert str(err.value).startswith("b.json")
    assert err.value.exit_code == EXIT_USAGE


def test_big_integer_as_string_is_fine():
    assert parse_strict('{"ts": "1152921504606846976", "n": 9007199254740991}') == {
        "ts": "1152921504606846976",
        "n": 9007199254740991,
    }


def test_nfd_text_is_refused_and_named():
    text = json.dumps({"model": {"name": unicodedata.normalize("NFD", "café")}}, ensure_ascii=False)
    with pytest.raises(BadInput, match=r"\$\.model\.name: text is not NFC"):
        parse_strict(text, source="b.json")


def test_200_levels_of_nesting_refused():
    text = "[" * 200 + "]" * 200
    with pytest.raises(BadInput, match="nested deeper than 64 levels"):
        parse_strict(text)


def test_pathologically_deep_nesting_refused_not_crashing():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(BadInput, match="nested deeper"):
        parse_strict(text)


def test_nesting_within_the_limit_is_read():
    assert parse_strict("[" * 60 + "]" * 60) is not None


def test_100_mb_bundle_refused_before_reading(tmp_path):
    path = tmp_path / "big.json"
    with path.open("wb") as fh:  # sparse: 100 MB on paper, nothing read
        fh.truncate(100 * 1000 * 1000)
    with pytest.raises(BadInput, match=r"big.json: 100.0 MB is over the 64 MiB limit"):
        read_bundle_file(path)


def test_size_limit_can_be_raised(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"a": "' + "x" * 2000 + '"}')
    with pytest.raises(BadInput, match="over the 1,000-byte limit"):  # not "0 MiB"
        read_bundle_file(path, max_bytes=1000)
    assert read_bundle_file(path, max_bytes=4000)["a"].startswith("x")


def test_not_an_object_and_not_utf8(tmp_path):
    path = tmp_path / "b.json"
    path.write_text("[1, 2]")
    with pytest.raises(BadInput, match="a bundle is a JSON object"):
        read_bundle_file(path)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(BadInput, match="not UTF-8"):
        read_bundle_file(path)
    with pytest.raises(BadInput, match="no such file"):
        read_bundle_file(tmp_path / "missing.json")


def test_the_size_limit_is_a_ceiling_never_an_allocation(tmp_path):
    """``--max-size 100GB`` on a small bundle reads it (the limit used to be the read's size:
    a MemoryError)."""
    from tests.bundle.helpers import sample_bundle
    from tests.rerun.helpers import wb
    from workbench.bundle.export import write_bundle

    path = write_bundle(sample_bundle(embed_samples=False), tmp_path / "b.json")
    assert read_bundle_file(path, max_bytes=100 * 2**30)["format"] == "wb.evidence-bundle"
    code, out, err = wb("evidence", "verify", str(path), "--max-size", "100GB", store=f"sqlite:///{tmp_path / 's'}")
    assert code == 0 and "VALID" in out, err
