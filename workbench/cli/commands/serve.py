"""wb serve: the store over HTTP (docs/server.md)."""

from __future__ import annotations

import logging

import click

from workbench.cli.context import store_url_from
from workbench.limits import MAX_UPLOAD_BYTES
from workbench.server.config import DEFAULT_HOST, DEFAULT_PORT, ServerConfig

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@click.command("serve")
@click.option(
    "--host", default=DEFAULT_HOST, show_default=True, help="Address to listen on (loopback unless you say otherwise)."
)
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free one, printed).",
)
@click.option(
    "--max-upload",
    "max_upload",
    default=MAX_UPLOAD_BYTES,
    show_default=True,
    type=click.IntRange(1),
    metavar="BYTES",
    help="The largest capture one upload may carry (413 beyond).",
)
@click.option(
    "--idle-timeout",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0.1),
    metavar="S",
    help="An upload that sends nothing for this long is cut off (408).",
)
@click.option(
    "--min-rate",
    default=16 * 1024,
    show_default=True,
    type=click.IntRange(1),
    metavar="BYTES/S",
    help="After --grace seconds an upload slower than this on average is cut off (408).",
)
@click.option("--grace", default=30.0, show_default=True, type=click.FloatRange(0), metavar="S", help="See --min-rate.")
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    metavar="N",
    help="Connections held at once (default: what the open-file limit allows, raised to its hard limit).",
)
@click.option(
    "--max-per-client",
    default=64,
    show_default=True,
    type=click.IntRange(1),
    metavar="N",
    help="Connections held at once from one client address; more get 503.",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(0.1),
    metavar="S",
    help="A connection that sends no whole request head for this long is closed.",
)
@click.pass_context
def command(
    ctx: click.Context,
    host: str,
    port: int,
    max_upload: int,
    idle_timeout: float,
    min_rate: int,
    grace: float,
    max_connections: int | None,
    max_per_client: int,
    header_timeout: float,
) -> None:
    """Serve the store over HTTP for GPU nodes, CI jobs and colleagues (docs/server.md).

    The store is the one wb would use (--store, WB_STORE). Every endpoint but /healthz
    needs a token ('wb token add NAME --role read|upload|admin'). One log line per
    request on stderr. TLS: put a reverse proxy in front (docs/server.md).
    """
    import uvicorn  # the ASGI server and Starlette: only to serve, not for 'wb serve --help'

    from workbench.server.app import create_app  # the store's token table (SQLAlchemy): not for --help
    from workbench.server.guard import (  # uvicorn's protocol: not for --help
        ACCEPT_BURST,
        ConnectionGuard,
        default_max_connections,
    )

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    config = ServerConfig(
        store_url=store_url_from(ctx),
        max_upload_bytes=max_upload,
        idle_timeout_s=idle_timeout,
        min_rate=min_rate,
        grace_s=grace,
        max_connections=default_max_connections(max_connections),
        max_per_client=max_per_client,
        header_timeout_s=header_timeout,
    )
    app = create_app(config)
    assert config.max_connections is not None
    guard = ConnectionGuard(
        max_connections=config.max_connections,
        max_per_client=config.max_per_client,
        header_timeout_s=config.header_timeout_s,
    )
    if host not in LOOPBACK:
        click.echo(f"wb serve: listening on {host}, not loopback: put TLS in front of it (docs/server.md)", err=True)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            access_log=False,
            log_level="warning",
            http=guard.protocol(),
            backlog=ACCEPT_BURST,
            limit_concurrency=config.max_connections + 1,  # the guard refuses first; uvicorn's 503 is the net
            timeout_keep_alive=int(config.keep_alive_s),
            timeout_graceful_shutdown=10,
            server_header=False,
        )
    )
    _announce(server, host)
    server.run()


def _announce(server, host: str) -> None:
    """Print the address once the socket is bound (with --port 0, the port chosen)."""
    started = server.startup

    async def startup(*args, **kwargs):
        await started(*args, **kwargs)
        for s in server.servers:
            for sock in s.sockets:
                addr = sock.getsockname()
                click.echo(f"wb serve: listening on http://{_host(addr[0])}:{addr[1]} (store ready)", err=True)

    server.startup = startup


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address
