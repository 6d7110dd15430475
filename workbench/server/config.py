"""What a server is started with: the store, the address, and the upload budget."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.limits import MAX_UPLOAD_BYTES

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321
API = "/api/v1"
MAX_REQUEST_BYTES = 1 << 20  # an operation's JSON request (run words, a declaration, a plan): small


@dataclass(frozen=True)
class ServerConfig:
    """``max_upload_bytes``: the largest capture one request may carry (413 beyond it,
    refused from Content-Length before a byte of the body is read). An upload must keep
    coming: ``idle_timeout_s`` without a byte, or less than ``min_rate`` bytes a second on
    average once ``grace_s`` have passed, ends it with 408 (a slow drip holds a worker and
    a temporary file, and is treated as the attack it looks like); every body is read by
    those rules (``bodies.py``), an operation's JSON request within ``max_request_bytes``.
    Connections (``guard.py``): at most ``max_connections`` (None: sized below the open-file
    limit), ``max_per_client`` from one address, and a request head within
    ``header_timeout_s``; an idle keep-alive connection closes after ``keep_alive_s``."""

    store_url: str | None = None
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    idle_timeout_s: float = 30.0
    min_rate: int = 16 * 1024
    grace_s: float = 30.0
    spool_dir: str | None = None  # where uploads are spooled (default: the system's temporary directory)
    max_request_bytes: int = MAX_REQUEST_BYTES
    max_connections: int | None = None
    max_per_client: int = 64
    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
