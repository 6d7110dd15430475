"""The progress of a local import on stderr: one bar for all the files given (a job's
1,024 rank files are one bar of files and bytes, not 1,024 bars)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from workbench.textsafe import markup_safe

PROGRESS_MIN_BYTES = 8 << 20  # below this an import is over before a bar is worth drawing


def input_files(paths: tuple[Path, ...]) -> dict[Path, int]:
    """The regular files given or under the folders given, with their sizes (for the bar
    only: what is imported is decided by the import's own listing)."""
    out: dict[Path, int] = {}
    for path in paths:
        if path.is_file():
            out[path] = path.stat().st_size
        elif path.is_dir():
            for root, _dirs, names in os.walk(path):  # symlinked folders are not followed
                for name in names:
                    p = Path(root) / name
                    if p.is_file() and not p.is_symlink():
                        out[p] = p.stat().st_size
    return out


class ImportBar:
    """A context whose value is the import's progress callback ``(path, done, total)``, or
    None when the input is too small to wait for."""

    def __init__(self, console: Any, paths: tuple[Path, ...]) -> None:
        self.console = console
        self.files = input_files(paths)
        self.total = sum(self.files.values())
        self.bar: Any = None
        self.task: Any = None
        self.done_bytes: dict[Path, int] = {}
        self.read = 0  # bytes read over all files
        self.finished = 0  # files read to the end

    def __enter__(self) -> Any:
        if self.total < PROGRESS_MIN_BYTES:
            return None
        # rich.progress is ~70 modules: loaded only for an input big enough to wait for.
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self.bar.__enter__()
        self.task = self.bar.add_task(self._describe(None), total=self.total)
        return self.update

    def update(self, path: Path, done: int, total: int) -> None:
        before = self.done_bytes.get(path, 0)
        self.done_bytes[path] = done
        self.read += done - before
        if total and done >= total > before:
            self.finished += 1
        self.bar.update(self.task, completed=min(self.read, self.total), description=self._describe(path))

    def _describe(self, path: Path | None) -> str:
        if len(self.files) == 1 and path is not None:
            return markup_safe(path.name)
        return f"files read {self.finished}/{len(self.files)}"

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
