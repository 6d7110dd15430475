"""The API's OpenAPI 3.1 description, generated from the use cases' request and answer types:
served at ``/api/v1/openapi.json`` and checked in as ``docs/openapi.json``
(``python -m workbench.server.openapi`` rewrites it; a test holds the two equal and every route
described).

One path a use case (``POST /api/v1/op/NAME``): its request's JSON Schema (msgspec's, from the
same type the server decodes with), the least role, and its answer's schema (msgspec's for an
answer that is its fields; an answer whose document is another record's, a comparison or a
bundle, states its own with ``wire_schema``). The upload of a capture and the health check are
written out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from workbench import __version__
from workbench.server.config import API
from workbench.usecases.catalog import operations
from workbench.usecases.core import Operation
from workbench.vocabulary import JSONDoc, Record

CHECKED_IN = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
REF = "#/components/schemas/{name}"
_ERROR: JSONDoc = {"$ref": "#/components/schemas/Error"}
_ERRORS = {
    400: "malformed request",
    401: "missing, malformed, unknown or revoked token",
    403: "the token's role is too low",
    404: "no such run, investigation, plan or action",
    408: "the body stalled or dripped slower than the server's rate",
    409: "refused: a read-only (imported) investigation, an executed plan, ...",
    413: "over the request or upload limit, or a reader's limit (docs/limits.md)",
    422: "bad input: what and where, as wb prints it",
}


def _errors(*codes: int) -> JSONDoc:
    return {str(c): {"description": _ERRORS[c], "content": {"application/json": {"schema": _ERROR}}} for c in codes}


def _json_body(description: str, schema: JSONDoc | None = None) -> JSONDoc:
    return {"description": description, "content": {"application/json": {"schema": schema or {"type": "object"}}}}


def _answer_type(op: Operation) -> Any:
    """The type whose schema the answer's document follows (None: it states its own)."""
    own = hasattr(op.answer, "wire_schema") or not issubclass(op.answer, Record)
    return None if own else op.answer


def _operation_path(op: Operation, refs: dict[Any, JSONDoc]) -> JSONDoc:
    answer: JSONDoc = refs.get(_answer_type(op)) or getattr(op.answer, "wire_schema", lambda: {"type": "object"})()
    post: JSONDoc = {
        "summary": f"{op.summary} (role {op.role})",
        "operationId": op.name,
        "x-wb-role": op.role,
        "responses": {"200": _json_body(op.answer.__name__, answer), **_errors(400, 401, 403, 404, 409, 413, 422)},
    }
    field = getattr(op.request, "file_field", None)
    if field is None:
        post["requestBody"] = {"required": True, "content": {"application/json": {"schema": refs[op.request]}}}
    else:
        post["parameters"] = [
            {
                "name": "request",
                "in": "query",
                "required": True,
                "description": f"the request as JSON; its {field!r} names the file as the client knows it",
                "content": {"application/json": {"schema": refs[op.request]}},
            }
        ]
        post["requestBody"] = {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    return {"post": post}


def document() -> JSONDoc:
    ops = operations()
    types = [op.request for op in ops] + [t for t in (_answer_type(op) for op in ops) if t is not None]
    schemas, components = msgspec.json.schema_components(types, ref_template=REF)
    refs = dict(zip(types, schemas))
    paths: JSONDoc = {
        "/healthz": {
            "get": {
                "summary": "Liveness, the version and the upload limit (no token needed)",
                "security": [],
                "responses": {"200": _json_body("ok")},
            }
        },
        f"{API}/openapi.json": {
            "get": {
                "summary": "This document (role read)",
                "responses": {"200": _json_body("OpenAPI 3.1"), **_errors(401)},
            }
        },
        f"{API}/captures": {
            "post": {
                "summary": "Upload one capture file (role upload); imported as 'wb import NAME [--label] [--dim]...'",
                "parameters": [
                    {
                        "name": "name",
                        "in": "query",
                        "required": True,
                        "description": "the file's name (no folders)",
                        "schema": {"type": "string"},
                    },
                    {"name": "label", "in": "query", "required": False, "schema": {"type": "string"}},
                    {
                        "name": "dim",
                        "in": "query",
                        "required": False,
                        "description": "NAME=VALUE, repeatable, as --dim",
                        "schema": {"type": "array", "items": {"type": "string"}},
                        "explode": True,
                    },
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
                },
                "responses": {
                    "201": _json_body("imported: the 'wb import --json' report"),
                    "200": _json_body("already imported (same SHA-256): the report says so"),
                    **_errors(400, 401, 403, 408, 413, 422),
                },
            }
        },
        **{f"{API}/op/{op.name}": _operation_path(op, refs) for op in ops},
    }
    error: JSONDoc = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["status", "message"],
                "properties": {
                    "status": {"type": "integer"},
                    "message": {"type": "string", "description": "the line wb prints after 'wb: error:'"},
                    "kind": {"type": "string", "description": "as the --json error document's kind"},
                    "exit": {"type": "integer", "description": "wb's exit code for it"},
                    "file": {"type": ["string", "null"]},
                    "where": {"type": ["string", "null"]},
                },
            }
        },
    }
    doc: JSONDoc = {
        "openapi": "3.1.0",
        "info": {
            "title": "wb serve",
            "version": __version__,
            "description": "The wb store over HTTP: every use case of the wb command line and the TUI, one route each "
            "(the same functions, on the server's store), and the upload of captures (docs/server.md).",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token from 'wb token add NAME --role read|upload|admin'.",
                }
            },
            "schemas": {"Error": error, **components},
        },
        "paths": paths,
    }
    return json.loads(json.dumps(doc))  # as JSON holds it (msgspec's defaults may be tuples)


def text() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    CHECKED_IN.write_text(text(), encoding="utf-8")
