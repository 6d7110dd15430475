"""The other side of the transport: ``Remote(url, token).call(req)`` asks ``wb serve`` to run the
use case (``POST /api/v1/op/NAME`` with the request's JSON) and reads the answer back into the
same typed answer ``Local`` returns. ``HttpClient`` is the one HTTP client of wb (``wb push``,
``wb --server``, the TUI against a server).

Bounded both ways: an answer is read as a stream, at most ``max_answer_bytes`` (an operation
may allow more: a bundle) and within ``answer_deadline_s`` from its first byte, so a server that
never ends its answer cannot fill this process's memory; a file is sent only through the door
every file wb reads goes through (``workbench.inputs.open_regular``: no FIFO, device or /proc).

A request that cannot reach the server, loses the connection, or finds the server too busy
(503: nothing was done) is tried again a bounded number of times with a growing pause, when
trying again cannot do a thing twice: reads, and uploads (idempotent by SHA-256: a file the
server had stored before the connection dropped is "already imported" the second time). An
error answer is raised as a ``ServedError`` that prints as the failure did on the server.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx
import msgspec

from workbench import __version__
from workbench.errors import EXIT_FAILURE, EXIT_REFUSED, EXIT_USAGE, WbError
from workbench.inputs import open_regular
from workbench.limits import MiB, size_text
from workbench.usecases.core import Request, operation_of
from workbench.usecases.failures import Failure, ServedError

API = "/api/v1"
CHUNK = 1 << 20
RETRIES = 4  # attempts after the first
BACKOFF_S = 0.5  # doubled each time: 0.5 + 1 + 2 + 4 s at most
MAX_ANSWER_BYTES = 64 * MiB  # an operation's answer (a run list, an inspection); a bundle may be larger
MAX_BUNDLE_ANSWER_BYTES = 1024 * MiB
ANSWER_DEADLINE_S = 600.0
A = TypeVar("A")


def _kind_of_status(status: int | None) -> tuple[str, int]:
    """An error answer without wb's description (a proxy's, an older server's): kind and exit code."""
    if status == 404:
        return "not_found", EXIT_USAGE
    if status in (400, 408, 413, 422):
        return "usage", EXIT_USAGE
    if status == 409:
        return "refused", EXIT_REFUSED
    return "error", EXIT_FAILURE


def failure_of(status: int, body: bytes, reason: str) -> Failure:
    """The server's error answer as the failure it described."""
    try:
        error = json.loads(body)["error"]
        message = str(error["message"])
    except (ValueError, KeyError, TypeError):
        kind, code = _kind_of_status(status)
        return Failure(kind, f"server answered {status} {reason}", code)
    kind, code = _kind_of_status(status)
    exit_code = error.get("exit")
    return Failure(
        str(error.get("kind") or kind),
        message,
        exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else code,
        error.get("file") if isinstance(error.get("file"), str) else None,
        error.get("where") if isinstance(error.get("where"), str) else None,
        error.get("details") if isinstance(error.get("details"), dict) else None,
    )


