"""The docs stay true: the example bundle verifies, and every member is documented."""

import re
from pathlib import Path

from tests.bundle.helpers import sample_bundle
from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import verify_bundle

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_example_bundle_verifies():
    path = DOCS / "examples" / "inference-demo.bundle.json"
    report = verify_bundle(read_bundle_file(path), source=path)
    assert report.ok, report.mismatched


def test_every_top_level_member_is_documented():
    text = (DOCS / "bundle-format.md").read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.M))
    assert set(sample_bundle()) <= documented, set(sample_bundle()) - documented


def test_every_recipe_and_results_field_is_documented():
    text = (DOCS / "bundle-format.md").read_text()
    b = sample_bundle()
    for name in [*b["recipe"]["content"], *b["results"]["content"], *b["checksum"]]:
        assert f"`{name}`" in text or f'"{name}"' in text, name
