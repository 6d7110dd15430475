"""A companion file already in the store still informs a new run read with it."""

import numpy as np

from store import open_store
from store.records import RunRecord
from workbench.importers.base import Importer, Probe
from workbench.ingest import import_files


class PairImporter(Importer):
    """Reads every *.main file with the shared 'capacity' file beside it."""

    name = "pair-test"

    def sniff(self, probe: Probe) -> bool:
        return True

    def read(self, paths, options):
        capacity = next(p for p in paths if p.name == "capacity")
        for main in (p for p in paths if p.suffix == ".main"):
            run = RunRecord(
                lens="fleet", label=main.stem, sources=[main, capacity], meta={"capacity": capacity.read_text()}
            )
            run.samples["gpus"] = np.array([1.0])
            yield run


def test_known_companion_is_linked_not_dropped(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setattr("workbench.ingest.detect", lambda path: (PairImporter(), None))
    store = open_store(sqlite_url)
    a, b = tmp_path / "a", tmp_path / "b"
    for d, window in ((a, "A"), (b, "B")):
        d.mkdir()
        (d / f"{window}.main").write_text(window)
        (d / "capacity").write_text("64")  # the same bytes in both windows
    first = import_files(store, [a])
    second = import_files(store, [b])
    (run_a,), (run_b,) = first.run_ids, second.run_ids
    assert store.load_run(run_b).meta["capacity"] == "64"
    shared = {c.sha256 for c in store.run_captures(run_a)} & {c.sha256 for c in store.run_captures(run_b)}
    assert len(shared) == 1  # one capture row, used by both runs
    assert store.counts()["capture"] == 3
    again = import_files(store, [b])
    assert again.run_ids == [] and len(again.skipped) == 2