class HttpClient:
    """httpx with wb's rules: bounded answers, bounded retries, wb's errors."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout_s: float = 300.0,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        answer_deadline_s: float = ANSWER_DEADLINE_S,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise WbError(f"server {url!r}: expected http://HOST:PORT or https://...", exit_code=EXIT_USAGE)
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_answer_bytes = max_answer_bytes
        self.answer_deadline_s = answer_deadline_s
        headers = {"User-Agent": f"wb/{__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout_s, connect=10.0))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "HttpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lost(self, exc: Exception) -> ServedError:
        return ServedError(Failure("error", f"server {self.url}: {type(exc).__name__}: {exc or 'connection lost'}", 1))

    def send(
        self,
        method: str,
        path: str,
        *,
        idempotent: bool,
        max_bytes: int | None = None,
        content: Callable[[], Any] | None = None,
        **kwargs: Any,
    ) -> bytes:
        """The answer's body (at most ``max_bytes``), or the server's failure raised."""
        limit = max_bytes or self.max_answer_bytes
        for attempt in range(self.retries + 1):
            try:
                if content is not None:
                    kwargs["content"] = content()
                with self.http.stream(method, path, **kwargs) as response:
                    body = self._read(response, limit)
            except httpx.TransportError as exc:
                # Not sent at all (refused connection) is safe to retry always; a dropped
                # one only when doing it twice changes nothing.
                if not (idempotent or isinstance(exc, httpx.ConnectError)) or attempt == self.retries:
                    raise self._lost(exc) from None
                time.sleep(self.backoff_s * 2**attempt)
                continue
            if response.status_code == 503 and attempt < self.retries:  # too busy: nothing was done
                time.sleep(self.backoff_s * 2**attempt)
                continue
            if response.status_code >= 400:
                raise ServedError(failure_of(response.status_code, body, response.reason_phrase), response.status_code)
            return body
        raise AssertionError("unreachable")

    def _read(self, response: httpx.Response, limit: int) -> bytes:
        """The answer's bytes, refused past ``limit`` or past the deadline (never held whole first)."""
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ServedError(
                Failure(
                    "error",
                    f"server {self.url}: an answer of {int(declared):,} bytes is over the client's "
                    f"limit of {size_text(limit)}",
                    EXIT_FAILURE,
                )
            )
        deadline = time.monotonic() + self.answer_deadline_s
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                raise ServedError(
                    Failure(
                        "error",
                        f"server {self.url}: the answer goes on past the client's limit of "
                        f"{size_text(limit)}; stopped reading",
                        EXIT_FAILURE,
                    )
                )
            if time.monotonic() > deadline:
                raise ServedError(
                    Failure(
                        "error",
                        f"server {self.url}: the answer took longer than {self.answer_deadline_s:g} s; stopped reading",
                        EXIT_FAILURE,
                    )
                )
        return bytes(body)

    def health(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.send("GET", "/healthz", idempotent=True))
        return doc

    def upload(
        self,
        path: Path,
        *,
        label: str | None = None,
        dims: Mapping[str, str] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """``POST /captures`` of one regular file, streamed; the server's import report."""
        params: list[tuple[str, str]] = [("name", path.name)]
        if label:
            params.append(("label", label))
        params += [("dim", f"{k}={v}") for k, v in (dims or {}).items()]
        return self.send_file("/captures", path, params, progress)

    def send_file(
        self,
        route: str,
        path: Path,
        params: list[tuple[str, str]],
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """A regular file as a request's body, streamed (opened again for each attempt); the JSON answer."""
        with open_regular(path) as probe:  # a FIFO, a device or /proc is refused here, before any request
            size = os.fstat(probe.fileno()).st_size
        doc: dict[str, Any] = json.loads(
            self.send(
                "POST",
                f"{API}{route}",
                idempotent=True,
                params=params,
                content=lambda: _chunks(path, progress),
                headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
            )
        )
        return doc


def _chunks(path: Path, progress: Callable[[int], None] | None) -> Iterator[bytes]:
    done = 0
    with open_regular(path) as f:
        while block := f.read(CHUNK):
            done += len(block)
            if progress is not None:
                progress(done)
            yield block


class Remote:
    """Use cases run by a ``wb serve`` on its store (``Workbench``)."""

    def __init__(self, url: str, token: str | None, **client: Any) -> None:
        self.http = HttpClient(url, token, **client)
        self.url = self.http.url

    def call(self, req: Request[A]) -> A:
        op = operation_of(req)
        field = getattr(op.request, "file_field", None)
        if field is not None:  # the file travels as the body, the request beside it
            doc = self.http.send_file(
                f"/op/{op.name}", Path(getattr(req, field)), [("request", msgspec.json.encode(req).decode())]
            )
            answer: A = op.answer.from_json(doc)
            return answer
        body = self.http.send(
            "POST",
            f"{API}/op/{op.name}",
            idempotent=op.idempotent,
            max_bytes=getattr(op.answer, "max_answer_bytes", None),
            content=lambda: msgspec.json.encode(req),
            headers={"Content-Type": "application/json"},
        )
        read: A = op.answer.from_json(json.loads(body))
        return read

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Remote":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
