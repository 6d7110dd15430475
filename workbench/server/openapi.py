"""The API's OpenAPI 3.1 description: served at ``/api/v1/openapi.json`` and checked in
as ``docs/openapi.json`` (``python -m workbench.server.openapi`` rewrites it; a test holds
the two equal and every route described).

Written out rather than generated from type hints: the bodies are the CLI's ``--json``
documents (docs/compare.md, docs/cli.md, docs/schema/), which have their own contracts;
this says which endpoint takes and gives which, who may call it and what errors mean.
"""

from __future__ import annotations

import json
from pathlib import Path
from workbench import __version__
from workbench.vocabulary import JSONDoc

CHECKED_IN = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"

_ERROR: JSONDoc = {"$ref": "#/components/schemas/Error"}


def _errors(*codes: int) -> JSONDoc:
    words = {
        400: "malformed request",
        401: "missing, malformed, unknown or revoked token",
        403: "the token's role is too low",
        404: "no such run or investigation",
        408: "the upload stalled or dripped slower than the server's rate",
        409: "refused: a read-only (imported) investigation or store",
        413: "over the upload limit or a reader's limit (docs/limits.md)",
        422: "bad input: the file, the place and what is wrong, as wb import says it",
    }
    return {str(c): {"description": words[c], "content": {"application/json": {"schema": _ERROR}}} for c in codes}


def _json_body(description: str, schema: JSONDoc | None = None) -> JSONDoc:
    return {"description": description, "content": {"application/json": {"schema": schema or {"type": "object"}}}}


def _path_param(name: str, description: str) -> JSONDoc:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": {"type": "string"}}


def document() -> JSONDoc:
    runs_list: JSONDoc = {"type": "array", "items": {"type": "object"}}
    refs: JSONDoc = {"type": "array", "items": {"type": ["string", "integer"]}}
    # Apart, so that InspectRequest can extend them (a JSON value is not known to be an object).
    compare_properties: JSONDoc = {
        "baseline": refs,
        "candidate": refs,
        "control": refs,
        "lens": {"type": ["string", "null"]},
        "change": {
            "type": "array",
            "items": {"type": "string"},
            "description": "DIM, DIM=FROM:TO or DIM=FROM->TO, as --change",
        },
        "accept": {"type": "array", "items": {"type": "string"}, "description": "DIM[,DIM...], as --accept"},
        "why": {
            "type": "array",
            "items": {"type": "string"},
            "description": "one per accept, or one for all, as --why",
        },
        "metric": {"type": ["string", "null"], "description": "inference: the primary metric, as --metric"},
        "investigation": {
            "type": ["string", "integer", "null"],
            "description": "store the comparison there (role upload)",
        },
    }
    compare_request: JSONDoc = {
        "type": "object",
        "required": ["baseline", "candidate"],
        "additionalProperties": False,
        "properties": compare_properties,
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "wb serve",
            "version": __version__,
            "description": "The wb store over HTTP: upload captures, list and show runs, declare dimensions, compare, "
            "export bundles. Bodies are the documents of the wb CLI's --json (docs/server.md).",
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
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["status", "message"],
                            "properties": {"status": {"type": "integer"}, "message": {"type": "string"}},
                        }
                    },
                },
                "CompareRequest": compare_request,
                "InspectRequest": {
                    **compare_request,
                    "properties": {
                        **compare_properties,
                        "windows": {"type": "integer", "minimum": 2, "maximum": 50},
                        "top": {"type": "integer", "minimum": 1, "maximum": 200},
                    },
                },
                "DeclareRequest": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "values": {"type": "object", "additionalProperties": {"type": "string"}},
                        "unset": {"type": "array", "items": {"type": "string"}},
                        "why": {"type": "string"},
                    },
                },
            },
        },
        "paths": {
            "/healthz": {
                "get": {
                    "summary": "Liveness, the version and the upload limit (no token needed)",
                    "security": [],
                    "responses": {"200": _json_body("ok")},
                }
            },
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "This document (role read)",
                    "responses": {"200": _json_body("OpenAPI 3.1"), **_errors(401)},
                }
            },
            "/api/v1/captures": {
                "post": {
                    "summary": "Upload one capture file (role upload); imported as 'wb import NAME [--label] "
                    "[--dim]...'",
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
            "/api/v1/runs": {
                "get": {
                    "summary": "'wb runs --json' (role read)",
                    "parameters": [{"name": "lens", "in": "query", "required": False, "schema": {"type": "string"}}],
                    "responses": {"200": _json_body("the runs", runs_list), **_errors(401)},
                }
            },
            "/api/v1/runs/{run}": {
                "get": {
                    "summary": "'wb show RUN --json' (role read)",
                    "parameters": [_path_param("run", "an id or a label")],
                    "responses": {"200": _json_body("the run"), **_errors(401, 404)},
                }
            },
            "/api/v1/runs/{run}/declarations": {
                "post": {
                    "summary": "'wb declare RUN NAME=VALUE... --json' (role upload); who declared is 'token:NAME'",
                    "parameters": [_path_param("run", "an id or a label")],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeclareRequest"}}},
                    },
                    "responses": {"200": _json_body("the declarations recorded"), **_errors(401, 403, 404, 422)},
                }
            },
            "/api/v1/compare": {
                "post": {
                    "summary": "'wb compare BASE... --vs CAND... --json' (role read; upload to store it in an "
                    "investigation)",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompareRequest"}}},
                    },
                    "responses": {
                        "200": _json_body("the comparison document (docs/compare.md), with way_out for a refusal"),
                        **_errors(401, 403, 404, 409, 422),
                    },
                }
            },
            "/api/v1/inspect": {
                "post": {
                    "summary": "'wb inspect BASE... --vs CAND... --json' (role read): the comparison, distributions, "
                    "over time, operations",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InspectRequest"}}},
                    },
                    "responses": {
                        "200": _json_body("the inspection document, with way_out for a refusal"),
                        **_errors(401, 404, 422),
                    },
                }
            },
            "/api/v1/investigations/{investigation}/bundle": {
                "get": {
                    "summary": "'wb bundle export INVESTIGATION' (role read): the bundle's text, checksummed, unsigned",
                    "parameters": [
                        _path_param("investigation", "an id (or inv-N)"),
                        {"name": "embed_samples", "in": "query", "required": False, "schema": {"type": "boolean"}},
                    ],
                    "responses": {"200": _json_body("the bundle (docs/bundle-format.md)"), **_errors(401, 404, 409)},
                }
            },
        },
    }


def text() -> str:
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    CHECKED_IN.write_text(text(), encoding="utf-8")
