"""Lenses: the inference, training and fleet contracts and the analysis that reads their
numbers from runs. Pure: imports ``store.records`` and numpy, never ``workbench`` nor
the database.

``get_lens("inference", extensions=[path, ...])`` gives a lens with a team's extension
files (TOML, see ``lenses.extensions``) applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from lenses.base import Lens

LENS_NAMES: tuple[str, ...] = ("inference", "training", "fleet")


def builtin_lens(name: str) -> "Lens":
    if name not in LENS_NAMES:
        raise KeyError(f"unknown lens {name!r} (one of {', '.join(LENS_NAMES)})")
    import importlib

    return importlib.import_module(f"lenses.{name}").LENS


def get_lens(name: str, extensions: Iterable[str | Path] = ()) -> "Lens":
    """The lens ``name`` with the extension files that target it applied, in order.

    Files for other lenses are ignored, so one list can serve every lens.
    """
    from lenses.extensions import load_extension

    lens = builtin_lens(name)
    for path in extensions:
        ext = load_extension(path)
        if ext.lens == name:
            lens = lens.extended(guardrails=ext.guardrails, metrics=ext.metrics, source=ext.path)
    return lens


__all__ = ["LENS_NAMES", "builtin_lens", "get_lens"]
