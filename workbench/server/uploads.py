"""``POST /captures``: one capture per request, streamed to a temporary file, then imported.

The body is the file's bytes (``application/octet-stream``); its name, label and declared
dimensions are query fields (``name``, ``label``, ``dim=NAME=VALUE``...), so the body is
never parsed before it is on disk. A Content-Length over the budget is refused (413)
before a byte is read; a body without one is counted as it comes and refused the moment
it passes the budget. A body that stops coming, or comes slower than the configured
rate, is cut off (408). The file is then imported by ``workbench.ingest`` exactly as
``wb import`` would (detection, the readers' budget, one transaction); a file whose
SHA-256 is stored, uploaded again or concurrently, is "already imported". The temporary
folder is removed whatever happens; only what the import committed stays.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from store.api import Store
from workbench.dims_file import FolderDimensions
from workbench.ingest import import_files, parse_dim_options
from workbench.inputs import ImportOptions
from workbench.server.bodies import bounded
from workbench.server.config import ServerConfig
from workbench.server.errors import ApiError

MAX_NAME_CHARS = 255


def upload_name(name: str | None) -> str:
    """The uploaded file's name: a plain name, never a path (it names the capture and
    the temporary file, nothing more)."""
    if not name:
        raise ApiError(422, "name the uploaded file: POST /captures?name=FILE")
    if (
        len(name) > MAX_NAME_CHARS
        or name in (".", "..")
        or name.startswith(".")
        or any(c in name for c in "/\\\0")
        or not name.isprintable()
    ):
        raise ApiError(422, f"name {name[:80]!r} is not a plain file name (no folders, no leading dot, printable)")
    return name


async def spool(
    chunks: AsyncIterator[bytes],
    target: Path,
    config: ServerConfig,
    declared_length: int | None,
    *,
    limit: int | None = None,
    name: str | None = None,
) -> int:
    """Write the body to ``target`` under the body rules (``bodies.py``); its size. ``limit``:
    another limit than the upload limit (a bundle's), ``name``: the file as the client names it."""
    size = 0
    with open(target, "wb") as out:
        async for chunk in bounded(
            chunks,
            config,
            limit=config.max_upload_bytes if limit is None else limit,
            declared=declared_length,
            what=name or target.name,
            limit_name="the upload limit (wb serve --max-upload; see docs/limits.md)"
            if limit is None
            else "the limit for this file",
        ):
            out.write(chunk)
            size += len(chunk)
    return size


def import_upload(store: Store, path: Path, name: str, label: str | None, dims: Sequence[str]) -> dict[str, object]:
    """Import the spooled file as ``wb import NAME [--label] [--dim]...``; the report's
    files are the uploaded name."""
    declared = FolderDimensions(parse_dim_options(dims))
    report = import_files(store, [path], ImportOptions(label=label), dims=declared, origin="upload").to_json()
    for key in ("imported", "linked", "skipped", "declared"):
        for entry in report[key]:
            entry["file"] = name
    return report


class Spool:
    """A private temporary folder for one upload, removed on exit (its path never leaves the
    server: ``errors.Scrubber``)."""

    def __init__(self, config: ServerConfig) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="wb-upload-", dir=config.spool_dir))

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
