"""``wb.toml``: the dimensions a folder's captures share, written once by the team.

A ``wb.toml`` beside the imported files declares dimensions for every run imported
from that folder, and one in a folder above them, up to the folder named on the command
line, applies too (``wb import job/`` reads ``job/wb.toml`` for ``job/results/*.json``;
the nearer file wins a name both give). ``wb import --dims-file FILE`` names one
explicitly. ``--dim`` on the command line wins over the files. Values are kept as text,
exactly as ``--dim NAME=VALUE`` would give them; an empty value declares nothing and is
refused::

    [dimensions]
    model = "llama-3-8b"
    objective = "pretrain, next-token loss"
    topology = "1 node x 8 GPU, FSDP"
    effective_batch = "512 samples"

It may also say how to read the folder's files where a format cannot say it itself
(``IMPORT_TABLES``): ``[sacct] fields`` is ``--sacct-fields`` for headerless ``sacct``
output, and a ``[map]`` table maps the files no importer takes onto a lens, as
``--map`` does (``workbench.formats.record_map``). The command line wins over it, and the
nearer file wins as for dimensions::

    [sacct]
    fields = "JobID,State,Submit,Eligible,Start,End,AllocTRES"   # or a list of names
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import BadInput, UsageError
from workbench.inputs import read_regular

DIMS_FILE_NAME = "wb.toml"
MAX_BYTES = 1 << 20


def _sacct_fields(value: Any, path: Path) -> str:
    from workbench.importers.sacct import check_fields  # the importer's own rule for the list

    return ",".join(check_fields(value, path, "fields", where="[sacct]"))


# Tables beside [dimensions]: table -> key -> (the import parameter it gives, its check).
IMPORT_TABLES: dict[str, dict[str, tuple[str, Callable[[Any, Path], Any]]]] = {
    "sacct": {"fields": ("sacct_fields", _sacct_fields)},
}


@dataclass
class FolderFile:
    """What one ``wb.toml`` says: dimensions, and import parameters (``sacct_fields`` ...)."""

    dimensions: dict[str, str] = field(default_factory=dict)
    params: dict[str, object] = field(default_factory=dict)


def load_folder_file(path: Path) -> FolderFile:
    """``path``'s ``[dimensions]`` and import tables (``IMPORT_TABLES``); anything else is refused."""
    data = read_regular(path, MAX_BYTES, "a dimensions file (a few lines)")  # no FIFO, device or /proc file
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(path, f"is not valid TOML ({exc})") from None
    known = ["dimensions", *IMPORT_TABLES, "map"]
    extra = sorted(set(doc) - set(known))
    if extra:
        raise BadInput(
            path,
            f"unknown table or key {extra[0]!r} (a {DIMS_FILE_NAME} holds only {', '.join(f'[{t}]' for t in known)})",
        )
    table = doc.get("dimensions", {})
    if not isinstance(table, dict):
        raise BadInput(path, "[dimensions] must be a table of NAME = VALUE")
    out: dict[str, str] = {}
    for name, value in table.items():
        if isinstance(value, (dict, list)) or not str(name).strip():
            raise BadInput(path, f"dimension {name!r} must be a single value (text or number)", where="[dimensions]")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if not text.strip():
            raise BadInput(
                path,
                f"dimension {str(name).strip()!r} is empty: an empty value declares nothing (leave the line out)",
                where="[dimensions]",
            )
        out[str(name).strip()] = text
    return FolderFile(out, _import_params(doc, path))


def _import_params(doc: dict[str, object], path: Path) -> dict[str, object]:
    params: dict[str, object] = {}
    if "map" in doc:  # a declarative map for the folder's files no importer takes: checked now, read by `mapped`
        from workbench.formats.record_map import parse_map  # the map's own rules

        parse_map(doc["map"], path)
        params["map"] = str(path)
    for name, keys in IMPORT_TABLES.items():
        if name not in doc:
            continue
        table = doc[name]
        if not isinstance(table, dict):
            raise BadInput(path, f"[{name}] must be a table of KEY = VALUE ({', '.join(keys)})")
        unknown = sorted(set(table) - set(keys))
        if unknown:
            raise BadInput(path, f"unknown key {unknown[0]!r} (one of {', '.join(keys)})", where=f"[{name}]")
        for key, value in table.items():
            param, check = keys[key]
            params[param] = check(value, path)
    return params


