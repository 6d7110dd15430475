"""Every request body is read by one set of rules: a size limit, checked against
Content-Length before a byte is read and counted as the body comes; a deadline for each
chunk (``idle_timeout_s``: nothing for that long is a stall); and a least average rate once
``grace_s`` has passed (a drip holds a worker as surely as a stall). Uploads spool what
passes to a file (``uploads.py``); the operations' JSON bodies are small and kept in memory
(``read_body``). Breaking a rule is 413 or 408 and the connection is closed (the rest of the
body is never read).

The caller's token is checked before any of this runs (``app.py``): an unauthenticated
client never gets a byte of its body read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping

from workbench.limits import size_text
from workbench.server.config import ServerConfig
from workbench.server.errors import ApiError


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The body's Content-Length (None: chunked); 400 for one that is not a number."""
    length = headers.get("content-length")
    if length is None:
        return None
    if not length.isdigit():
        raise ApiError(400, "Content-Length is not a number")
    return int(length)


async def bounded(
    chunks: AsyncIterator[bytes],
    config: ServerConfig,
    *,
    limit: int,
    declared: int | None,
    what: str,
    limit_name: str,
) -> AsyncIterator[bytes]:
    """The body's chunks under the rules; ``what`` names the body in a refusal, ``limit_name``
    the limit ("the upload limit (wb serve --max-upload)")."""
    name, _, hint = limit_name.partition(" (")
    hint = f" ({hint}" if hint else ""
    if declared is not None and declared > limit:
        raise ApiError(413, f"{what}: {declared:,} bytes is over {name} of {size_text(limit)}{hint}")
    started = time.monotonic()
    size = 0
    iterator = chunks.__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(iterator.__anext__(), timeout=config.idle_timeout_s)
        except StopAsyncIteration:
            break
        except TimeoutError:
            raise ApiError(
                408, f"{what}: no data for {config.idle_timeout_s:g} s after {size:,} bytes; cut off"
            ) from None
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"{what}: more than {name} of {size_text(limit)}{hint}")
        elapsed = time.monotonic() - started
        if elapsed > config.grace_s and size < config.min_rate * elapsed:
            raise ApiError(
                408, f"{what}: {size:,} bytes in {elapsed:.0f} s is slower than {config.min_rate:,} bytes/s; cut off"
            )
        yield chunk
    if declared is not None and size != declared:
        raise ApiError(400, f"{what}: the body ended after {size:,} of {declared:,} bytes")


async def read_body(
    chunks: AsyncIterator[bytes], headers: Mapping[str, str], config: ServerConfig, *, limit: int, what: str
) -> bytes:
    """A small body (an operation's JSON request) in memory, under the rules."""
    body = bytearray()
    async for chunk in bounded(
        chunks, config, limit=limit, declared=declared_length(headers), what=what, limit_name="the request limit"
    ):
        body += chunk
    return bytes(body)
