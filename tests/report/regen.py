"""Rewrite the report structure goldens (tests/report/golden/) from a fresh demo store:
``python -m tests.report.regen``; review the diff and commit it with the change that made it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.report.goldens import demo_reports, structure_of
from tests.report.structure import write_golden


def main() -> None:
    from store import open_store
    from workbench.bundle.export import write_bundle
    from workbench.demo import load_demo
    from workbench.investigations.bundling import export_investigation

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'demo.sqlite'}"
        store = open_store(url)
        load_demo(store)
        bundles = {
            inv: write_bundle(export_investigation(store, inv, embed_samples=True), Path(tmp) / f"inv{inv}.json")
            for inv in (1, 2, 3)
        }
        store.close()
        for name, text in demo_reports(url, bundles).items():
            write_golden(name, structure_of(name, text))
            print(f"wrote tests/report/golden/{name}.json")


if __name__ == "__main__":
    main()