def refuse_empty(values: Mapping[str, str], how: str) -> None:
    """An empty declared value would make two unknowns look the same; refuse it (usage error)."""
    for name, value in values.items():
        if not str(value).strip():
            raise UsageError(
                f"{how} {name}=: an empty value declares nothing (to take a declaration back: wb declare RUN --unset "
                f"{name})"
            )


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _within(link: Path, root: Path) -> bool:
    try:
        return link.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of links
        return False


class FolderDimensions:
    """The declared dimensions for each imported file: its folder's ``wb.toml`` (or the
    one ``--dims-file``), then ``--dim`` over it. Each file is read once."""

    def __init__(
        self, cli: dict[str, str] | None = None, dims_file: Path | None = None, roots: Iterable[Path] = ()
    ) -> None:
        self.cli = dict(cli or {})
        refuse_empty(self.cli, "--dim")
        explicit = load_folder_file(dims_file) if dims_file is not None else None
        self.explicit = explicit.dimensions if explicit is not None else None
        self.explicit_params = explicit.params if explicit is not None else {}
        self.explicit_path = dims_file
        # The folders named on the command line: a wb.toml is looked for from a file's own
        # folder up to the one of these that holds it, never above (no stray file in $HOME).
        self.roots = [_absolute(r) for r in roots if Path(r).is_dir()]
        self.files: dict[Path, FolderFile] = {}

    def _folders(self, source: Path) -> list[Path]:
        """The file's folder, then each folder above it up to its import root (nearest first)."""
        here = _absolute(source).parent
        root = max((r for r in self.roots if here.is_relative_to(r)), key=lambda r: len(r.parts), default=here)
        folders = [here]
        while folders[-1] != root and folders[-1].parent != folders[-1]:
            folders.append(folders[-1].parent)
        return folders

    def _read(self, candidate: Path) -> dict[str, str]:
        return self._file(candidate).dimensions

    def _file(self, candidate: Path) -> FolderFile:
        if candidate not in self.files:
            if candidate.is_symlink() and not _within(candidate, self._root_of(candidate)):
                # As a scan passes over a symlink out of the folder: a wb.toml is read from
                # the imported folder, never from wherever a link points (/proc/kmsg).
                raise BadInput(
                    candidate, f"is a symlink out of the imported folder (to {os.readlink(candidate)}); not followed"
                )
            self.files[candidate] = load_folder_file(candidate) if candidate.is_file() else FolderFile()
        return self.files[candidate]

    def _root_of(self, candidate: Path) -> Path:
        here = candidate.parent
        return max((r for r in self.roots if here.is_relative_to(r)), key=lambda r: len(r.parts), default=here)

    def for_source(self, source: Path | None) -> dict[str, str]:
        if self.explicit is not None:
            return {**self.explicit, **self.cli}
        if source is None:
            return dict(self.cli)
        merged: dict[str, str] = {}
        for folder in reversed(self._folders(source)):  # the nearer file wins
            merged.update(self._read(folder / DIMS_FILE_NAME))
        return {**merged, **self.cli}

    def params_for(self, source: Path | None) -> dict[str, object]:
        """Import parameters the folder's ``wb.toml`` (or ``--dims-file``) gives for ``source``
        (``sacct_fields`` ...), the nearer file winning; the command line wins over them (``ingest``)."""
        if self.explicit is not None:
            return dict(self.explicit_params)
        if source is None:
            return {}
        merged: dict[str, object] = {}
        for folder in reversed(self._folders(source)):
            merged.update(self._file(folder / DIMS_FILE_NAME).params)
        return merged

    def files_for(self, source: Path | None) -> list[Path]:
        """The dimension files that declare for ``source`` (for messages), nearest first."""
        if self.explicit is not None or source is None:
            return []
        candidates = [folder / DIMS_FILE_NAME for folder in self._folders(source)]
        return [c for c in candidates if self._read(c)]

    def origin(self, source: Path | None, name: str) -> str:
        """Where the declared ``name`` for ``source`` came from, for messages and history:
        ``--dim``, ``--dims-file FILE`` or the ``wb.toml`` that gave it."""
        if name in self.cli:
            return "--dim"
        if self.explicit is not None:
            return f"--dims-file {self.explicit_path}"
        return next((str(f) for f in self.files_for(source) if name in self._read(f)), "--dim")
