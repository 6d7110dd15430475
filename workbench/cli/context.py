"""What commands share: where the use cases run (the store the user chose, or a server), and
JSON output.

``workbench_from(ctx)`` is what a store command holds: ``Local`` on the store of ``--store``/
``WB_STORE`` (or the default), or ``Remote`` on the server of ``--server``/``WB_SERVER`` (token in
``WB_TOKEN``; an explicit ``--store`` wins over ``WB_SERVER`` from the environment). A command
that reaches for the local store itself (``open_store_from``) while a server is named is refused
in one line: it would otherwise write to a store nobody asked for.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from lenses import LENS_NAMES, lens_names
from store import open_store
from store.errors import StoreError, StoreRefusal
from workbench.cli import json_out
from workbench.vocabulary import jsonable
from workbench.errors import UsageError, WbError
from workbench.usecases.transport import Local

if TYPE_CHECKING:
    from store.api import Store
    from workbench.usecases.transport import Workbench


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


TOKEN_ENV = "WB_TOKEN"


def store_url_from(ctx: click.Context) -> str | None:
    root = ctx.find_root()
    return (root.obj or {}).get("store_url")


def server_url(ctx: click.Context) -> str | None:
    """The server named by ``--server`` or ``WB_SERVER`` (None: a local store, or an explicit ``--store``)."""
    obj = ctx.find_root().obj or {}
    return obj.get("server_url") if not obj.get("store_given") else None


def refuse_with_server(ctx: click.Context) -> None:
    """One line for a command that works on a local store only, when a server is named."""
    url = server_url(ctx)
    if url:
        raise UsageError(
            f"'{ctx.command_path}' works on a local store only, not through the server {url}: leave out --server and "
            "WB_SERVER (or name --store)"
        )


def workbench_from(ctx: click.Context, *, create: bool = True) -> "Workbench":
    """Where this command's use cases run: the server named, else the local store."""
    url = server_url(ctx)
    if url:
        from workbench.usecases.remote import Remote  # httpx: only when a server is named

        return Remote(url, os.environ.get(TOKEN_ENV))
    return Local(open_store_from(ctx, create=create))


def open_store_from(ctx: click.Context, *, create: bool = True) -> "Store":
    """The store named by ``--store``/``WB_STORE`` (or the default), as a WbError on failure;
    refused while a server is named (:func:`refuse_with_server`)."""
    refuse_with_server(ctx)
    try:
        return open_store(store_url_from(ctx), create=create)
    except StoreRefusal as exc:
        raise UsageError(str(exc)) from None
    except StoreError as exc:
        raise WbError(str(exc)) from None


def emit_json(document: Any) -> None:
    """Write exactly one strict JSON document to stdout: nan and ±inf are null with the
    reason beside them (vocabulary.jsonable, the one encoder), never NaN/Infinity."""
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
