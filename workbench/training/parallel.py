"""Read the rank files of one job in parallel worker processes.

Parsing is CPU-bound Python (the GIL rules out threads), and each rank file is
independent, so a job's files are spread over up to ``jobs`` processes (import
parameter; default: one per CPU, at most one per file, and none for small inputs). Workers are spawned, not forked, so a caller with
threads (the TUI) is safe; each worker holds one rank at a time, so memory stays
bounded by ``jobs`` ranks. The results are our own normalized arrays, pickled only
between our own processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from workbench.errors import BadInput
from workbench.importers.base import ImportOptions

T = TypeVar("T")


# Below this much input (on disk) starting worker processes costs more than it saves.
PARALLEL_MIN_BYTES = 8 << 20


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


def _guarded(read_one: Callable[[Path, ImportOptions], T], path: Path, options: ImportOptions) -> T | _Failure:
    try:
        return read_one(path, options)
    except BadInput as err:
        return _Failure(err.at(path))


def read_all(read_one: Callable[[Path, ImportOptions], T], files: list[Path], options: ImportOptions) -> list[T]:
    """``read_one`` over ``files`` (in order), in worker processes when that pays off."""
    workers = worker_count(options, files)
    if workers == 1:
        return [read_one(path, options) for path in files]
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    plain = ImportOptions(label=options.label, params=dict(options.params))  # progress callbacks stay here
    try:
        return _pooled(read_one, files, options, plain, workers, multiprocessing.get_context("spawn"))
    except (BrokenProcessPool, OSError):
        # Workers could not start (an interpreter whose main module cannot be re-imported,
        # no processes left): the same work, here.
        return [read_one(path, options) for path in files]


def _pooled(read_one: Callable[[Path, ImportOptions], T], files: list[Path], options: ImportOptions, plain: ImportOptions,
            workers: int, context: Any) -> list[T]:
    from concurrent.futures import ProcessPoolExecutor

    results: list[T] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_guarded, read_one, path, plain) for path in files]
        try:
            for path, future in zip(files, futures):
                result = future.result()
                if isinstance(result, _Failure):
                    raise BadInput(result.file, result.detail, where=result.where)
                results.append(result)
                if options.progress is not None:
                    size = path.stat().st_size
                    options.progress(path, size, size)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results
