"""``wb --server URL runs|show|compare|inspect|bundle export``: the same commands, answered
by ``wb serve``.

The server returns the ``--json`` document the local command would print; ``--json``
prints it as it came, and otherwise it is drawn by the local command's own renderer
(``print_runs``, ``print_run``; ``remote_results`` for comparisons and bundles), so the text is byte-identical to the
local command's on the same store. The
server comes from ``--server`` or ``WB_SERVER``, the token from ``WB_TOKEN``; an explicit
``--store`` wins over ``WB_SERVER`` from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import quote

import click

from workbench.cli.context import emit_json
from workbench.errors import UsageError

TOKEN_ENV = "WB_TOKEN"


def server_url(ctx: click.Context) -> str | None:
    obj = ctx.find_root().obj or {}
    return obj.get("server_url") if not obj.get("store_given") else None


def wanted(ctx: click.Context) -> bool:
    return server_url(ctx) is not None


def client(ctx: click.Context, url: str | None = None, token: str | None = None):
    from workbench.server.client import Client  # httpx: only when a server is named

    url = url or server_url(ctx)
    if not url:
        raise UsageError("name the server: --server URL or WB_SERVER")
    return Client(url, token if token is not None else os.environ.get(TOKEN_ENV))


def runs(ctx: click.Context, lens: str | None, as_json: bool, print_runs: Callable[[list, str | None], None]) -> None:
    """``print_runs``: the local command's renderer."""
    with client(ctx) as c:
        docs = c.get_json("/runs", {"lens": lens} if lens else None)
    if as_json:
        emit_json(docs)
    else:
        print_runs(docs, lens)


def show(ctx: click.Context, run: str, as_json: bool, print_run: Callable[[dict], None]) -> None:
    """``print_run``: the local command's renderer."""
    with client(ctx) as c:
        doc = c.get_json(f"/runs/{segment(run)}")
    if as_json:
        emit_json(doc)
    else:
        print_run(doc)


def segment(ref: str) -> str:
    """A run or investigation reference as one URL path segment."""
    return quote(str(ref), safe="")
