"""wb push: upload captures to a wb server, one request per file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NotRequired, TypedDict

import click

from workbench.cli.context import TOKEN_ENV, emit_json, server_url, stderr_console
from workbench.dims_file import FolderDimensions
from workbench.errors import UsageError
from workbench.importers import expand_paths
from workbench.ingest import parse_dim_options
from workbench.inputs import open_regular
from workbench.limits import size_text
from workbench.usecases.remote import HttpClient
from workbench.textsafe import clean, markup_safe

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

PROGRESS_MIN_BYTES = 8 << 20  # as wb import: a bar only for what is worth waiting for


@click.command("push")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--server", "server", envvar="WB_SERVER", metavar="URL", help="The server (default: $WB_SERVER, or wb --server)."
)
@click.option("--token", "token", envvar=TOKEN_ENV, metavar="TOKEN", help="An upload token (default: $WB_TOKEN).")
@click.option("--label", help="Label for the uploaded run(s) instead of the file's own.")
@click.option(
    "--dim",
    "dims",
    multiple=True,
    metavar="NAME=VALUE",
    help="Declare a dimension the files do not carry (repeatable).",
)
@click.option(
    "--dims-file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Dimensions for every run, as in a wb.toml; default: a wb.toml beside each file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the combined import report as JSON.")
@click.pass_context
def command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    server: str | None,
    token: str | None,
    label: str | None,
    dims: tuple[str, ...],
    dims_file: Path | None,
    as_json: bool,
) -> None:
    """Upload capture files or directories to a wb server (one request per file), as 'wb import' would import them.

    Each file is its own transaction on the server, imported as 'wb import FILE' would
    import it there (detected, checked, idempotent by SHA-256: a file already stored is
    "already imported"). A lost connection is retried; the first file refused stops the
    push (the ones before it stay imported). The lines are 'wb import''s.
    """
    url = server or server_url(ctx)
    if not url:
        raise UsageError("name the server: wb push --server URL (or WB_SERVER)")
    declared = FolderDimensions(parse_dim_options(dims), dims_file, roots=paths)
    skipped: list[tuple[Path, str]] = []
    files = expand_paths(paths, skipped)
    err = stderr_console()
    combined: Pushed = {
        "imported": [],
        "linked": [],
        "skipped": [{"file": str(p), "reason": why} for p, why in skipped],
        "runs": [],
        "declared": [],
    }
    for path, why in skipped:
        if not as_json:
            err.print(f"skipped {markup_safe(path)}: {markup_safe(why)}")
    sizes = {path: regular_size(path) for path in files}  # a FIFO, a device or /proc: refused before any request
    with HttpClient(url, token) as client:
        limit = client.health().get("max_upload_bytes")
        total = sum(sizes.values())
        with _Progress(err, total) as progress:
            for path in files:
                size = sizes[path]
                if isinstance(limit, int) and size > limit:
                    raise UsageError(f"{path}: {size:,} bytes is over the server's upload limit of {size_text(limit)}")
                report = client.upload(
                    path, label=label, dims=declared.for_source(path), progress=progress.file(path, size)
                )
                _merge(combined, report, path)
                if not as_json:
                    _print(err, report, path)
    combined["server"] = url
    if as_json:
        emit_json(combined)
    elif not combined["imported"] and not combined["declared"]:
        err.print("nothing new imported")


def regular_size(path: Path) -> int:
    """The size of a file wb may read (``open_regular``: the door every file goes through)."""
    with open_regular(path) as f:
        return os.fstat(f.fileno()).st_size


class Pushed(TypedDict):
    """``wb push --json``: the import reports of every file together (each entry with its file)."""

    imported: list[dict[str, object]]
    linked: list[dict[str, object]]
    skipped: list[dict[str, object]]
    runs: list[object]
    declared: list[dict[str, object]]
    server: NotRequired[str]


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _entries(report: Mapping[str, object], key: str) -> list[Mapping[str, object]]:
    """The report's entries under ``key`` (each a JSON object: the server's import report)."""
    return [e for e in _list(report.get(key)) if isinstance(e, Mapping)]


def _merge(combined: Pushed, report: Mapping[str, object], path: Path) -> None:
    for key in ("imported", "linked", "skipped", "declared"):
        combined[key] += [{**entry, "file": str(path)} for entry in _entries(report, key)]
    combined["runs"] += _list(report.get("runs"))


def _print(err, report: Mapping[str, object], path: Path) -> None:
    """One file's lines, as 'wb import' prints them (stdout: what was imported)."""
    for entry in _entries(report, "skipped"):
        err.print(f"skipped {markup_safe(path)}: {markup_safe(entry['reason'])}")
    for entry in _entries(report, "imported"):
        runs = ", ".join(map(str, _list(entry["runs"]))) if entry["runs"] else "no runs"
        click.echo(f"imported {clean(path)} -> run {runs}")
    for entry in _entries(report, "declared"):
        what = (
            ", ".join(
                f"run {d['run']} {d['name']}={d['value']}"
                for d in _list(entry["declarations"])
                if isinstance(d, Mapping)
            )
            or "nothing new (the runs already say so)"
        )
        click.echo(f"already stored {clean(path)}: declared {clean(what)}")


class _Progress:
    """Bytes sent, on stderr, when the push is big enough to wait for."""

    def __init__(self, console, total: int) -> None:
        self.console, self.total, self.sent = console, total, 0
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> "_Progress":
        if self.total >= PROGRESS_MIN_BYTES:
            # rich.progress is ~70 modules: loaded only for a push big enough to wait for.
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
            self.task = self.bar.add_task("push", total=self.total)
        return self

    def file(self, path: Path, size: int):
        base = self.sent
        self.sent += size

        def update(done: int) -> None:
            if self.bar is not None and self.task is not None:
                self.bar.update(self.task, completed=base + done, description=markup_safe(path.name))

        return update

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, exc, tb)
