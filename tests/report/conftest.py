"""The demo store, built once per session, and each demo investigation's bundle (samples embedded)."""

from __future__ import annotations

from pathlib import Path

import pytest

DEMO_INVESTIGATIONS = (1, 2, 3)  # inference, training, fleet (workbench.investigations.demo.DEMOS)


@pytest.fixture(scope="session")
def demo(tmp_path_factory) -> tuple[str, dict[int, Path]]:
    """(the demo store's URL, each investigation's bundle file)."""
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.demo import load_demo
    from workbench.investigations.bundling import export_investigation

    folder = tmp_path_factory.mktemp("report-demo")
    url = f"sqlite:///{folder / 'demo.sqlite'}"
    store = open_store(url)
    load_demo(store)
    bundles = {
        inv: write_bundle(export_investigation(store, inv, embed_samples=True), folder / f"inv{inv}.bundle.json")
        for inv in DEMO_INVESTIGATIONS
    }
    store.close()
    return url, bundles
