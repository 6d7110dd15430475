"""The progress of rank files read on a Dask cluster: one bar on stderr (ranks, bytes, workers)."""

from __future__ import annotations

from typing import Any


class ClusterBar:
    """``workbench.training.cluster.ClusterProgress`` drawn with Rich; a job adds to the totals."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.bar: Any = None
        self.task: Any = None
        self.ranks = 0
        self.done = 0
        self.workers = 0

    def start(self, ranks: int, nbytes: int, workers: int) -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self.ranks += ranks
        if self.bar is None:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                                console=self.console, transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=0)
        task = self.bar.tasks[0]
        self.workers = workers
        self.bar.update(self.task, total=(task.total or 0) + nbytes, description=self._describe(workers))

    def advance(self, nbytes: int) -> None:
        self.done += 1
        self.bar.update(self.task, advance=nbytes, description=self._describe(self.workers))

    def _describe(self, workers: int) -> str:
        return f"rank files {self.done}/{self.ranks} on {workers} worker{'s' if workers != 1 else ''}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
