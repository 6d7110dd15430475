"""The client of ``wb serve`` (httpx): what ``wb push`` and ``wb --server URL ...`` call.

A request that cannot reach the server, or loses the connection, is tried again a bounded
number of times with a growing pause, when trying again cannot do a thing twice: reads,
comparisons that store nothing, and uploads (idempotent by SHA-256: a file the server had
stored before the connection dropped is "already imported" the second time). An error
answer becomes a ``ServerError`` with the server's one line and the exit code ``wb``
would give locally.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx

from workbench import __version__
from workbench.errors import EXIT_FAILURE, EXIT_REFUSED, EXIT_USAGE, WbError
from workbench.server.config import API

CHUNK = 1 << 20
RETRIES = 4  # attempts after the first
BACKOFF_S = 0.5  # doubled each time: 0.5 + 1 + 2 + 4 s at most


class ServerError(WbError):
    """An error answer (or no answer) from the server, as one line and wb's exit code."""

    def __init__(self, message: str, status: int | None = None) -> None:
        code = EXIT_USAGE if status in (400, 404, 408, 413, 422) else EXIT_REFUSED if status == 409 else EXIT_FAILURE
        super().__init__(message, exit_code=code)
        self.status = status


class Client:
    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout_s: float = 300.0,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise WbError(f"server {url!r}: expected http://HOST:PORT or https://...", exit_code=EXIT_USAGE)
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
        headers = {"User-Agent": f"wb/{__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout_s, connect=10.0))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, *, idempotent: bool, **kwargs: Any) -> httpx.Response:
        content: Callable[[], Any] | None = kwargs.pop("content_factory", None)
        for attempt in range(self.retries + 1):
            try:
                if content is not None:
                    kwargs["content"] = content()
                response = self.http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                # Not sent at all (refused connection) is safe to retry always; a dropped
                # one only when doing it twice changes nothing.
                retry = idempotent or isinstance(exc, httpx.ConnectError)
                if not retry or attempt == self.retries:
                    raise ServerError(f"server {self.url}: {type(exc).__name__}: {exc or 'connection lost'}") from None
                time.sleep(self.backoff_s * 2**attempt)
                continue
            if response.status_code >= 400:
                raise ServerError(_message(response), response.status_code)
            return response
        raise AssertionError("unreachable")

    def get_json(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._send("GET", f"{API}{path}", idempotent=True, params=params).json()

    def get_text(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        return self._send("GET", f"{API}{path}", idempotent=True, params=params).text

    def post_json(self, path: str, body: Mapping[str, Any], *, idempotent: bool) -> Any:
        return self._send(
            "POST",
            f"{API}{path}",
            idempotent=idempotent,
            content_factory=lambda: json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        ).json()

    def health(self) -> dict[str, object]:
        return self._send("GET", "/healthz", idempotent=True).json()

    def upload(
        self,
        path: Path,
        *,
        label: str | None = None,
        dims: Mapping[str, str] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, object]:
        """``POST /captures`` of one file, streamed; the server's import report."""
        size = path.stat().st_size
        params: list[tuple[str, str]] = [("name", path.name)]
        if label:
            params.append(("label", label))
        params += [("dim", f"{k}={v}") for k, v in (dims or {}).items()]
        return self._send(
            "POST",
            f"{API}/captures",
            idempotent=True,
            params=params,
            content_factory=lambda: _chunks(path, progress),
            headers={"Content-Type": "application/octet-stream", "Content-Length": str(size)},
        ).json()


def _chunks(path: Path, progress: Callable[[int], None] | None) -> Iterator[bytes]:
    done = 0
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            done += len(block)
            if progress is not None:
                progress(done)
            yield block


def _message(response: httpx.Response) -> str:
    try:
        error = response.json()["error"]
        return str(error["message"])
    except (ValueError, KeyError, TypeError):
        return f"server answered {response.status_code} {response.reason_phrase}"
