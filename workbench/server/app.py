"""The Starlette application: routes under ``/api/v1``, JSON errors, one log line a request.

Endpoints that touch the store are plain functions, which Starlette runs in its thread
pool (the store's reads and writes block); the upload is a coroutine only while it
streams the body to disk, then imports in the pool too. The store is opened once, at
start, and shared: every read opens its own connection, every import is one transaction.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from typing import Any

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
from workbench.server import queries
from workbench.server.auth import caller_of, require
from workbench.server.config import API, ServerConfig
from workbench.server.errors import ApiError, error_body, message_of, status_of
from workbench.server.openapi import document as openapi_document
from workbench.server.uploads import Spool, import_upload, spool, upload_name
from workbench.textsafe import clean

log = logging.getLogger("wb.server")


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
        # wb's errors are answers (ExceptionMiddleware: no traceback); anything else is a 500, logged.
        known: dict[Any, Any] = {kind: self.on_error for kind in (ApiError, WbError, StoreError, HTTPException)}
        self.asgi = _RequestLog(Starlette(routes=self.routes(), exception_handlers={**known, Exception: self.on_error}))

    def routes(self) -> list[Route]:
        return [
            Route("/healthz", self.healthz, methods=["GET"]),
            Route(f"{API}/openapi.json", self.openapi, methods=["GET"]),
            Route(f"{API}/captures", self.upload, methods=["POST"]),
            Route(f"{API}/runs", self.runs, methods=["GET"]),
            Route(f"{API}/runs/{{run}}", self.run, methods=["GET"]),
            Route(f"{API}/runs/{{run}}/declarations", self.declare, methods=["POST"]),
            Route(f"{API}/compare", self.compare, methods=["POST"]),
            Route(f"{API}/inspect", self.inspect, methods=["POST"]),
            Route(f"{API}/investigations/{{investigation}}/bundle", self.bundle, methods=["GET"]),
        ]

    def caller(self, request: Request, role: str, what: str) -> Caller:
        caller = caller_of(self.store, request.headers)
        request.scope["wb.caller"] = caller.name
        require(caller, role, what)
        return caller

    # -- endpoints ----------------------------------------------------------------

    def healthz(self, request: Request) -> Response:
        return _json(
            {"status": "ok", "version": __version__, "api": API, "max_upload_bytes": self.config.max_upload_bytes}
        )

    def openapi(self, request: Request) -> Response:
        self.caller(request, "read", "the API description")
        return _json(openapi_document())

    async def upload(self, request: Request) -> Response:
        await run_in_threadpool(self.caller, request, "upload", "uploading a capture")
        name = upload_name(request.query_params.get("name"))
        length = request.headers.get("content-length")
        try:
            declared = int(length) if length is not None else None
        except ValueError:
            raise ApiError(400, "Content-Length is not a number") from None
        with Spool(self.config) as folder:
            target = folder.dir / name
            try:
                await spool(request.stream(), target, self.config, declared)
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
                status = status_of(exc)
                if status is None:
                    raise
                raise ApiError(status, folder.scrub(message_of(exc))) from None
        return _json(report, 201 if report["imported"] else 200)

    def runs(self, request: Request) -> Response:
        self.caller(request, "read", "listing runs")
        return _json(queries.list_runs(self.store, queries.lens_of(request.query_params)))

    def run(self, request: Request) -> Response:
        self.caller(request, "read", "reading a run")
        return _json(queries.show_run(self.store, request.path_params["run"]))

    async def declare(self, request: Request) -> Response:
        body = await request.body()  # small: bounded by uvicorn's h11 limits and our own check
        if len(body) > 1 << 20:
            raise ApiError(413, "a declaration body of more than 1 MiB")
        caller = await run_in_threadpool(self.caller, request, "upload", "declaring dimensions")
        req = queries.decode(queries.DeclareRequest, body)
        return _json(await run_in_threadpool(queries.declare, self.store, request.path_params["run"], req, caller))

    async def compare(self, request: Request) -> Response:
        body = await request.body()
        if len(body) > 1 << 20:
            raise ApiError(413, "a comparison request of more than 1 MiB")
        req = queries.decode(queries.CompareRequest, body)
        role = "upload" if req.investigation is not None else "read"
        caller = await run_in_threadpool(
            self.caller, request, role, "storing a comparison" if role == "upload" else "comparing"
        )
        return _json(await run_in_threadpool(queries.compare_runs, self.store, req, caller))

    async def inspect(self, request: Request) -> Response:
        body = await request.body()
        if len(body) > 1 << 20:
            raise ApiError(413, "an inspection request of more than 1 MiB")
        req = queries.decode(queries.InspectRequest, body)
        await run_in_threadpool(self.caller, request, "read", "inspecting")
        return _json(await run_in_threadpool(queries.inspect_runs, self.store, req))

    def bundle(self, request: Request) -> Response:
        self.caller(request, "read", "exporting a bundle")
        embed = request.query_params.get("embed_samples", "").lower() in ("1", "true", "yes")
        text = queries.bundle_text(self.store, request.path_params["investigation"], embed)
        return Response(text, media_type="application/json")

    # -- errors -------------------------------------------------------------------

    async def on_error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, HTTPException):  # Starlette's own: unknown route, wrong method
            return JSONResponse(error_body(exc.status_code, str(exc.detail)), status_code=exc.status_code)
        status = status_of(exc)
        if status is None:
            log.error(
                "internal error on %s %s: %s",
                request.method,
                clean(request.url.path),
                "".join(traceback.format_exception(exc)).rstrip(),
            )
            return JSONResponse(
                error_body(500, f"internal error ({type(exc).__name__}); see the server's log"), status_code=500
            )
        headers = dict(exc.headers) if isinstance(exc, ApiError) else {}
        if status in (400, 408, 413):
            headers["Connection"] = (
                "close"  # the body was not read to its end: this connection is done (a drip holds nothing)
            )
        return JSONResponse(error_body(status, message_of(exc)), status_code=status, headers=headers)


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
