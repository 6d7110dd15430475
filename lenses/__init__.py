"""Lenses: the inference, training and fleet contracts and the analysis that reads their
numbers from runs. Pure: imports ``store.records`` and numpy, never ``workbench`` nor
the database.

``get_lens("inference", extensions=[path, ...])`` gives a lens with a team's extension
files (TOML, see ``lenses.extensions``) applied.

Other packages add lenses through the entry-point group ``wb.lenses`` (a ``Lens``
instance, or a callable returning one). A plug-in that cannot be loaded is reported on
one line (logger ``wb.plugins``) and left out; the built-in lenses never depend on it.
"""

from __future__ import annotations

import importlib
import logging
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from lenses.base import Lens

LENS_NAMES: tuple[str, ...] = ("inference", "training", "fleet")
PLUGIN_GROUP = "wb.lenses"
log = logging.getLogger("wb.plugins")


def lens_names() -> tuple[str, ...]:
    """The built-in lenses, then the plug-ins' (in the order their packages declare them)."""
    return LENS_NAMES + tuple(plugin_lenses())


def builtin_lens(name: str) -> "Lens":
    """The lens ``name`` as shipped, built in or by a plug-in, without extension files."""
    if name in LENS_NAMES:
        return importlib.import_module(f"lenses.{name}").LENS
    lens = plugin_lenses().get(name)
    if lens is None:
        raise KeyError(f"unknown lens {name!r} (one of {', '.join(lens_names())})")
    return lens


@cache
def plugin_lenses() -> dict[str, "Lens"]:
    """The lenses of the ``wb.lenses`` entry points that load and are sound, by name."""
    from importlib.metadata import entry_points  # ~30 ms (email, zipfile): only when a plug-in is asked for

    from lenses.base import Lens  # numpy: not for `import lenses`

    found: dict[str, Lens] = {}
    for entry in entry_points(group=PLUGIN_GROUP):
        dist = getattr(entry, "dist", None)
        what = f"plug-in lens {entry.name!r} ({entry.value}{f', package {dist.name}' if dist is not None else ''})"
        try:
            lens = entry.load()
            if callable(lens) and not isinstance(lens, Lens):
                lens = lens()
            if not isinstance(lens, Lens):
                problem = f"{type(lens).__name__} is not a lenses.base.Lens"
            elif lens.name in LENS_NAMES or lens.name in found:
                problem = f"the lens name {lens.name!r} is taken"
            else:
                problem = None
        except Exception as exc:  # noqa: BLE001 - a plug-in's failure, whatever it is, is reported, never raised
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            log.warning("wb: %s not loaded: %s", what, problem)
            continue
        found[lens.name] = lens
    return found


def get_lens(name: str, extensions: Iterable[str | Path] = ()) -> "Lens":
    """The lens ``name`` with the extension files that target it applied, in order.

    Files for other lenses are ignored, so one list can serve every lens.
    """
    from lenses.extensions import load_extension  # lenses.base: numpy

    lens = builtin_lens(name)
    for path in extensions:
        ext = load_extension(path)
        if ext.lens == name:
            lens = lens.extended(guardrails=ext.guardrails, metrics=ext.metrics, source=ext.path)
    return lens


__all__ = ["LENS_NAMES", "builtin_lens", "get_lens", "lens_names", "plugin_lenses"]
