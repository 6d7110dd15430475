"""The Starlette application: one route per use case (``POST /api/v1/op/NAME``), the capture
upload, the API's description and a health check; JSON errors; one log line a request.

Every route checks the caller's token and role from the headers first, before a byte of the
body is read; then the body is read by the body rules (``bodies.py``: a size limit, a stall and
a drip cut off), decoded strictly into the use case's request type, and the use case runs in
Starlette's thread pool (the store's reads and writes block). The store is opened once, at start
(and created, so that tokens added after the start work at once), and shared: every read opens
its own connection, every write is one transaction.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from store import open_store
from store.api import Store
from store.errors import StoreError
from store.tokens import Caller
from workbench import __version__
from workbench.errors import WbError
from workbench.server.auth import caller_of, require
from workbench.server.bodies import declared_length, read_body
from workbench.server.config import API, ServerConfig
from workbench.server.errors import ApiError, ErrorAnswer, Scrubber, error_body, failure_answer
from workbench.server.openapi import document as openapi_document
from workbench.server.uploads import Spool, import_upload, spool, upload_name
from workbench.textsafe import clean
from workbench.usecases.catalog import operations
from workbench.usecases.core import Context, Operation, Request as UseCaseRequest, decode_request, run

log = logging.getLogger("wb.server")
Endpoint = Callable[[Request], Awaitable[Response]]


def _json(doc: Any, status: int = 200) -> Response:
    # allow_nan=False: unknown is null, as in every --json document.
    return Response(
        json.dumps(doc, allow_nan=False, ensure_ascii=False) + "\n", status_code=status, media_type="application/json"
    )


class WbApp:
    """The routes over one store; ``asgi`` is what uvicorn serves."""

    def __init__(self, config: ServerConfig, store: Store | None = None) -> None:
        self.config = config
        self.store = store or open_store(config.store_url)
        if not self.store.read_only and not self.store.in_memory:
            self.store.ensure_exists()  # a store made now: its tokens are seen as soon as they are added
        self.scrubber = Scrubber(self.store, config)
        # wb's errors are answers (ExceptionMiddleware: no traceback); anything else is a 500, logged.
        known: dict[Any, Any] = {
            kind: self.on_error for kind in (ApiError, ErrorAnswer, WbError, StoreError, HTTPException)
        }
        self.asgi = _RequestLog(Starlette(routes=self.routes(), exception_handlers={**known, Exception: self.on_error}))

    def routes(self) -> list[Route]:
        return [
            Route("/healthz", self.healthz, methods=["GET"]),
            Route(f"{API}/openapi.json", self.openapi, methods=["GET"]),
            Route(f"{API}/captures", self.upload, methods=["POST"]),
            *(Route(f"{API}/op/{op.name}", self.endpoint(op), methods=["POST"]) for op in operations()),
        ]

    def caller(self, request: Request, role: str, what: str) -> Caller:
        caller = caller_of(self.store, request.headers)
        request.scope["wb.caller"] = caller.name
        require(caller, role, what)
        return caller

    # -- endpoints ----------------------------------------------------------------

    async def healthz(self, request: Request) -> Response:
        return _json(
            {"status": "ok", "version": __version__, "api": API, "max_upload_bytes": self.config.max_upload_bytes}
        )

    async def openapi(self, request: Request) -> Response:
        await run_in_threadpool(self.caller, request, "read", "the API description")
        return _json(openapi_document())

    def endpoint(self, op: Operation) -> Endpoint:
        """The route of one use case: the token first, then the body, then the use case."""

        async def serve(request: Request) -> Response:
            caller = await run_in_threadpool(self.caller, request, op.role, f"'{op.name}'")
            if getattr(op.request, "file_field", None) is not None:
                return await self.with_file(request, op, caller)
            body = await read_body(
                request.stream(), request.headers, self.config, limit=self.config.max_request_bytes, what="request"
            )
            req = decode_request(op, body)
            answer = await run_in_threadpool(run, Context(self.store, token=caller.name), req)
            return _json(answer.to_json())

        serve.__name__ = op.name
        return serve

    async def with_file(self, request: Request, op: Operation, caller: Caller) -> Response:
        """A use case that reads a file (a bundle): the body is the file, spooled under the body
        rules; the request is the ``request`` query field, naming the file as the client knows it."""
        field = op.request.file_field  # type: ignore[attr-defined]
        req = decode_request(op, (request.query_params.get("request") or "{}").encode())
        given = str(getattr(req, field))
        with Spool(self.config) as folder:
            target = folder.dir / "body"
            limit = getattr(op.request, "max_file_bytes", self.config.max_upload_bytes)
            await spool(
                request.stream(), target, self.config, declared_length(request.headers), limit=limit, name=given
            )
            local: UseCaseRequest[Any] = msgspec.structs.replace(req, **{field: str(target)})
            try:
                answer = await run_in_threadpool(run, Context(self.store, token=caller.name), local)
            except Exception as exc:  # wb's own errors name the file as the client gave it
                failure = failure_answer(exc, self.scrubber.with_file(str(target), given))
                if failure is None:
                    raise
                raise failure from None
        return _json(answer.to_json())

    async def upload(self, request: Request) -> Response:
        await run_in_threadpool(self.caller, request, "upload", "uploading a capture")
        name = upload_name(request.query_params.get("name"))
        with Spool(self.config) as folder:
            target = folder.dir / name
            try:
                await spool(request.stream(), target, self.config, declared_length(request.headers))
            except ClientDisconnect:
                raise ApiError(
                    400, f"{name}: the client went away before the end of the body; nothing imported"
                ) from None
            try:
                report = await run_in_threadpool(
                    import_upload,
                    self.store,
                    target,
                    name,
                    request.query_params.get("label"),
                    request.query_params.getlist("dim"),
                )
            except Exception as exc:  # wb's own errors become their status; the rest is 500
                failure = failure_answer(exc, self.scrubber.with_file(f"{folder.dir}/", ""))
                if failure is None:
                    raise
                raise failure from None
        return _json(report, 201 if report["imported"] else 200)

    # -- errors -------------------------------------------------------------------

    async def on_error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):  # Starlette's own: unknown route, wrong method
            return JSONResponse(error_body(exc.status_code, str(exc.detail)), status_code=exc.status_code)
        if isinstance(exc, ClientDisconnect):
            exc = ApiError(400, "the client went away before the end of the body")
        answer = failure_answer(exc, self.scrubber)
        if answer is None:
            log.error(
                "internal error on %s %s: %s",
                request.method,
                clean(request.url.path),
                "".join(traceback.format_exception(exc)).rstrip(),
            )
            return JSONResponse(
                error_body(500, f"internal error ({type(exc).__name__}); see the server's log"), status_code=500
            )
        if answer.logged is not None:  # the store failed: the detail is for the log, not the client
            log.error("%s %s: %s", request.method, clean(request.url.path), answer.logged)
        headers = dict(answer.headers)
        if answer.status in (400, 401, 403, 408, 413):
            headers["Connection"] = "close"  # the body was not read to its end: this connection is done
        return JSONResponse(answer.body(), status_code=answer.status, headers=headers)


class _RequestLog:
    """One line per request on the ``wb.server`` logger: client, method, path, status,
    bytes sent, milliseconds and the token's name (never the token or the query)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status, sent = 0, 0

        async def counting(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting)
        finally:
            client = scope.get("client") or ("-", 0)
            log.info(
                "%s %s %s %s %d B %.1f ms %s",
                client[0],
                scope["method"],
                clean(scope["path"])[:200],
                status or "-",
                sent,
                (time.perf_counter() - started) * 1000,
                scope.get("wb.caller", "-"),
            )


def create_app(config: ServerConfig, store: Store | None = None) -> ASGIApp:
    return WbApp(config, store).asgi
