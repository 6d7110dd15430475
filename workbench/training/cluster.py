"""Rank traces read on a Dask cluster (``wb import --cluster``).

The cluster is only another ``concurrent.futures.Executor`` for the per-rank task of
``workbench.training.parallel`` (the Dask client's own ``get_executor()``): workers
read each file from the path they see (a shared filesystem), reduce it to its
``RankSummary`` and send back only that; the client builds the run and writes the
store in one transaction, as for a local import. Every worker must run the client's
wb version, and before a job's ranks are submitted every worker checks that it can
open every one of its files. Workers are not trusted to say what a file is: the
client hashes every file it records itself (``digests``, in threads), each rank task
hashes the file it parses, and a task whose digest is not the client's fails the import.

A worker that dies mid-task has its task rescheduled by Dask, at most
``distributed.scheduler.allowed-failures`` times (the scheduler's setting; 3 unless
configured); past that the import fails whole. Dask is imported only here, and only
when ``--cluster`` is given: ``import workbench`` never loads it.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import workbench
from workbench.errors import BadInput, UsageError, WbError
from workbench.inputs import FileIdentity
from workbench.training.parallel import Digest, Transfer

INSTALL = "pip install 'wb[cluster]'  (or: pip install 'distributed>=2025.1,<2027')"
CONNECT_TIMEOUT_S = 15  # reaching the scheduler
WORKERS_TIMEOUT_S = 120  # the first worker joining (a Slurm job may still be queued)
_NAMED_AT_MOST = 5  # unreadable paths named in the one-line refusal
# Client threads hashing files (hashlib releases the GIL): enough to keep a shared filesystem's reads in flight.
HASH_THREADS = max(1, min(8, os.cpu_count() or 1))


class ClusterProgress(Protocol):
    def start(self, what: str, files: int, nbytes: int, workers: int) -> None: ...

    def advance(self, what: str, nbytes: int) -> None: ...


HASHED, READ = "files hashed by the client", "rank files read"


def _distributed() -> Any:
    try:
        import distributed  # optional and heavy: only --cluster needs it
    except ImportError:
        raise UsageError(f"--cluster needs Dask distributed, which is not installed: {INSTALL}") from None
    return distributed


def parse_local(spec: str) -> int | None:
    """``local:N`` -> N worker processes; None for a scheduler address."""
    if spec != "local" and not spec.startswith("local:"):
        return None
    count = spec.partition(":")[2] or str(max(1, (os.cpu_count() or 1)))
    if not count.isdigit() or int(count) < 1:
        raise UsageError(f"--cluster local:N needs a positive number of workers, got {spec!r}")
    return int(count)


@contextmanager
def open_cluster(spec: str, progress: ClusterProgress | None = None) -> Iterator["DaskRanks"]:
    """A client on the cluster ``spec`` names, as a ``parallel.RankExecutor``.

    ``spec``: ``local:N`` (a LocalCluster of N one-thread worker processes, for trying
    it), a scheduler file (``dask scheduler --scheduler-file``), or a scheduler address
    (``tcp://host:8786``).
    """
    distributed = _distributed()
    spec = spec.strip()
    workers = parse_local(spec)
    cluster = None
    try:
        if workers is not None:
            import dask  # optional, as distributed above (which has loaded it already)

            # Dask's default MALLOC_TRIM_THRESHOLD_ for workers turns off glibc's adaptive mmap
            # threshold: every few-MiB parse buffer is then mapped and faulted in afresh, which
            # costs the reader about half again its CPU time (docs/scale.md).
            with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
                cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                )  # any free port
            client = distributed.Client(cluster)
        elif spec.endswith(".json") and Path(spec).is_file():
            client = distributed.Client(scheduler_file=spec, timeout=CONNECT_TIMEOUT_S)
        else:
            client = distributed.Client(spec, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError, RuntimeError) as exc:
        if cluster is not None:
            cluster.close()
        what = (
            "cannot start a local Dask cluster" if workers is not None else f"cannot reach the Dask scheduler at {spec}"
        )
        raise WbError(f"{what} ({exc or type(exc).__name__})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            raise WbError(
                f"the Dask scheduler at {spec} has no workers after {WORKERS_TIMEOUT_S} s ({exc or type(exc).__name__})"
            ) from None
        ranks = DaskRanks(client, spec, progress)
        ranks.check_workers()
        yield ranks
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class DaskRanks:
    """``parallel.RankExecutor`` on a Dask client."""

    def __init__(self, client: Any, spec: str, progress: ClusterProgress | None) -> None:
        self.client = client
        self.spec = spec
        self.progress = progress
        # pure=False: each submission is a task of its own; retries=0: a rank that fails
        # to parse fails the same way again (lost workers are the scheduler's business).
        self.executor = client.get_executor(pure=False, retries=0)
        self.transfer = Transfer()
        self.expected: dict[Path, tuple[str, int]] = {}

    @property
    def workers(self) -> int:
        return len(self.client.nthreads())

    def digests(self, files: list[Path], digest: Digest) -> dict[Path, tuple[str, int, FileIdentity]]:
        """Every file hashed here with ``digest``, in threads: the digests the store records,
        and ``expected`` of the rank tasks (their workers are not trusted to say what a file is).

        The first file that cannot be read fails the import, as locally.
        """
        self._start(HASHED, files, workers=0)
        found: dict[Path, tuple[str, int, FileIdentity]] = {}
        with ThreadPoolExecutor(max_workers=min(HASH_THREADS, max(1, len(files)))) as pool:
            futures = {pool.submit(digest, path): path for path in files}
            try:
                for future in as_completed(futures):
                    found[futures[future]] = result = future.result()
                    self._advance(HASHED, result[1])
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        self.transfer.digest_bytes += sum(d[1] for d in found.values())
        self.expected.update((path, (sha, size)) for path, (sha, size, _identity) in found.items())
        return found

    def check_workers(self) -> None:
        """Every worker can import wb, the client's version (the reader runs there by reference)."""
        try:
            answers = self.client.run(worker_version)
        except ImportError as exc:
            raise WbError(
                f"the Dask workers at {self.spec} cannot import wb ({exc}): install wb {workbench.__version__} on them"
            ) from None
        for worker, version in sorted(answers.items()):
            if version != workbench.__version__:
                raise WbError(
                    f"the Dask worker {worker} runs wb {version}, this client wb {workbench.__version__}: install the "
                    f"same wb on both"
                )

    def check(self, files: list[Path]) -> None:
        self.check_workers()  # workers may have joined since
        answers = self.client.run(unreadable_here, [str(p) for p in files])
        unreadable: dict[str, str] = {}
        for worker, bad in sorted(answers.items()):
            for path, why in bad:
                unreadable.setdefault(path, f"{why} on {worker}")
        if unreadable:
            named = "; ".join(f"{p} ({why})" for p, why in list(unreadable.items())[:_NAMED_AT_MOST])
            more = f"; and {len(unreadable) - _NAMED_AT_MOST} more" if len(unreadable) > _NAMED_AT_MOST else ""
            raise BadInput(
                None,
                f"the Dask workers cannot read {len(unreadable)} of {len(files)} rank files "
                f"(they read each file from the path the client gives: a filesystem they share): {named}{more}",
            )

    def started(self, files: list[Path]) -> None:
        self._start(READ, files)

    def finished(self, path: Path, nbytes: int) -> None:
        self._advance(READ, nbytes)

    def _start(self, what: str, files: list[Path], workers: int | None = None) -> None:
        """``workers``: where the phase runs (0: on the client); by default the cluster's workers."""
        if self.progress is not None:
            self.progress.start(
                what,
                len(files),
                sum(p.stat().st_size for p in files if p.exists()),
                self.workers if workers is None else workers,
            )

    def _advance(self, what: str, nbytes: int) -> None:
        if self.progress is not None:
            self.progress.advance(what, nbytes)

    def failure(self, exc: BaseException) -> BaseException | None:
        from distributed.scheduler import KilledWorker  # loaded already by the cluster that failed; optional

        if isinstance(exc, KilledWorker):
            return WbError(
                f"Dask workers died reading a rank file, more often than the scheduler retries it ({exc}); "
                "nothing was written"
            )
        if isinstance(exc, CancelledError):
            return WbError(
                f"the Dask cluster at {self.spec} cancelled the rank reads (scheduler or client connection lost); "
                "nothing was written"
            )
        return None


def worker_version() -> str:
    return workbench.__version__


def unreadable_here(paths: list[str]) -> list[tuple[str, str]]:
    """On a worker: the paths it cannot open, with the reason."""
    bad: list[tuple[str, str]] = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the check
        except OSError as exc:
            bad.append((path, exc.strerror or type(exc).__name__))
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                bad.append((path, "not a regular file"))
        finally:
            os.close(fd)
    return bad
