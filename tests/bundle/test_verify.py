"""Export -> verify round trips; any single change is caught and named; layout is not a change."""

import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bundle.helpers import sample_bundle
from tests.investigations.fakes import fake_compare
from workbench.bundle.export import dumps, reseal_digests, seal, write_bundle
from workbench.bundle.reader import parse_strict, read_bundle_file
from workbench.bundle.verify import render_verify, verify_bundle
from workbench.errors import BadInput

BUNDLE = sample_bundle()
TEXT = dumps(BUNDLE)


def _verify(doc, **kw):
    return verify_bundle(parse_strict(json.dumps(doc, ensure_ascii=False)), **kw)


def _leaf_paths(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaf_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaf_paths(v, (*path, i))
    else:
        yield path


LEAVES = list(_leaf_paths(parse_strict(TEXT)))


def _changed(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return 0
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 + 1.0
    if isinstance(value, str):
        if not value:
            return "x"
        # change one character (a base64 digit becomes another base64 digit)
        return value[:-1] + ("A" if value[-1] != "A" else "B")
    raise AssertionError(type(value))


def test_round_trip_is_valid(tmp_path):
    path = write_bundle(BUNDLE, tmp_path / "b.json")
    report = verify_bundle(read_bundle_file(path), source=path)
    assert report.ok, render_verify(report)
    text = render_verify(report)
    for part in ("checksum", "recipe", "results", "samples"):
        assert any(c.part == part and c.ok for c in report.checks)
    assert "VALID" in text and "not signed" in text and "not who made it" not in text
    assert "does not show who made it" in text


def test_bundle_has_the_documented_members():
    assert set(BUNDLE) == {
        "format",
        "format_version",
        "tool",
        "created_at",
        "text_normalization",
        "investigation",
        "runs",
        "subject",
        "recipe",
        "results",
        "samples",
        "observations",
        "hypotheses",
        "checksum",
    }
    assert BUNDLE["checksum"]["signed"] is False
    assert BUNDLE["observations"][0]["label"] == "observation, not cause"
    assert BUNDLE["runs"][0]["meta"]["recorded_at_ns"] == "1796008233577080157"  # > 2^53: a string
    assert BUNDLE["subject"][0]["digest"] == {"sha256": f"{1:064x}"}
    assert BUNDLE["results"]["content"]["verdicts"] == [
        {"comparison": "comparison/1", "comparable": True, "verdict": "REGRESSION"}
    ]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(LEAVES))
def test_changing_any_single_leaf_fails_and_names_the_part(path):
    doc = parse_strict(TEXT)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = _changed(node[path[-1]])
    try:
        report = _verify(doc)
    except BadInput as exc:  # format / version changed: refused as not a readable bundle
        assert path[0] in ("format", "format_version"), path
        assert path[0].split("_")[0] in str(exc)
        return
    assert not report.ok, path
    top = path[0]
    named = " ".join(report.mismatched)
    assert top in named or (top == "checksum" and "checksum" in named), (path, report.mismatched)


def test_every_leaf_is_covered():
    """The property test samples leaves; here every leaf, once, quickly for the small ones."""
    small = [p for p in LEAVES if p[0] != "samples"]
    for path in small:
        doc = parse_strict(TEXT)
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = _changed(node[path[-1]])
        try:
            assert not _verify(doc).ok, path
        except BadInput:
            assert path[0] in ("format", "format_version")


def test_reordering_keys_and_whitespace_is_not_a_change():
    doc = parse_strict(TEXT)

    def shuffle(node, rng):
        if isinstance(node, dict):
            items = list(node.items())
            rng.shuffle(items)
            return {k: shuffle(v, rng) for k, v in items}
        if isinstance(node, list):
            return [shuffle(v, rng) for v in node]
        return node

    shuffled = shuffle(doc, random.Random(7))
    assert list(shuffled) != list(doc)
    for text in (
        json.dumps(shuffled),
        json.dumps(shuffled, indent=7, ensure_ascii=True),
        json.dumps(shuffled, separators=(",", ":")),
    ):
        assert verify_bundle(parse_strict(text)).ok


def test_escaped_unicode_is_the_same_text():
    assert verify_bundle(parse_strict(json.dumps(parse_strict(TEXT), ensure_ascii=True))).ok


def test_an_edit_with_a_recomputed_checksum_is_named_by_its_digest():
    doc = parse_strict(TEXT)
    doc["results"]["content"]["comparisons"][0]["result"]["primary"]["delta_pct"] = 5.0
    report = verify_bundle(seal(doc))  # checksum redone, results digest not
    assert not report.ok and report.mismatched == ["results"]


def test_tampered_part_digests_are_named():
    doc = parse_strict(TEXT)
    doc["checksum"]["parts"]["observations"] = "0" * 64
    report = verify_bundle(doc)
    assert report.mismatched == ["checksum.parts.observations"]


def test_an_added_member_is_caught():
    doc = parse_strict(TEXT)
    doc["note"] = "added later"
    report = verify_bundle(doc)
    assert "checksum.parts.note" in report.mismatched and "checksum" in report.mismatched


def test_unknown_format_or_version_fails_closed():
    doc = parse_strict(TEXT)
    doc["format_version"] = "2.0"
    with pytest.raises(BadInput, match="unsupported bundle format version"):
        verify_bundle(doc)
    with pytest.raises(BadInput, match="not a wb evidence bundle"):
        verify_bundle({"hello": 1})


def test_captures_dir_checks_files_by_digest(tmp_path):
    import hashlib

    doc = parse_strict(TEXT)
    files = {}
    for entry in doc["subject"]:
        data = f"capture {entry['name']}".encode()
        files[entry["name"]] = data
        entry["digest"]["sha256"] = hashlib.sha256(data).hexdigest()
        entry["size"] = len(data)
    doc = seal(doc)
    for name, data in files.items():
        (tmp_path / ("renamed-" + name)).write_bytes(data)  # matched by digest, not name
    assert verify_bundle(doc, captures_dir=tmp_path).ok
    first = doc["subject"][0]["name"]
    (tmp_path / ("renamed-" + first)).unlink()
    (tmp_path / first).write_bytes(b"changed")
    report = verify_bundle(doc, captures_dir=tmp_path)
    assert not report.ok
    bad = [c for c in report.checks if not c.ok]
    assert len(bad) == 1 and first in bad[0].part and "other content" in bad[0].detail


def test_recompute_confirms_an_honest_bundle():
    report = verify_bundle(parse_strict(TEXT), recompute=True, engine=fake_compare)
    assert report.ok, render_verify(report)
    assert [c.part for c in report.recompute] == [
        "results.comparisons[0] comparison/1",
        "hypotheses[0] hypothesis/1",
        "rebuilt",
    ]
    assert "leaves equal within tolerance" in report.recompute[-1].detail


def test_recompute_catches_edited_results_with_recomputed_digests():
    doc = parse_strict(TEXT)
    primary = doc["results"]["content"]["comparisons"][0]["result"]["primary"]
    primary["candidate"] = primary["baseline"]  # "no regression after all"
    primary["effect"]["verdict"] = "EQUIVALENT"
    forged = reseal_digests(doc)
    assert verify_bundle(forged).ok  # integrity alone cannot tell: it is unsigned
    report = verify_bundle(forged, recompute=True, engine=fake_compare)
    assert not report.ok
    # Each difference is named by its path; the verdict stated for the comparison still stands on
    # the rebuilt result, so it is not among them.
    assert report.mismatched == [
        "results.comparisons[0] comparison/1",
        "results.comparisons[0].result.primary.candidate",
        "results.comparisons[0].result.primary.effect.verdict",
        "rebuilt",
    ]
    detail = {c.part: c.detail for c in report.recompute}["results.comparisons[0].result.primary.effect.verdict"]
    assert detail == "stated 'EQUIVALENT', rebuilt 'REGRESSION'"


def test_recompute_catches_edited_samples_with_recomputed_digests():
    doc = parse_strict(TEXT)
    import base64

    import numpy as np

    col = doc["samples"]["content"]["runs"]["run/4"]["samples"]["ttft_ms"]
    values = np.frombuffer(base64.b64decode(col["data"]), "<f8").copy() * 0.5
    col["data"] = base64.b64encode(values.tobytes()).decode()
    report = verify_bundle(reseal_digests(doc), recompute=True, engine=fake_compare)
    assert not report.ok and any(p.startswith("results.comparisons[0].result.primary") for p in report.mismatched)


def test_without_embedded_samples_each_result_says_it_could_not_be_rebuilt():
    doc = sample_bundle(embed_samples=False)
    report = verify_bundle(copy.deepcopy(doc), recompute=True, engine=fake_compare)
    assert not report.ok
    bad = {c.part: c.detail for c in report.recompute if not c.ok}
    assert "results.comparisons[0].result" in bad and "results.verdicts[0]" in bad
    assert "embeds no samples" in bad["results.comparisons[0].result"]
    assert "VALID" not in render_verify(report).replace("MISMATCH", "")


def test_recompute_on_a_malformed_but_resealed_bundle_fails_cleanly():
    doc = parse_strict(TEXT)
    doc["recipe"]["content"]["comparisons"] = "not a list of comparisons"
    report = verify_bundle(reseal_digests(doc), recompute=True, engine=fake_compare)
    assert not report.ok and report.recompute[0].part == "recompute"
    assert report.mismatched[0] == "recipe.comparisons"
