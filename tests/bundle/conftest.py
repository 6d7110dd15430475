"""Bundles the forgery tests share, built once per test process: the demo's three
investigations and a bundle holding a bisection, a rerun decided hypothesis and an action
(``tests/bundle/rich.py``)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="session")
def demo_bundles(tmp_path_factory) -> dict[str, dict]:
    """lens -> the demo investigation's bundle, with samples."""
    from tests.conftest import run_wb

    tmp = tmp_path_factory.mktemp("demo-bundles")
    url = f"sqlite:///{tmp / 'wb.sqlite'}"
    assert run_wb("--store", url, "demo").returncode == 0
    out = {}
    for inv, lens in enumerate(("inference", "training", "fleet"), start=1):
        path = tmp / f"{lens}.json"
        done = run_wb("--store", url, "bundle", "export", str(inv), "-o", str(path), "--embed-samples")
        assert done.returncode == 0, done.stderr
        out[lens] = json.loads(path.read_text())
        assert out[lens]["investigation"]["lens"] == lens
    return out


@pytest.fixture(scope="session")
def rich_bundle(tmp_path_factory) -> tuple[str, dict]:
    """(its store URL, the bundle)."""
    from tests.bundle.rich import build

    return build(tmp_path_factory.mktemp("rich-bundle"))


def rerun_engines() -> dict:
    from workbench.rerun.report import reanalyze

    return {"rerun_engine": reanalyze}
