"""Rank traces read on a Dask cluster (``wb import --cluster``): one LocalCluster for the module.

The cluster has 2 worker processes of one thread each, as the issue asks; a killed
worker is restarted by its nanny, so the fixture stays usable. The scheduler retries a
task whose worker died once (``allowed-failures`` 1) to keep the fault tests short.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed: pip install -e '.[dev]'")

from workbench.errors import BadInput, WbError
from workbench.importers import kineto
from workbench.importers.base import ImportOptions
from workbench.training.cluster import open_cluster, parse_local
from workbench.training.parallel import read_all

DATA = Path(__file__).resolve().parents[1] / "data" / "training"


@pytest.fixture(scope="module")
def cluster():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with open_cluster("local:2") as ranks:
            yield ranks


@pytest.fixture
def job(tmp_path):
    """The two sampled ranks of a real 128-rank job, the two one-rank trace_diff jobs, an Nsight Systems report."""
    root = tmp_path / "traces"
    shutil.copytree(DATA / "sampled", root / "sampled")
    shutil.copytree(DATA / "trace_diff", root / "trace_diff")
    shutil.copytree(DATA / "nsys", root / "nsys")
    return root


def _store(tmp_path, name):
    from store import open_store

    return open_store(f"sqlite:///{tmp_path / name}")


def _runs(store):
    return [store.load_run(r.id) for r in store.list_runs()]


def _assert_same_runs(a, b):
    assert [r.label for r in a] == [r.label for r in b]
    for x, y in zip(a, b):
        assert {k: (d.value, d.source) for k, d in x.dimensions.items()} == {
            k: (d.value, d.source) for k, d in y.dimensions.items()
        }
        assert x.window == y.window and x.meta == y.meta and [str(s) for s in x.sources] == [str(s) for s in y.sources]
        assert x.tables.keys() == y.tables.keys()
        for table in x.tables:
            assert x.tables[table].keys() == y.tables[table].keys()
            for column in x.tables[table]:
                np.testing.assert_array_equal(
                    x.tables[table][column], y.tables[table][column], err_msg=f"{table}.{column}"
                )


def test_cluster_import_gives_the_local_runs_row_for_row(cluster, job, tmp_path):
    from workbench.ingest import import_files

    local = _store(tmp_path, "local.sqlite")
    import_files(local, [job], ImportOptions(params={"jobs": 1}))
    remote = _store(tmp_path, "remote.sqlite")
    before = cluster.transfer.to_json()
    import_files(remote, [job], ImportOptions(rank_executor=cluster))
    runs = _runs(local)
    assert len(runs) == 4 and sum(len(r.tables["samples"]["step"]) for r in runs) > 0
    _assert_same_runs(runs, _runs(remote))
    # Five rank files were read on the workers; what came back is smaller than what they read.
    moved = {k: v - before[k] for k, v in cluster.transfer.to_json().items()}
    assert moved["ranks"] == 5
    assert moved["read_bytes"] == sum(p.stat().st_size for p in job.rglob("*") if p.is_file())
    assert 0 < moved["returned_bytes"] < moved["read_bytes"]
    # The client hashed every file under the import itself, the workers each rank file they
    # parsed (checked against the client's), and the store knows them by their true SHA-256.
    import hashlib

    assert moved["digest_bytes"] == sum(p.stat().st_size for p in job.rglob("*") if p.is_file())
    assert moved["worker_digest_bytes"] == moved["read_bytes"]
    for path in (p for p in job.rglob("*") if p.is_file()):
        capture = remote.find_capture(hashlib.sha256(path.read_bytes()).hexdigest())
        assert capture is not None and capture.size == path.stat().st_size


# A rank task on a worker that is not to be trusted: it parses the file, then lies about what it read.
def _lying_task(read_one, path, options, digest=False):
    from workbench.training import parallel

    returned = parallel.read_rank_summary(read_one, path, options, digest)
    lie = options.params["test_lie"]
    if lie == "zeros":  # sha256 000...0 and 5 bytes for a file of kilobytes
        returned.digest = ("0" * 64, 5)
    elif lie == "size":
        returned.digest = (returned.digest[0], returned.digest[1] + 1)
    elif lie == "none":
        returned.digest = None
    else:  # the digest of another file (one already stored, say): "already imported"
        sha, size, _ = parallel.digest_file(Path(lie))
        returned.digest = (sha, size)
    return returned


@pytest.mark.parametrize("lie", ["zeros", "size", "none", "other"])
def test_a_worker_whose_digest_is_not_its_files_fails_the_import_and_stores_nothing(
    cluster, job, tmp_path, monkeypatch, lie
):
    from workbench.ingest import import_files
    from workbench.training import parallel

    ranks = sorted((job / "sampled").iterdir())
    store = _store(tmp_path, "s.sqlite")
    import_files(store, [job / "trace_diff"], ImportOptions(params={"jobs": 1}))  # something stored already
    before = store.counts()
    other = str(next((job / "trace_diff").rglob("*.json*"))) if lie == "other" else lie
    monkeypatch.setattr(parallel, "read_rank_summary", _lying_task)  # travels to the workers by reference
    with pytest.raises(BadInput) as err:
        import_files(store, [job / "sampled"], ImportOptions(params={"test_lie": other}, rank_executor=cluster))
    text = str(err.value)
    assert "\n" not in text and "the Dask worker that read it reports" in text and "nothing was written" in text
    assert err.value.file in {str(p) for p in ranks}
    assert store.counts() == before and len(store.list_runs()) == 2  # nothing of the lied-about job stored


def test_a_path_the_workers_cannot_read_is_refused_in_one_line(cluster, job):
    files = sorted((job / "sampled").iterdir())
    missing = job / "sampled" / "rank-9.json.gz"  # the client never opens it: only the workers look
    with pytest.raises(BadInput) as err:
        read_all(kineto.read_rank, [*files, missing], ImportOptions(rank_executor=cluster))
    text = str(err.value)
    assert "\n" not in text and str(missing) in text and "1 of 3 rank files" in text
    assert str(files[0]) + " (" not in text  # the readable ones are not named


def test_a_fifo_is_refused_by_the_workers_check_without_blocking_it(cluster, tmp_path):
    fifo = tmp_path / "rank-0.json.gz"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="not a regular file") as err:
        read_all(kineto.read_rank, [fifo], ImportOptions(rank_executor=cluster))
    assert str(fifo) in str(err.value)


def test_a_rank_that_fails_to_parse_fails_the_import_naming_its_file(cluster, job, tmp_path):
    from workbench.ingest import import_files

    bad = job / "sampled" / "sampled_rank-1.json.gz"
    bad.write_bytes(bad.read_bytes()[:5000])
    store = _store(tmp_path, "s.sqlite")
    with pytest.raises(BadInput) as err:
        import_files(store, [job / "sampled"], ImportOptions(rank_executor=cluster))
    assert err.value.file == str(bad)
    assert store.list_runs() == []


# A rank reader that kills its worker process on rank 1: once (then it leaves a marker), or always.
def _killing_reader(path, options):
    marker = Path(options.params["test_kill_marker"])
    if path.name == "sampled_rank-1.json.gz" and (marker.name == "always" or not marker.exists()):
        marker.touch()
        os._exit(1)
    return kineto.read_rank(path, options)


def test_a_worker_killed_mid_import_is_retried_and_the_run_is_identical(cluster, job, tmp_path, monkeypatch):
    from workbench.ingest import import_files

    local = _store(tmp_path, "local.sqlite")
    import_files(local, [job / "sampled"], ImportOptions(params={"jobs": 1}))
    remote = _store(tmp_path, "remote.sqlite")
    monkeypatch.setattr(kineto, "read_rank", _killing_reader)  # travels to the workers by reference
    import_files(
        remote,
        [job / "sampled"],
        ImportOptions(params={"test_kill_marker": str(tmp_path / "once")}, rank_executor=cluster),
    )
    assert (tmp_path / "once").exists()  # a worker did die
    _assert_same_runs(_runs(local), _runs(remote))
    cluster.client.wait_for_workers(2, timeout=60)


def test_workers_that_keep_dying_fail_the_import_whole(cluster, job, tmp_path, monkeypatch):
    from workbench.ingest import import_files

    (tmp_path / "k").mkdir()
    store = _store(tmp_path, "s.sqlite")
    monkeypatch.setattr(kineto, "read_rank", _killing_reader)
    with pytest.raises(WbError, match="nothing was written"):
        import_files(
            store,
            [job / "sampled"],
            ImportOptions(params={"test_kill_marker": str(tmp_path / "k" / "always")}, rank_executor=cluster),
        )
    assert store.list_runs() == [] and store.counts()["capture"] == 0
    cluster.client.wait_for_workers(2, timeout=60)


def test_local_spec_parsing():
    assert parse_local("local:3") == 3 and parse_local("tcp://h:8786") is None
    with pytest.raises(Exception, match="positive number"):
        parse_local("local:zero")


def test_cli_cluster_json_is_one_document_with_what_travelled(tmp_path):
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "--store",
            store,
            "import",
            str(DATA / "sampled"),
            "--cluster",
            "local:1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["runs"]) == 1
    travelled = doc["cluster"]
    assert travelled["ranks"] == 2 and travelled["workers"] == 1
    assert 0 < travelled["returned_bytes"] < travelled["read_bytes"]


class _InterruptAfterFirst:
    """Progress that presses Ctrl-C when the first rank comes back."""

    def start(self, what, files, nbytes, workers):
        self.workers = workers

    def advance(self, what, nbytes):
        raise KeyboardInterrupt


def test_ctrl_c_leaves_no_task_on_the_scheduler(cluster, tmp_path):
    import time

    files = []
    for i in range(40):  # far more ranks than workers: most are still queued when Ctrl-C comes
        target = tmp_path / f"rank-{i}.json.gz"
        shutil.copy(DATA / "sampled" / f"sampled_rank-{i % 2}.json.gz", target)
        files.append(target)
    cluster.progress = _InterruptAfterFirst()
    try:
        with pytest.raises(KeyboardInterrupt):
            read_all(kineto.read_rank, files, ImportOptions(rank_executor=cluster))
    finally:
        cluster.progress = None

    def tasks_left():  # to be run or running (a finished one may stay in memory while the traceback holds it)
        return cluster.client.run_on_scheduler(
            lambda dask_scheduler: sum(
                ts.state in ("waiting", "queued", "processing", "no-worker") for ts in dask_scheduler.tasks.values()
            )
        )

    deadline = time.monotonic() + 2  # reading the 38 left takes longer than this
    while tasks_left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert tasks_left() == 0  # nothing left running for nobody


def test_the_progress_bar_counts_ranks_bytes_and_workers():
    import io

    from rich.console import Console

    from workbench.cli.cluster_progress import ClusterBar

    out = io.StringIO()
    bar = ClusterBar(Console(file=out, force_terminal=True, width=100))
    bar.start("files hashed by the client", 3, 3000, 0)
    for _ in range(3):
        bar.advance("files hashed by the client", 1000)
    bar.start("rank files read", 3, 3000, 2)
    bar.advance("rank files read", 1000)
    bar.advance("rank files read", 1000)
    bar.bar.refresh()
    assert "files hashed by the client 3/3" in out.getvalue() and "3/3 on" not in out.getvalue()
    assert "rank files read 2/3 on 2 workers" in out.getvalue()
    bar.start("rank files read", 1, 500, 2)  # a second job in the same import adds to the totals
    assert bar.bar.tasks[1].total == 3500 and bar.phases["rank files read"].files == 4
    bar.close()


def test_ctrl_c_cancels_what_is_still_queued(tmp_path):
    """The same, on any executor: the futures not yet started are cancelled, not run to the end."""
    from concurrent.futures import ThreadPoolExecutor

    from workbench.training.parallel import LocalPool

    class Recording(ThreadPoolExecutor):
        def __init__(self):
            super().__init__(max_workers=1)
            self.futures = []

        def submit(self, *args, **kwargs):
            self.futures.append(super().submit(*args, **kwargs))
            return self.futures[-1]

    def interrupt(path, done, total):
        raise KeyboardInterrupt

    files = [DATA / "sampled" / f"sampled_rank-{i % 2}.json.gz" for i in range(6)]
    with Recording() as pool:
        with pytest.raises(KeyboardInterrupt):
            read_all(kineto.read_rank, files, ImportOptions(rank_executor=LocalPool(pool, interrupt)))
    assert sum(f.cancelled() for f in pool.futures) >= 4  # one done, at most one running


def test_a_worker_with_another_wb_version_is_refused(cluster, monkeypatch):
    import workbench

    monkeypatch.setattr(workbench, "__version__", "0.0.0-client")
    with pytest.raises(WbError, match=r"runs wb .*, this client wb 0\.0\.0-client"):
        cluster.check_workers()
