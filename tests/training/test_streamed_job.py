"""A job's rows stream: each rank's operations and shapes leave its summary for the job's
spooled tables before the next rank arrives, the window policy is decided after the last
rank, and the tables hold what concatenating every rank in memory would (docs/scale.md)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from store import open_store
from store.spooled import SpooledTable
from tests.training import synth
from workbench.errors import BadInput
from workbench.importers.base import ImportOptions
from workbench.importers.kineto import read_rank
from workbench.ingest import import_files
from workbench.training.job import build_job
from workbench.training.parallel import read_each
from workbench.training.rank_summary import RankSummary, summarize

WORLD = 4


def _files(tmp_path, **kw):
    return [
        synth.write(tmp_path / f"rank{r}.json", synth.trace(r, world=WORLD, mm_dims=[[64, 32], [32, 16]], **kw))
        for r in range(WORLD)
    ]


def _in_memory(files, excluded: set[float], table: str) -> dict[str, list]:
    """The table as the job held it before streaming: every rank's rows, in rank order, the excluded steps left out."""
    out: dict[str, list] = {}
    for path in files:  # (rank order: the files are rank0..rank3)
        rows = summarize(read_rank(path, ImportOptions()))
        part = rows.operations_table() if table == "operations" else rows.shape_table()
        keep = ~np.isin(part["step"], list(excluded))
        for column, values in part.items():
            out.setdefault(column, []).extend(np.asarray(values)[keep].tolist())
    return out


def _same(table, expected: dict[str, list]) -> None:
    assert list(table) == list(expected)
    for column, values in expected.items():
        got = table[column].tolist()
        if isinstance(values[0], str):
            assert got == values, column
        else:
            np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(values, dtype=float), err_msg=column)


@pytest.mark.parametrize("drop_last_kernels", [False, True])
def test_each_rank_leaves_its_rows_before_the_next_and_the_tables_are_unchanged(tmp_path, drop_last_kernels):
    files = _files(tmp_path, drop_last_kernels=drop_last_kernels)
    given: list[RankSummary] = []

    def arriving() -> Iterator[RankSummary]:  # last rank first: the tables are still in rank order
        for summary in read_each(read_rank, files[::-1], ImportOptions(params={"jobs": 1})):
            # When the next rank is asked for, the earlier ones hold no rows any more.
            assert all(not s.operations and s.shape_ops is None and not s.labels for s in given)
            assert summary.operations and summary.shape_ops is not None
            given.append(summary)
            yield summary

    record = build_job(arriving(), ImportOptions(), format_name="Kineto trace")
    assert len(given) == WORLD
    excluded = {float(n) for n in record.window["excluded_steps"]}
    assert excluded == ({1.0, 4.0} if drop_last_kernels else {1.0})  # the policy, decided after the last rank
    assert record.window["last_step_excluded"] is drop_last_kernels
    ops, shapes = record.tables["operations"], record.tables["op_shapes"]
    assert isinstance(ops, SpooledTable) and isinstance(shapes, SpooledTable)
    _same(ops, _in_memory(files, excluded, "operations"))
    _same(shapes, _in_memory(files, excluded, "shapes"))
    assert sorted(set(ops["rank"].tolist())) == [0.0, 1.0, 2.0, 3.0] and not excluded & set(ops["step"].tolist())
    findings = {f["check"]: f for f in record.meta["diagnostics"]}
    assert findings["straggler"]["status"] == "found" and findings["straggler"]["evidence"]["straggler_rank"] == 3


@pytest.mark.store
def test_a_streamed_job_is_stored_as_it_was_read(tmp_path, store_url):
    files = _files(tmp_path / "job")
    report = import_files(open_store(store_url), [tmp_path / "job"], ImportOptions(params={"jobs": 1}))
    back = open_store(store_url).load_run(report.run_ids[0])
    _same(back.tables["operations"], _in_memory(files, {1.0}, "operations"))
    _same(back.tables["op_shapes"], _in_memory(files, {1.0}, "shapes"))


@pytest.mark.store
def test_a_bad_last_rank_after_the_others_were_spooled_writes_nothing(tmp_path, store_url):
    files = _files(tmp_path / "job")
    files[-1].write_text(files[-1].read_text()[:400])  # truncated: found only after ranks 0-2 went to the spool
    st = open_store(store_url)
    with pytest.raises(BadInput, match="rank3"):
        import_files(st, [tmp_path / "job"], ImportOptions(params={"jobs": 1}))
    assert open_store(store_url).counts() == {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}


def test_a_lone_surrogate_in_a_spooled_name_is_refused_with_its_row(tmp_path):
    # (The Kineto reader already replaces one; the check stands for any importer that spools.)
    from store.records import RunRecord
    from workbench.ingest import check_text

    table = SpooledTable(("name", "step"), text=("name",), key="step")
    table.append({"name": np.array(["gemm", "odd\ud800", "gemm"], dtype=object), "step": np.array([1.0, 1.0, 2.0])})
    table.append({"name": np.array(["odd\ud800", "copy"], dtype=object), "step": np.array([2.0, 2.0])})
    record = RunRecord(lens="training", label="job", sources=[tmp_path / "rank0.json"])
    record.tables["operations"] = table  # type: ignore[assignment]
    table.exclude([1.0])
    with pytest.raises(BadInput, match=r"lone surrogate") as err:
        check_text(record)
    assert err.value.where == "operations[1].name"  # the first kept row that holds it
    table2 = SpooledTable(("name", "step"), text=("name",), key="step")
    table2.append({"name": np.array(["gemm", "odd\ud800"], dtype=object), "step": np.array([1.0, 2.0])})
    table2.exclude([2.0])  # on excluded rows only: never stored, so not refused
    record.tables["operations"] = table2  # type: ignore[assignment]
    check_text(record)


def test_a_failure_between_two_ranks_cancels_the_ranks_not_yet_read(tmp_path, monkeypatch):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from workbench.training import job as job_mod
    from workbench.training.parallel import LocalPool

    files = [synth.write(tmp_path / f"rank{r}.json", synth.trace(r, world=8)) for r in range(8)]
    release, calls = threading.Event(), []

    def read_one(path, options):
        calls.append(path)
        if len(calls) > 1:
            release.wait(30)  # the second rank is being read when the first one's consumer fails
        return read_rank(path, options)

    def failing(self, trace):
        raise OSError("no space left for the spool")

    monkeypatch.setattr(job_mod._JobTables, "take", failing)
    with ThreadPoolExecutor(max_workers=1) as pool:
        options = ImportOptions(params={"jobs": 1}, rank_executor=LocalPool(pool, None))
        try:
            # The error is kept (as a caller handling it would), so its frames keep the reader alive.
            with pytest.raises(OSError, match="no space left") as err:
                build_job(read_each(read_one, files, options), options, format_name="Kineto trace")
        finally:
            release.set()
    assert len(calls) <= 2, (
        f"{len(calls)} of 8 ranks read despite the failure at the first"
    )  # the others were cancelled
    assert err.value.__traceback__ is not None
