"""``wb inspect`` reads a training run's rank tables (operations, op_shapes) from the store a
column at a time, reduced (issue 47 item 6): the result is the one of the runs loaded whole."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lenses.base import column, finite
from store import open_store
from tests.training import synth
from workbench.compare import inspect
from workbench.importers.base import ImportOptions
from workbench.ingest import import_files
from workbench.training import op_rates, window_kind
from workbench.investigations import workflow as wf
from workbench.usecases.comparisons import Inspect, InspectStored
from workbench.usecases.transport import Local

ACCEPT = ["model,objective,topology,effective_batch"]
WHY = ["synthetic traces"]


def _job(root: Path, name: str, ranks: int, **kw) -> Path:
    for r in range(ranks):
        synth.write(root / name / f"rank{r}.json.gz", synth.trace(r, world=ranks, **kw))
    return root / name


@pytest.fixture
def pair(store_url, tmp_path):
    """Two 3-rank jobs: B's matmuls at other shapes, one rank slower, memory recorded on both
    (in a store on each backend)."""
    root = tmp_path
    store = open_store(store_url)
    a = _job(root, "A", 3, mm_dims=[[64, 128], [128, 32]], memory_mb=900.0)
    b = _job(root, "B", 3, mm_dims=[[64, 256], [256, 32]], memory_mb=1100.0, compute_us=70_000)
    ids = [import_files(store, [d], ImportOptions(params={"jobs": 1})).run_ids[0] for d in (a, b)]
    return store, ids


def _whole(store, ids) -> dict:
    """The old path: both runs loaded whole, inspected in memory."""
    base, cand = (store.load_runs([i]) for i in ids)
    accepts = {name: WHY[0] for name in ACCEPT[0].split(",")}
    return json.loads(json.dumps(inspect(base, cand, "training", accepts=accepts).to_json(), sort_keys=True))


def _lean(store, ids, **kw) -> dict:
    req = Inspect(baseline=[str(ids[0])], candidate=[str(ids[1])], accept=ACCEPT, why=WHY, **kw)
    return json.loads(json.dumps(Local(store).call(req).result.to_json(), sort_keys=True))


def test_the_pair_has_what_the_reduction_reads(pair):
    store, ids = pair
    run = store.load_run(ids[0])
    assert {"operations", "op_shapes"} <= run.tables.keys() and len(set(run.tables["samples"]["rank"])) == 3
    assert not {"operations", "op_shapes"} & store.load_run(ids[0], leave_out=op_rates.RANK_TABLES).tables.keys()


@pytest.mark.parametrize("chunk", [op_rates.CHUNK, 7])  # 7 rows: every table crosses chunk boundaries
def test_inspect_from_the_store_is_inspect_of_the_whole_runs(pair, monkeypatch, chunk):
    store, ids = pair
    monkeypatch.setattr(op_rates, "CHUNK", chunk)
    read = []
    blobs = store.column_blobs
    monkeypatch.setattr(store, "column_blobs", lambda *a: read.append(a[1]) or blobs(*a))
    lean = _lean(store, ids)
    assert set(read) == set(op_rates.RANK_TABLES)  # reduced from the store, not loaded whole
    whole = _whole(store, ids)
    assert lean == whole
    assert lean["operations"] and any(f["check"] == "shapes" for f in lean["findings"])


def test_each_runs_reduction_is_the_same_from_the_store_and_from_memory(pair, monkeypatch):
    store, ids = pair
    monkeypatch.setattr(op_rates, "CHUNK", 5)
    for run_id in ids:
        assert op_rates.reduce_stored(store, run_id) == op_rates.reduce_loaded(store.load_run(run_id))


def test_steady_steps_are_reduced_from_the_store_too(pair, monkeypatch):
    """``--steps steady`` leaves the checkpoint step out of the rank tables as it does of a run in
    memory (``steady_steps``), reading them from the store a column at a time as well."""
    store, ids = pair
    monkeypatch.setattr(op_rates, "CHUNK", 5)
    read = []
    blobs = store.column_blobs
    monkeypatch.setattr(store, "column_blobs", lambda *a: read.append(a[1]) or blobs(*a))
    lean = _lean(store, ids, steps="steady")
    assert set(read) == set(op_rates.RANK_TABLES)
    base, cand = (store.load_runs([i]) for i in ids)
    accepts = {name: WHY[0] for name in ACCEPT[0].split(",")}
    whole = inspect(base, cand, "training", accepts=accepts, steps="steady").to_json()
    assert lean == json.loads(json.dumps(whole, sort_keys=True))
    assert lean["steps"]["kept"] == "steady" and lean["steps"]["excluded"][0]["steps"] == {"3": "checkpoint"}
    assert lean != _lean(store, ids)  # (the checkpoint step's operations are out)
    for run_id in ids:
        run = store.load_run(run_id)
        restricted = op_rates.reduce_stored(store, run_id, window_kind.unsteady_steps(run))
        assert restricted.steps == "steady"
        loaded = op_rates.reduce_loaded(window_kind.steady_steps(run)[0])
        assert (restricted.operations, restricted.shapes) == (loaded.operations, loaded.shapes)


def test_operations_reduced_over_other_steps_are_refused(pair):
    store, ids = pair
    base, cand = (store.load_runs([i]) for i in ids)
    reduced = ([op_rates.reduce_stored(store, ids[0])], [op_rates.reduce_stored(store, ids[1])])
    with pytest.raises(ValueError, match="reduced over other steps"):
        inspect(base, cand, "training", steps="steady", reduced=reduced)


def test_a_run_without_rank_tables_reduces_to_none(pair):
    store, ids = pair
    bare = store.load_run(ids[0], leave_out=op_rates.RANK_TABLES)
    assert op_rates.reduce_loaded(bare) == op_rates.Reduced(operations=None, shapes=None)


# The reductions as inspect computed them before issue 47, from the runs loaded whole (the oracle).
def _old_operations(run):
    ops = run.tables.get("operations")
    if not ops or "name" not in ops:
        return None
    names = np.asarray(ops["name"]).astype(object)
    total = column(run, "total_ms", "operations")
    if total is None:
        return None
    kinds = np.asarray(ops["kind"]).astype(object) if "kind" in ops else np.full(len(names), "", dtype=object)
    steps = column(run, "step", "operations")
    n_steps = len(np.unique(finite(steps))) if steps is not None and finite(steps).size else 1
    keep = np.isfinite(total)
    if not keep.any():
        return {}
    uniq, first, inverse = np.unique(names[keep], return_index=True, return_inverse=True)
    sums = np.bincount(inverse, weights=total[keep], minlength=len(uniq))
    kinds = kinds[keep][first]
    return {str(n): (str(k), float(t) / n_steps) for n, k, t in zip(uniq, kinds, sums)}


def _old_shapes(run):
    t = run.tables.get("op_shapes")
    if not t or not len(t.get("name", ())):
        return None
    steps = np.asarray(t["step"], dtype=np.float64)
    n_steps = max(len(np.unique(steps[np.isfinite(steps)])), 1)
    per = {}
    for name, kind, shape, total in zip(
        np.asarray(t["name"]).tolist(),
        np.asarray(t["kind"]).tolist(),
        np.asarray(t["shape"]).tolist(),
        np.asarray(t["total_ms"], dtype=np.float64),
    ):
        per[(name, kind, shape)] = per.get((name, kind, shape), 0.0) + float(total) / n_steps
    return per


@pytest.mark.parametrize("chunk", [op_rates.CHUNK, 3])
def test_the_reductions_are_the_old_ones_to_the_bit(pair, monkeypatch, chunk):
    store, ids = pair
    monkeypatch.setattr(op_rates, "CHUNK", chunk)
    for run_id in ids:
        whole = store.load_run(run_id)
        new = op_rates.reduce_stored(store, run_id)
        assert new.operations == _old_operations(whole)  # same sums, same kinds
        assert list(new.shapes.items()) == list(_old_shapes(whole).items())  # and in the same order


def test_the_tuis_inspect_of_a_stored_comparison_is_inspect_of_the_whole_runs(pair):
    store, ids = pair
    accepts = {name: WHY[0] for name in ACCEPT[0].split(",")}
    inv = wf.new_investigation(store, lens="training", question="lean?", baseline=[ids[0]], candidate=[ids[1]])
    view = wf.store_comparison(store, inv.id, [ids[0]], [ids[1]], accepts=accepts)
    stored = Local(store).call(InspectStored(comparison=int(view.id), lens="training")).result
    assert stored.operations and json.loads(json.dumps(stored.to_json(), sort_keys=True)) == _whole(store, ids)
