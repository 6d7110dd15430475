"""``wb.toml``: the dimensions a folder's captures share, written once by the team.

A ``wb.toml`` beside the imported files (in the file's own directory) declares
dimensions for every run imported from that folder; ``wb import --dims-file FILE``
names one explicitly. ``--dim`` on the command line wins over the file. Values are
kept as text, exactly as ``--dim NAME=VALUE`` would give them::

    [dimensions]
    model = "llama-3-8b"
    objective = "pretrain, next-token loss"
    topology = "1 node x 8 GPU, FSDP"
    effective_batch = "512 samples"
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import BadInput

DIMS_FILE_NAME = "wb.toml"
MAX_BYTES = 1 << 20


def load_dims_file(path: Path) -> dict[str, str]:
    """The ``[dimensions]`` table of ``path`` as NAME -> text; anything else is refused."""
    import tomllib

    try:
        if path.stat().st_size > MAX_BYTES:
            raise BadInput(path, f"is larger than {MAX_BYTES >> 10} KiB; a dimensions file is a few lines")
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise BadInput(path, "is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(path, f"is not valid TOML ({exc})") from None
    extra = sorted(set(doc) - {"dimensions"})
    if extra:
        raise BadInput(path, f"unknown table or key {extra[0]!r} (a {DIMS_FILE_NAME} holds only [dimensions])")
    table = doc.get("dimensions", {})
    if not isinstance(table, dict):
        raise BadInput(path, "[dimensions] must be a table of NAME = VALUE")
    out: dict[str, str] = {}
    for name, value in table.items():
        if isinstance(value, (dict, list)) or not str(name).strip():
            raise BadInput(path, f"dimension {name!r} must be a single value (text or number)", where="[dimensions]")
        out[str(name).strip()] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


class FolderDimensions:
    """The declared dimensions for each imported file: its folder's ``wb.toml`` (or the
    one ``--dims-file``), then ``--dim`` over it. Each file is read once."""

    def __init__(self, cli: dict[str, str] | None = None, dims_file: Path | None = None) -> None:
        self.cli = dict(cli or {})
        self.explicit = load_dims_file(dims_file) if dims_file is not None else None
        self.files: dict[Path, dict[str, str]] = {}

    def for_source(self, source: Path | None) -> dict[str, str]:
        if self.explicit is not None:
            return {**self.explicit, **self.cli}
        if source is None:
            return dict(self.cli)
        candidate = source.parent / DIMS_FILE_NAME
        if candidate not in self.files:
            self.files[candidate] = load_dims_file(candidate) if candidate.is_file() else {}
        return {**self.files[candidate], **self.cli}
