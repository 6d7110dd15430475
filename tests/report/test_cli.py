"""wb report from the command line: both sources, both formats, the format by suffix or
--format, and a bundle that does not verify refused (exit 3, nothing written) whether it was
edited (a digest differs) or forged and resealed (the results do not recompute)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_wb
from workbench.bundle.export import reseal_digests, write_bundle
from workbench.errors import UsageError
from workbench.report.files import output_format


def _report(url, *args):
    return run_wb("--store", url, "report", *args)


def test_an_investigation_and_its_bundle_in_both_formats(demo, tmp_path):
    url, bundles = demo
    out = _report(url, "2", "-o", str(tmp_path / "inv2.html"))
    assert out.returncode == 0, out.stderr
    assert "nothing on this page has been rechecked" in out.stdout
    assert "wb bundle export 2 -o investigation-2.bundle.json --embed-samples" in out.stdout
    assert (tmp_path / "inv2.html").read_text().startswith("<!DOCTYPE html>")
    out = _report(url, str(bundles[2]), "-o", str(tmp_path / "inv2"), "--format", "md", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["path"] == str(tmp_path / "inv2.md") and doc["format"] == "md"
    assert doc["origin"] == "bundle" and doc["verified"] is True and doc["recomputed"] is True
    assert doc["checksum"] == json.loads(bundles[2].read_text())["checksum"]["value"]
    assert doc["recheck"] == [
        f"wb evidence verify {bundles[2]} --recompute",
        f"wb evidence verify {bundles[2]} --captures DIR",
    ]
    assert (tmp_path / "inv2.md").read_text().startswith("## demo: framework upgrade")


def test_a_bundle_without_samples_is_checked_for_integrity_only(demo, tmp_path):
    from store import open_store
    from workbench.investigations.bundling import export_investigation

    url, _ = demo
    thin = write_bundle(export_investigation(open_store(url), 1), tmp_path / "thin.bundle.json")
    out = _report(url, str(thin), "-o", str(tmp_path / "thin.html"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "thin.html").read_text()
    assert "VERIFIED (integrity only)" in page and "the bundle embeds no samples" in page
    assert f"wb evidence verify {thin}\n" in page  # no --recompute to suggest


def _tampered(bundle: Path, folder: Path, *, reseal: bool) -> Path:
    doc = json.loads(bundle.read_text())
    primary = doc["results"]["content"]["comparisons"][0]["result"]["primary"]
    primary["candidate"] = primary["baseline"]  # "no change": the forger's wish
    primary["delta_pct"] = 0.0
    target = folder / ("resealed.bundle.json" if reseal else "edited.bundle.json")
    return write_bundle(reseal_digests(doc) if reseal else doc, target)


@pytest.mark.parametrize("reseal", [False, True], ids=["edited", "resealed"])
def test_a_bundle_that_does_not_verify_is_never_reported(demo, tmp_path, reseal):
    url, bundles = demo
    forged = _tampered(bundles[1], tmp_path, reseal=reseal)
    out = _report(url, str(forged), "-o", str(tmp_path / "forged.html"))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "not reported: the bundle does not verify" in out.stderr
    assert ("results.comparisons[0]" if reseal else "checksum") in out.stderr
    assert f"wb evidence verify {forged} --recompute" in out.stderr
    assert not (tmp_path / "forged.html").exists() and list(tmp_path.iterdir()) == [forged]


def test_bad_arguments_are_one_line(demo, tmp_path):
    url, bundles = demo
    out = _report(url, str(bundles[1]), "-o", str(tmp_path / "x.txt"))
    assert out.returncode == 2 and "name the file .html or .md" in out.stderr
    out = _report(url, str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.html"))
    assert out.returncode == 2 and "no such file" in out.stderr
    out = _report(url, "99", "-o", str(tmp_path / "x.html"))
    assert out.returncode != 0 and "99" in out.stderr and "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_output_format(tmp_path):
    assert output_format(tmp_path / "r.html", None) == (tmp_path / "r.html", "html")
    assert output_format(tmp_path / "r.MD", None) == (tmp_path / "r.MD", "md")
    assert output_format(tmp_path / "r", "md") == (tmp_path / "r.md", "md")
    assert output_format(tmp_path / "r.html", "html") == (tmp_path / "r.html", "html")
    for path, fmt in ((tmp_path / "r.md", "html"), (tmp_path / "r.pdf", None), (tmp_path / "no" / "r.md", None)):
        with pytest.raises(UsageError):
            output_format(path, fmt)
