"""What commands share: opening the store the user chose, and JSON output."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from store.api import Store


def store_url_from(ctx: click.Context) -> str | None:
    root = ctx.find_root()
    return (root.obj or {}).get("store_url")


def open_store_from(ctx: click.Context, *, create: bool = True) -> "Store":
    """The store named by ``--store``/``WB_STORE`` (or the default), as a WbError on failure."""
    from store import open_store
    from store.errors import StoreError
    from workbench.errors import WbError

    try:
        return open_store(store_url_from(ctx), create=create)
    except StoreError as exc:
        raise WbError(str(exc)) from None


def emit_json(document: Any) -> None:
    """Write exactly one JSON document to stdout (no NaN: unknown is null)."""
    sys.stdout.write(json.dumps(document, indent=2, allow_nan=False, default=_default) + "\n")
    sys.stdout.flush()


def _default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def stdout_console():
    from rich.console import Console

    return Console(highlight=False)
