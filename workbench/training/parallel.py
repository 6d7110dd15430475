"""Read the rank files of one job through a ``concurrent.futures.Executor``.

Parsing is CPU-bound Python (the GIL rules out threads), and each rank file is
independent, so the per-rank task (``read_rank_summary``: read one file, reduce it to
its ``RankSummary``) runs wherever an executor puts it:

* by default a local process pool of up to ``jobs`` processes (import parameter;
  default: one per CPU, at most one per file, and none for small inputs). Workers are
  spawned, not forked, so a caller with threads (the TUI) is safe;
* with ``ImportOptions.rank_executor`` set (``wb import --cluster``), the executor of a Dask
  client (``workbench.training.cluster``): the same task, on the cluster's workers.

Each worker holds one rank at a time and sends back only the summary, so memory stays
bounded by the number of workers. ``read_each`` yields each summary as its task
finishes (and lets go of the task's result), so the job's builder can spool the rank's
rows before the next one arrives (``job.build_job``): the client holds the summaries
without their rows. The
results are our own objects, pickled only between our own processes (or a Dask
cluster the user started: see docs/scale.md). A cluster's workers are not trusted to
say what a file is: there the task also hashes the file it parses, and the client
compares that with its own digest of the file (``RankExecutor.expected``).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.errors import BadInput
from workbench.inputs import FileIdentity, ImporterOption, ImportOptions, check_unchanged, digest_file
from workbench.training.model import RankTrace
from workbench.training.rank_summary import RankSummary, share_labels, summarize
from workbench.vocabulary import JSONDoc

ReadOne = Callable[[Path, ImportOptions], RankTrace]
Digest = Callable[[Path], tuple[str, int, FileIdentity]]

# Below this much input (on disk) starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 8 << 20


JOBS = ImporterOption(
    "jobs", "--jobs", "Worker processes for reading rank traces (default: by input size).", int, minimum=1
)


def worker_count(options: ImportOptions, files: list[Path]) -> int:
    requested = options.params.get("jobs")
    if requested is None:
        if sum(p.stat().st_size for p in files if p.exists()) < PARALLEL_MIN_BYTES:
            return 1
        requested = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        requested = int(requested)
    except (TypeError, ValueError):
        raise BadInput(None, f"jobs must be a positive integer, got {requested!r}") from None
    return max(1, min(requested, len(files)))


class _Failure:
    """A BadInput from a worker, carried back as plain data (BadInput's own pickling loses its fields)."""

    def __init__(self, err: BadInput) -> None:
        self.file, self.detail, self.where = err.file, err.detail, err.where

    def error(self) -> BadInput:
        return BadInput(self.file, self.detail, where=self.where)


@dataclass
class Returned:
    """What one rank task sends back, its size on the wire, and the task's wall and CPU seconds;
    with ``digest``, the (SHA-256, size) of the file it parsed, as it saw it."""

    summary: RankSummary | _Failure
    nbytes: int
    seconds: float
    cpu_seconds: float
    digest: tuple[str, int] | None = None


def read_rank_summary(read_one: ReadOne, path: Path, options: ImportOptions, digest: bool = False) -> Returned:
    """The per-rank task, the same in a local process and on a cluster worker.

    ``digest``: hash the file first and check after the parse that it is still that
    file, so the digest sent back is the digest of the bytes parsed."""
    start, cpu = time.perf_counter(), time.thread_time()
    seen: tuple[str, int] | None = None
    try:
        identity: FileIdentity | None = None
        if digest:
            sha, size, identity = digest_file(path)
            seen = (sha, size)
        result: RankSummary | _Failure = summarize(read_one(path, options))
        if identity is not None:
            check_unchanged(path, identity)
    except BadInput as err:
        result = _Failure(err.at(path))
    nbytes = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    return Returned(result, nbytes, time.perf_counter() - start, time.thread_time() - cpu, seen)


@dataclass
class Transfer:
    """What travelled: rank files read (bytes on disk, where they were read) and bytes sent back."""

    ranks: int = 0
    read_bytes: int = 0
    returned_bytes: int = 0
    task_seconds: float = 0.0  # summed over the rank tasks, where they ran: wall
    task_cpu_seconds: float = 0.0  # and CPU (steadier than wall on a shared machine)
    digest_bytes: int = 0  # files hashed by the client (SHA-256: the store's identity of a capture)
    worker_digest_bytes: int = 0  # rank files hashed by the workers, checked against the client's digests

    def add(self, summary: RankSummary, returned: Returned) -> None:
        self.ranks += 1
        self.read_bytes += summary.read_bytes
        self.returned_bytes += returned.nbytes
        self.task_seconds += returned.seconds
        self.task_cpu_seconds += returned.cpu_seconds
        if returned.digest is not None:
            self.worker_digest_bytes += returned.digest[1]

    def to_json(self) -> JSONDoc:
        return {
            "ranks": self.ranks,
            "read_bytes": self.read_bytes,
            "returned_bytes": self.returned_bytes,
            "task_seconds": round(self.task_seconds, 3),
            "task_cpu_seconds": round(self.task_cpu_seconds, 3),
            "digest_bytes": self.digest_bytes,
            "worker_digest_bytes": self.worker_digest_bytes,
        }


class RankExecutor(Protocol):
    """Where rank files are read: an executor, plus the checks and progress a remote one needs."""

    executor: Executor
    transfer: Transfer
    # The client's own (SHA-256, size) of the files it records; None: the workers are the
    # client's own processes, trusted. A rank task's digest must match its file's entry.
    expected: dict[Path, tuple[str, int]] | None

    def digests(self, files: list[Path], digest: Digest) -> dict[Path, tuple[str, int, FileIdentity]]:
        """``digest`` of ``files``, computed by the client (they become ``expected``)."""

    def check(self, files: list[Path]) -> None:
        """Raise BadInput naming the files the workers cannot read."""

    def started(self, files: list[Path]) -> None:
        """The files of one job are about to be read (progress)."""

    def finished(self, path: Path, nbytes: int) -> None:
        """One rank file is read (progress)."""

    def failure(self, exc: BaseException) -> BaseException | None:
        """The user-facing error for an executor's own failure (a lost worker), or None."""


@dataclass
class LocalPool:
    """A local process pool behind the same interface (no checks: the files are here)."""

    executor: Executor
    progress: Callable[[Path, int, int], None] | None
    transfer: Transfer = field(default_factory=Transfer)
    expected: dict[Path, tuple[str, int]] | None = None

    def digests(self, files: list[Path], digest: Digest) -> dict[Path, tuple[str, int, FileIdentity]]:
        return {path: digest(path) for path in files}

    def check(self, files: list[Path]) -> None:
        pass

    def started(self, files: list[Path]) -> None:
        pass

    def finished(self, path: Path, nbytes: int) -> None:
        if self.progress is not None:
            self.progress(path, nbytes, nbytes)

    def failure(self, exc: BaseException) -> BaseException | None:
        return None


def read_all(read_one: ReadOne, files: list[Path], options: ImportOptions) -> list[RankSummary]:
    """``read_one`` over ``files``, each reduced to its summary, in ``files`` order."""
    order = {path: i for i, path in enumerate(files)}
    return sorted(read_each(read_one, files, options), key=lambda s: order.get(s.source, len(order)))


def read_each(read_one: ReadOne, files: list[Path], options: ImportOptions) -> Iterator[RankSummary]:
    """``read_one`` over ``files``, each reduced to its summary, yielded as each is read
    (in the order they finish), so the caller can keep what it needs of a rank and let
    the rest go before the next one arrives."""
    remote: RankExecutor | None = options.rank_executor
    if remote is not None:
        yield from _submit_all(remote, read_one, files, options)
        return
    workers = worker_count(options, files)
    vocabulary: dict[str, str] = {}  # one copy of each name for the whole job
    if workers == 1:
        for path in files:
            yield share_labels(summarize(read_one(path, options)), vocabulary)
        return
    yielded = 0
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for summary in _submit_all(LocalPool(pool, options.progress), read_one, files, options):
                yielded += 1
                yield summary
    except (BrokenProcessPool, OSError):
        if yielded:
            raise  # a pool lost mid-job (the ranks already given cannot be taken back)
        # Workers could not start (an interpreter whose main module cannot be re-imported,
        # no processes left): the same work, here.
        for path in files:
            yield share_labels(summarize(read_one(path, options)), vocabulary)


def _submit_all(
    where: RankExecutor, read_one: ReadOne, files: list[Path], options: ImportOptions
) -> Iterator[RankSummary]:
    where.check(files)
    where.started(files)
    plain = ImportOptions(label=options.label, params=dict(options.params))  # callbacks and executors stay here
    futures: dict[Future[Any], int] = {}
    untrusted = where.expected is not None
    vocabulary: dict[str, str] = {}  # one copy of each name for the whole job, whichever rank sent it
    try:
        for i, path in enumerate(files):
            futures[where.executor.submit(read_rank_summary, read_one, path, plain, untrusted)] = i
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                returned: Returned = future.result()
                path = files[futures.pop(future)]  # a done future keeps its result: let it go with the rank
                if isinstance(returned.summary, _Failure):
                    raise returned.summary.error()
                if where.expected is not None:
                    check_worker_digest(path, returned.digest, where.expected)
                summary = share_labels(returned.summary, vocabulary)
                where.transfer.add(summary, returned)
                where.finished(path, summary.read_bytes)
                del returned, future
                yield summary
            del done
    except BaseException as exc:  # (GeneratorExit too: the caller stopped reading; nothing more is wanted)
        for future in futures:
            future.cancel()
        translated = where.failure(exc)
        if translated is not None and translated is not exc:
            raise translated from None
        raise


def check_worker_digest(path: Path, seen: tuple[str, int] | None, expected: dict[Path, tuple[str, int]]) -> None:
    """A worker's summary describes the bytes it hashed: they must be the bytes the client
    hashed and records, or the import fails (a worker that sees another file at this
    path, or one that is not telling the truth)."""
    mine = expected.get(path)
    if mine is None:
        return  # not a file the client records (read_all called on its own)
    if seen is None or seen != mine:
        theirs = "no digest" if seen is None else f"sha256 {seen[0][:16]}…, {seen[1]:,} bytes"
        raise BadInput(
            path,
            f"the Dask worker that read it reports {theirs}, but the file is sha256 {mine[0][:16]}…, "
            f"{mine[1]:,} bytes here: the worker read other bytes or is not to be trusted; nothing was written",
        )
