"""The recorder's second destination: a ``wb serve`` (``server=`` or ``WB_SERVER``, token in
``WB_TOKEN``), written to from the writer thread after the snapshot file is on disk.

Never on the workload's thread, never fatal: an unreachable or refusing server is a
counted fault (``stats()["last_fault"]`` names it) and the local file stays where it was
written, to be pushed later with ``wb push``. A lost connection is tried again a few
times (an upload is idempotent by SHA-256: the server says "already imported" if the
first one got through). httpx loads here, in the writer thread, and only when a server
is configured: importing the recorder stays as light as it was.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

SERVER_ENV = "WB_SERVER"
TOKEN_ENV = "WB_TOKEN"
ATTEMPTS = 3
TIMEOUT_S = 30.0


class UploadRefused(Exception):
    """The server answered with an error (its status and one line)."""


def server_url(configured: str | None) -> str | None:
    return configured or os.environ.get(SERVER_ENV) or None


def upload_snapshot(path: Path, server: str | None, on_fault: Callable[[BaseException, str], None]) -> bool:
    """Upload one snapshot file; True once the server holds it. Faults go to ``on_fault``."""
    url = server_url(server)
    if not url:
        return False
    try:
        import httpx  # the HTTP client: loaded by the writer thread, only when a server is configured

        headers = {"Content-Type": "application/octet-stream", "Content-Length": str(path.stat().st_size)}
        token = os.environ.get(TOKEN_ENV)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in range(ATTEMPTS):
            try:
                answer = httpx.post(
                    f"{url.rstrip('/')}/api/v1/captures",
                    params={"name": path.name},
                    headers=headers,
                    content=_chunks(path),
                    timeout=TIMEOUT_S,
                )
                break
            except httpx.TransportError:
                if attempt == ATTEMPTS - 1:
                    raise
                time.sleep(0.5 * 2**attempt)
        if answer.status_code >= 400:
            try:
                message = answer.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = answer.reason_phrase
            raise UploadRefused(f"{answer.status_code}: {message} (the snapshot stays at {path})")
        return True
    except Exception as exc:  # noqa: BLE001 - the workload must never see it; the file is kept
        on_fault(exc, "server upload")
        return False


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            yield block
