"""What a server is started with: the store, the address, and the upload budget."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.limits import MAX_UPLOAD_BYTES

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8321
API = "/api/v1"


@dataclass(frozen=True)
class ServerConfig:
    """``max_upload_bytes``: the largest capture one request may carry (413 beyond it,
    refused from Content-Length before a byte of the body is read). An upload must keep
    coming: ``idle_timeout_s`` without a byte, or less than ``min_rate`` bytes a second on
    average once ``grace_s`` have passed, ends it with 408 (a slow drip holds a worker and
    a temporary file, and is treated as the attack it looks like)."""

    store_url: str | None = None
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    idle_timeout_s: float = 30.0
    min_rate: int = 16 * 1024
    grace_s: float = 30.0
    spool_dir: str | None = None  # where uploads are spooled (default: the system's temporary directory)
