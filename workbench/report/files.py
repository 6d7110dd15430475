"""Which file a report goes to and in which format, decided before any work; and the one
way it is written (a temporary file beside the target, then renamed: never half a file)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Literal

from workbench.errors import UsageError

Format = Literal["html", "md"]
FORMATS: tuple[Format, ...] = ("html", "md")
SUFFIXES: dict[str, Format] = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md"}


def output_format(path: Path, chosen: str | None) -> tuple[Path, Format]:
    """The file to write and its format: by ``chosen`` (``--format``) or the suffix; a name
    with no suffix gets the format's. Checked before any work (a wrong name costs nothing)."""
    by_suffix = SUFFIXES.get(path.suffix.lower())
    if chosen is None and by_suffix is None:
        raise UsageError(f"{path}: name the file .html or .md, or choose with --format html|md")
    if chosen is not None and by_suffix is not None and by_suffix != chosen:
        raise UsageError(f"{path}: a {path.suffix} file cannot hold --format {chosen}")
    fmt: Format = by_suffix or ("html" if chosen == "html" else "md")
    target = path if by_suffix is not None else path.with_name(f"{path.name}.{fmt}")
    if not target.parent.is_dir():
        raise UsageError(f"{target.parent}: no such directory")
    return target, fmt


def write_text(path: Path, text: str) -> Path:
    """``text`` written to ``path`` in one step; the path."""
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent}: no such directory")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any file written
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
