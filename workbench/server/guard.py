"""Connections are bounded before any request is parsed: how many the server holds, how
many one client address holds, and how long a connection may hold a slot without finishing
a request's headers.

uvicorn accepts every connection and waits for its request as long as the client likes, so
a thousand connections that send nothing use up the process's open files (systemd's default
``LimitNOFILE`` is 1,024) and every other client is locked out. The guard is uvicorn's own
HTTP/1.1 protocol (h11) with three checks added where a connection starts and ends:

- over ``max_connections`` in all, or ``max_per_client`` from one address, a new connection
  gets a 503 line and is closed at once (its file descriptor is back within the same tick);
- a connection that has not sent a whole request head within ``header_timeout_s`` of
  opening (or of its previous answer) is closed; uvicorn's keep-alive timeout closes idle
  connections between requests, and the body rules (``bodies.py``) bound what follows the
  head;
- ``serve`` raises the soft open-file limit to the hard one and sizes ``max_connections``
  below it, less a burst of accepted connections (the listen backlog, ``ACCEPT_BURST``), so the
  cap is reached before the process runs out of descriptors.
"""

from __future__ import annotations

import asyncio
import resource
from collections import Counter
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

# Descriptors kept for what is not a client connection: the store, spooled uploads, logs.
RESERVED_FDS = 64
# Connections accepted in one go before any is looked at (the listen backlog, ``uvicorn --backlog``):
# a refused one holds its descriptor until the loop closes it, so the cap leaves room for a burst.
ACCEPT_BURST = 64
_BUSY_BODY = b'{"error": {"status": 503, "message": "too many connections; try again in a moment"}}\n'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


def open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one (where it is lower); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def default_max_connections(requested: int | None = None) -> int:
    """The connection cap: what was asked, never more than the open files allow."""
    room = max(16, open_file_limit() - RESERVED_FDS - ACCEPT_BURST)
    return room if requested is None else min(requested, room)


class ConnectionGuard:
    """The counts the guard keeps (one per server; the event loop's thread only)."""

    def __init__(self, *, max_connections: int, max_per_client: int, header_timeout_s: float) -> None:
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self.header_timeout_s = header_timeout_s
        self.open = 0
        self.per_client: Counter[str] = Counter()
        self.refused = 0

    def admit(self, client: str) -> bool:
        if self.open >= self.max_connections or self.per_client[client] >= self.max_per_client:
            self.refused += 1
            return False
        self.open += 1
        self.per_client[client] += 1
        return True

    def release(self, client: str) -> None:
        self.open -= 1
        self.per_client[client] -= 1
        if self.per_client[client] <= 0:
            del self.per_client[client]

    def protocol(self) -> type[H11Protocol]:
        """uvicorn's h11 protocol with this guard's checks (``uvicorn.Config(http=...)``)."""
        guard = self

        class GuardedH11Protocol(H11Protocol):
            _wb_client: str | None = None
            _wb_head_timer: asyncio.TimerHandle | None = None

            def connection_made(self, transport: Any) -> None:
                super().connection_made(transport)
                client = (self.client or ("-", 0))[0]
                if not guard.admit(client):
                    transport.write(BUSY)
                    transport.close()
                    return
                self._wb_client = client
                self._wb_wait_for_head()

            def connection_lost(self, exc: Exception | None) -> None:
                self._wb_stop_waiting()
                if self._wb_client is not None:
                    guard.release(self._wb_client)
                    self._wb_client = None
                super().connection_lost(exc)

            def handle_events(self) -> None:
                before = self.cycle
                super().handle_events()
                if self.cycle is not before:  # a request head arrived: the body rules take over
                    self._wb_stop_waiting()

            def on_response_complete(self) -> None:
                super().on_response_complete()
                if not self.transport.is_closing():
                    self._wb_wait_for_head()  # the next request on this connection has the same time

            def _wb_wait_for_head(self) -> None:
                self._wb_stop_waiting()
                self._wb_head_timer = self.loop.call_later(guard.header_timeout_s, self._wb_no_head)

            def _wb_stop_waiting(self) -> None:
                if self._wb_head_timer is not None:
                    self._wb_head_timer.cancel()
                    self._wb_head_timer = None

            def _wb_no_head(self) -> None:
                self._wb_head_timer = None
                in_flight = self.cycle is not None and not self.cycle.response_complete
                if not in_flight and not self.transport.is_closing():
                    self.transport.close()

        return GuardedH11Protocol
