"""What commands share: opening the store the user chose, and JSON output."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from lenses import LENS_NAMES, lens_names
from store import open_store
from store.errors import StoreError, StoreRefusal
from workbench.cli import json_out
from workbench.compare.fmt import jsonable
from workbench.errors import UsageError, WbError

if TYPE_CHECKING:
    from store.api import Store


class LensName(click.ParamType):
    """A lens name: a built-in one or a plug-in's (``wb.lenses``). Checked when the
    command runs, so ``--help`` does not load the plug-ins' entry points."""

    name = "lens"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(LENS_NAMES) + "|PLUG-IN]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        names = lens_names()
        if value not in names:
            self.fail(f"{value!r} is not a lens (one of {', '.join(names)})", param, ctx)
        return value


LENS = LensName()


def store_url_from(ctx: click.Context) -> str | None:
    root = ctx.find_root()
    return (root.obj or {}).get("store_url")


def open_store_from(ctx: click.Context, *, create: bool = True) -> "Store":
    """The store named by ``--store``/``WB_STORE`` (or the default), as a WbError on failure."""
    try:
        return open_store(store_url_from(ctx), create=create)
    except StoreRefusal as exc:
        raise UsageError(str(exc)) from None
    except StoreError as exc:
        raise WbError(str(exc)) from None


def emit_json(document: Any) -> None:
    """Write exactly one strict JSON document to stdout: nan and ±inf are null with the
    reason beside them (compare/fmt.jsonable, the one encoder), never NaN/Infinity."""
    sys.stdout.write(json.dumps(jsonable(document), indent=2, allow_nan=False, default=_default) + "\n")
    sys.stdout.flush()
    json_out.mark_written()


def _default(value: Any) -> Any:
    # numpy scalars and arrays, known by their module: importing numpy to test them
    # would cost ~200 ms on every --json output.
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def stderr_console():
    from rich.console import Console  # Rich (~40 ms): only to draw, never for --json

    return Console(stderr=True, highlight=False)


def stdout_console():
    from rich.console import Console  # Rich (~40 ms): only to draw, never for --json

    return Console(highlight=False)
