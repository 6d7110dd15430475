"""Parity, tested rather than claimed: every store command of ``wb``, with ``--json`` and without,
once on a store and once through a server on that store, prints the same stdout and exits with
the same code (failures included: the same line on stderr). Writes go to two stores built the
same way, one through the server and one locally: the same output, and the records read back
the same. ``WB_SERVER`` does what ``--server`` does; a command that works on a local store only
is refused in one line under both. On every store backend.

The server runs in this process (uvicorn in a thread, real HTTP on loopback) and so does ``wb``
(``main``), so that the hundred commands take seconds; ``test_remote_cli.py`` keeps the real
``wb serve`` subprocess round trips.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import pytest

from tests.conftest import PG_ADMIN_URL, _pg_url
from tests.rerun.helpers import fake_bench
from tests.server.conftest import DEMO, wb_here

pytestmark = pytest.mark.store

REPO = Path(__file__).resolve().parents[2]
SUMMARIES = REPO / "tests" / "data" / "inference" / "vllm_bench_summaries.jsonl"
BASE = ["1", "2", "3", "4", "5"]
CAND = ["11", "12", "13", "14", "15"]
CONTROL = ["6", "7", "8", "9", "10"]
CHANGE = ["--change", "engine_revision=v0.8.2:v0.8.3"]
# Times of day differ between two stores built one after the other; nothing else may.
_TIMES = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def _same(text: str) -> str:
    return _TIMES.sub("<time>", text)


@pytest.fixture
def twin(store_url, tmp_path):
    """A second, empty store on the same backend."""
    if store_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'twin.sqlite'}"
        return
    from sqlalchemy import create_engine, text

    name = f"wb_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(_pg_url(PG_ADMIN_URL, "postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield _pg_url(PG_ADMIN_URL, name)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _ok(*args: str) -> str:
    code, out, err = wb_here(*args)
    assert code == 0, (args, out, err)
    return out


def populate(store: str, bench: Path, tmp_path: Path) -> None:
    """Runs, an investigation with a comparison, observations, a hypothesis, an action, a
    rerun plan that ran, declarations: built by the same commands on each store."""
    s = ["--store", store]
    _ok(*s, "import", *map(str, sorted((DEMO / "inference").glob("*.json"))))
    _ok(*s, "import", str(DEMO / "not-comparable"))  # run 16: an A100 run
    _ok(*s, "import", *map(str, sorted((DEMO / "training").glob("*.json"))))
    _ok(*s, "import", str(SUMMARIES))  # summary-only inference runs: their phases unknown
    summary_runs = [str(r["id"]) for r in json.loads(_ok(*s, "runs", "--json")) if r["samples"] == 0][:4]
    _ok(*s, "declare", *summary_runs, "weights=hub", "topology=tp=4", "--why", "the job script")
    _ok(*s, "investigate", "new", "--lens", "inference", "--question", "ship v0.8.3?", *CHANGE, "--title", "ttft")
    # The hypothesis first: evidence recorded before it cannot decide it.
    _ok(*s, "hypothesize", "1", "the queue grew", "--test", "a controlled comparison", "--test-kind", "comparison")
    _ok(*s, "investigate", "compare", "1", *BASE, "--vs", *CAND, "--control", *CONTROL)
    _ok(*s, "observe", "1", "--from-compare", "1", "--by", "alice")
    _ok(*s, "hypothesis", "status", "1", "supported", "--evidence", "comparison=1", "--by", "alice")
    _ok(*s, "action", "propose", "1", "--change", "max_num_seqs=128:256", "--scope", "pool-a", "--because", "1")
    _ok(*s, "action", "approve", "1", "--by", "bob", "--why", "cheap to try")
    base, cand = f"{bench} 10", f"{bench} 13"
    _ok(*s, "rerun", "plan", "p", "--lens", "training", "--baseline", base, "--candidate", cand, "--rounds", "3")
    _ok(*s, "rerun", "plan", "p", "--lens", "training", "--baseline", base, "--candidate", cand, "--rounds", "3")
    _ok(*s, "rerun", "run", "p", "--workdir", str(tmp_path / f"runs-{uuid.uuid4().hex[:6]}"))


@pytest.fixture
def served(store_url, twin, tmp_path, in_process, monkeypatch):
    """(the served store's URL, the server, the twin store's URL), both populated alike."""
    monkeypatch.setenv("COLUMNS", "100")
    for name in ("WB_SERVER", "WB_TOKEN", "WB_STORE"):
        monkeypatch.delenv(name, raising=False)
    bench = fake_bench(tmp_path)
    for store in (store_url, twin):
        populate(store, bench, tmp_path)
    server = in_process(store_url)
    monkeypatch.setenv("WB_TOKEN", server.token("parity", "admin"))
    monkeypatch.chdir(tmp_path)
    return store_url, server, twin


def _both(store: str, url: str, *args: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    return wb_here("--store", store, *args), wb_here("--server", url, *args)


READS = [
    ("runs",),
    ("runs", "--lens", "training"),
    ("show", "3"),
    ("show", "engine v0.8.3 run 2"),
    ("show", "999"),
    ("compare", *BASE, "--vs", *CAND, *CHANGE),
    ("compare", *BASE, "--vs", *CAND, "--control", *CONTROL, *CHANGE, "--fail-on", "regression"),
    ("compare", *BASE, "--vs", "16", "--fail-on", "refused"),
    ("compare", *BASE, "--vs", *CAND, "--metric", "e2e_p99", *CHANGE),
    ("compare", "1", "--vs", "1"),
    ("compare", "1", "--vs", "nope"),
    ("inspect", *BASE, "--vs", *CAND, *CHANGE, "--windows", "4", "--top", "3"),
    ("inspect", *BASE, "--vs", "16"),
    ("inspect", *BASE, "--vs", *CAND, *CHANGE, "--plot"),
    ("investigate", "list"),
    ("investigate", "show", "1"),
    ("investigate", "show", "99"),
    ("action", "list"),
    ("action", "list", "--investigation", "1"),
    ("action", "show", "1"),
    ("rerun", "plan", "--list"),
    ("rerun", "report", "p"),
    ("rerun", "report", "nope"),
    ("rerun", "run", "p", "--dry-run"),
    ("bisect", "report"),
    ("bisect", "status"),
    ("token", "list"),
]


def test_every_read_prints_the_same_through_the_server(served):
    store, server, _twin = served
    summary = [str(r["id"]) for r in json.loads(_ok("--store", store, "runs", "--json")) if r["samples"] == 0]
    reads = [*READS, ("inspect", summary[0], "--vs", summary[1]), ("inspect", summary[0], "--vs", summary[2])]
    for args in reads:
        for shown in (args, (*args, "--json")):
            if "--plot" in shown and "--json" in shown:
                continue
            local, remote = _both(store, server.url, *shown)
            assert remote[0] == local[0], (shown, local, remote)
            assert _same(remote[1]) == _same(local[1]), shown  # (a preflight says when it looked)
            assert _same(remote[2]) == _same(local[2]), shown
            assert local[1].strip() or local[0] != 0, shown  # each prints something, or fails with a line


def test_writes_through_the_server_land_and_read_back_as_local_writes_do(served, tmp_path):
    store, server, twin = served
    bundle = tmp_path / "exported.bundle.json"
    _ok("--store", twin, "bundle", "export", "1", "-o", str(bundle))
    writes = [
        ("declare", "2", "rack=r8", "--why", "from the job"),
        ("declare", "3", "rack=r9", "modle=x", "--json"),
        ("declare", "2", "rack=r8"),  # already so: nothing recorded
        ("declare", "999", "rack=r1"),
        ("investigate", "new", "--lens", "inference", "--question", "is it the queue?", "--by", "carol"),
        ("investigate", "new", "--lens", "inference", "--question", "and the prefill?", *CHANGE, "--json"),
        ("investigate", "compare", "2", *BASE, "--vs", *CAND, *CHANGE, "--by", "carol"),
        ("investigate", "compare", "3", *BASE, "--vs", "16", "--json"),
        ("observe", "2", "--text", "queue time doubled", "--evidence", "run=11", "--evidence", "comparison=2"),
        ("observe", "2", "--retract", "4", "--text", "misread", "--json"),
        ("observe", "3", "--from-compare", "3"),
        ("hypothesize", "2", "admission control", "--test", "rerun with max_num_seqs 256", "--json"),
        ("hypothesis", "status", "2", "refuted", "--evidence", "comparison=2", "--note", "no", "--json"),
        ("hypothesis", "status", "2", "supported"),
        ("action", "propose", "2", "--change", "max_num_seqs=128:256", "--scope", "p", "--because", "2", "--json"),
        ("action", "reject", "2", "--by", "dana", "--why", "not now"),
        ("action", "approve", "2", "--by", "dana", "--why", "now", "--json"),
        ("action", "verify", "2", "--plan", "p"),
        ("bundle", "import", str(bundle)),
        ("bundle", "import", str(bundle), "--json"),
        ("bundle", "import", str(tmp_path / "missing.bundle.json")),
    ]
    for args in writes:
        remote = wb_here("--server", server.url, *args)
        local = wb_here("--store", twin, *args)
        assert remote[0] == local[0], (args, local, remote)
        assert _same(remote[1]) == _same(local[1]), args
        assert _same(remote[2]) == _same(local[2]), args
    for args in (("investigate", "show", n, "--json") for n in ("2", "3", "4")):
        assert _same(_ok("--store", store, *args)) == _same(_ok("--store", twin, *args))
    for args in (("show", "3", "--json"), ("action", "show", "2", "--json"), ("investigate", "list", "--json")):
        assert _same(_ok("--store", store, *args)) == _same(_ok("--store", twin, *args))


def test_bundle_export_through_the_server_writes_the_same_bundle(served, tmp_path):
    store, server, _twin = served
    local_out, remote_out = tmp_path / "local.bundle.json", tmp_path / "remote.bundle.json"
    local = json.loads(_ok("--store", store, "bundle", "export", "1", "-o", str(local_out), "--json"))
    remote = json.loads(_ok("--server", server.url, "bundle", "export", "1", "-o", str(remote_out), "--json"))
    for key in ("recipe_sha256", "results_sha256", "captures", "signed"):  # (the checksum covers the export's time)
        assert remote[key] == local[key]
    assert _ok("evidence", "verify", str(remote_out)).strip()
    code, _out, err = wb_here("--server", server.url, "bundle", "export", "99")
    assert code == 2 and "wb investigate list" in err  # a way out the server answers too
    assert wb_here("--server", server.url, "investigate", "list")[0] == 0


def test_wb_server_behaves_as_the_option(served, monkeypatch):
    store, server, _twin = served
    monkeypatch.setenv("WB_SERVER", server.url)
    for args in (("runs", "--json"), ("investigate", "show", "1"), ("compare", *BASE, "--vs", *CAND)):
        assert wb_here(*args) == wb_here("--server", server.url, *args)
    assert wb_here("--store", store, "runs")[1] == wb_here("runs")[1]  # and an explicit --store wins


@pytest.mark.parametrize(
    "args, way",
    [
        (("import", "x.json"), "wb push FILE"),
        (("demo",), "its own local store"),
        (("serve",), "serves its local store"),
        (("rename", "1", "new-label"), "works on a local store only"),
        (("remove", "1"), "works on a local store only"),
    ],
)
def test_local_only_commands_are_refused_in_one_line_under_both(args, way, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").write_text("v1\nv2\n")
    (tmp_path / "x.json").write_text("{}")
    monkeypatch.delenv("WB_SERVER", raising=False)
    explicit = wb_here("--server", "http://127.0.0.1:9", *args)
    monkeypatch.setenv("WB_SERVER", "http://127.0.0.1:9")
    from_env = wb_here(*args)
    for code, _out, err in (explicit, from_env):
        assert code == 2 and way in err and len(err.strip().splitlines()) == 1, (args, err)
    assert explicit == from_env
    assert not (tmp_path / "xdg").exists() and not list(tmp_path.glob("*.sqlite"))  # no local store was made


def test_store_free_commands_run_as_they_always_do_with_a_server_named(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_SERVER", "http://127.0.0.1:9")
    code, out, _err = wb_here("stats", "-a", "10,11,12", "-b", "13,14,15", "--json")
    assert code == 0 and json.loads(out)
    shutil.rmtree(tmp_path / "xdg", ignore_errors=True)
