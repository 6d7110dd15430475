"""The API through a real uvicorn server on loopback, on every store backend: uploads
(idempotent, concurrent), and the use cases' routes (runs, a run, declarations, comparisons
fresh and stored, bundles) answer with the documents the CLI's --json gives on the same store."""

from __future__ import annotations

import json
import threading

import pytest

from tests.conftest import run_wb
from tests.server.conftest import DEMO, wait_for_log
from workbench.server.openapi import CHECKED_IN, document

pytestmark = pytest.mark.store

INFERENCE = sorted((DEMO / "inference").glob("*.json"))
BASE = ["1", "2", "3", "4", "5"]
CAND = ["11", "12", "13", "14", "15"]


def _upload(http, path, **params):
    return http.post(
        "/api/v1/captures",
        params={"name": path.name, **params},
        content=path.read_bytes(),
        headers={"Content-Type": "application/octet-stream"},
    )


def _op(http, name, body=None):
    return http.post(f"/api/v1/op/{name}", json=body or {})


def _wb_json(served, *args):
    proc = run_wb("--store", served.store_url, *args, "--json", env=served.env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_upload_runs_show_compare_as_the_cli(serve, store_url):
    served = serve(store_url)
    token = served.token("ci", "upload")
    with served.client(token) as http:
        first = _upload(http, INFERENCE[0], label="engine v0.8.2 run 1")
        assert first.status_code == 201, first.text
        assert first.json()["imported"] == [{"file": INFERENCE[0].name, "runs": [1]}]
        again = _upload(http, INFERENCE[0])
        assert again.status_code == 200 and "already imported" in again.json()["skipped"][0]["reason"]
        for path in INFERENCE[1:]:
            assert _upload(http, path).status_code == 201
        wait_for_log(served, r"POST /api/v1/captures 201 \d+ B [\d.]+ ms ci$")

        assert _op(http, "runs.list").json()["runs"] == _wb_json(served, "runs")
        assert _op(http, "runs.list", {"lens": "training"}).json()["runs"] == []
        assert _op(http, "runs.show", {"run": "3"}).json()["run"] == _wb_json(served, "show", "3")

        declared = _op(http, "runs.declare", {"runs": ["3"], "values": {"rack": "r7"}, "why": "from the job"})
        assert declared.status_code == 200, declared.text
        [entry] = declared.json()["done"]
        assert entry["who"] == "token:ci" and entry["value"] == "r7"  # no name stated: the token's
        assert _op(http, "runs.show", {"run": "3"}).json()["run"]["declarations"][0]["who"] == "token:ci"

        body = {
            "baseline": BASE,
            "candidate": CAND,
            "control": ["6", "7", "8", "9", "10"],
            "change": ["engine_revision=v0.8.2:v0.8.3"],
        }
        served_doc = _op(http, "compare", body).json()["comparison"]
        local = _wb_json(
            served,
            "compare",
            *BASE,
            "--vs",
            *CAND,
            "--control",
            "6",
            "7",
            "8",
            "9",
            "10",
            "--change",
            "engine_revision=v0.8.2:v0.8.3",
        )
        assert served_doc == local
        assert served_doc["comparable"] is True

        missing = _op(http, "runs.show", {"run": "999"})
        assert missing.status_code == 404 and "999" in missing.json()["error"]["message"]
        assert missing.json()["error"]["kind"] == "not_found" and missing.json()["error"]["exit"] == 2


@pytest.mark.slow
def test_a_named_investigation_stores_the_comparison_and_exports_its_bundle(serve, store_url, tmp_path):
    served = serve(store_url)
    token = served.token("ci", "upload")
    reader = served.token("dash", "read")
    with served.client(token) as http:
        for path in INFERENCE:
            assert _upload(http, path).status_code == 201
    inv = _wb_json(
        served,
        "investigate",
        "new",
        "--lens",
        "inference",
        "--question",
        "ship v0.8.3?",
        "--change",
        "engine_revision=v0.8.2:v0.8.3",
    )
    body = {"baseline": BASE, "candidate": CAND, "investigation": str(inv["id"])}
    with served.client(reader) as http:
        refused = _op(http, "investigations.compare", body)
        assert refused.status_code == 403  # storing is a write
    with served.client(token) as http:
        stored = _op(http, "investigations.compare", body)
        assert stored.status_code == 200, stored.text
        shown = _wb_json(served, "investigate", "show", str(inv["id"]))
        assert [c["id"] for c in shown["comparisons"]] == [stored.json()["id"]]
        bundle = _op(http, "bundles.export", {"investigation": str(inv["id"])})
        assert bundle.status_code == 200
    path = tmp_path / "inv.bundle.json"
    path.write_bytes(bundle.content)
    proc = run_wb("evidence", "verify", str(path), env=served.env)  # offline: no server, no store
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_concurrent_uploads_of_one_file_import_it_once(serve, store_url):
    served = serve(store_url)
    token = served.token("ci", "upload")
    path = INFERENCE[0]
    answers: list = []

    def send() -> None:
        with served.client(token) as http:
            answers.append(_upload(http, path))

    threads = [threading.Thread(target=send) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(a.status_code for a in answers) == [200] * 5 + [201], [a.text for a in answers]
    skipped = [a.json()["skipped"][0]["reason"] for a in answers if a.status_code == 200]
    assert all("already imported" in why for why in skipped)
    assert len(_wb_json(served, "runs")) == 1


def test_the_openapi_document_is_served_and_checked_in(serve, sqlite_url):
    served = serve(sqlite_url)
    token = served.token("reader", "read")
    with served.client(token) as http:
        served_doc = http.get("/api/v1/openapi.json").json()
    assert served_doc == document() == json.loads(CHECKED_IN.read_text())  # else: python -m workbench.server.openapi
    from workbench.server.app import WbApp
    from workbench.server.config import ServerConfig

    routes = {r.path: set(r.methods) - {"HEAD"} for r in WbApp(ServerConfig(store_url=sqlite_url)).routes()}
    assert len(routes) > 30  # one route a use case
    described = {path: {m.upper() for m in ops} for path, ops in served_doc["paths"].items()}
    assert routes == described
