"""The progress of work on a Dask cluster: a bar per phase on stderr (files, bytes, workers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class _Phase:
    task: Any
    files: int = 0
    done: int = 0
    workers: int = 0


class ClusterBar:
    """``workbench.training.cluster.ClusterProgress`` drawn with Rich.

    One bar per phase (``files hashed by the client``, ``rank files read``); a second job of the
    same import adds to its phase's totals. A phase on 0 workers runs on the client.
    """

    def __init__(self, console: Any) -> None:
        self.console = console
        self.bar: Any = None
        self.phases: dict[str, _Phase] = {}

    def start(self, what: str, files: int, nbytes: int, workers: int) -> None:
        # Rich's progress (~70 ms) loads once a cluster job starts, not with every import.
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        if self.bar is None:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
        phase = self.phases.get(what)
        if phase is None:
            phase = self.phases[what] = _Phase(self.bar.add_task("", total=0))
        phase.files += files
        phase.workers = workers
        total = self.bar.tasks[phase.task].total or 0
        self.bar.update(phase.task, total=total + nbytes, description=self._describe(what, phase))

    def advance(self, what: str, nbytes: int) -> None:
        phase = self.phases[what]
        phase.done += 1
        self.bar.update(phase.task, advance=nbytes, description=self._describe(what, phase))

    @staticmethod
    def _describe(what: str, phase: _Phase) -> str:
        if not phase.workers:
            return f"{what} {phase.done}/{phase.files}"
        return f"{what} {phase.done}/{phase.files} on {phase.workers} worker{'s' if phase.workers != 1 else ''}"

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
