"""`wb demo` loads every bundled capture, idempotently, into its own store."""

import json

from tests.conftest import REPO, run_wb


def test_demo_loads_every_capture_once(wb_env):
    files = sorted((REPO / "captures" / "demo").rglob("*.json"))
    assert len(files) == 46
    first = run_wb("demo", "--json")
    assert first.returncode == 0, first.stderr
    loaded = json.loads(first.stdout)
    assert len(loaded["imported_runs"]) == 46
    assert loaded["runs_by_lens"] == {"inference": 16, "training": 15, "fleet": 15}
    assert "demo.sqlite" in loaded["store"]
    again = json.loads(run_wb("demo", "--json").stdout)
    assert again["imported_runs"] == [] and again["already_loaded_files"] == 46


def test_import_every_capture_then_list(wb_env):
    store = f"sqlite:///{wb_env / 'all.sqlite'}"
    out = run_wb("--store", store, "import", str(REPO / "captures" / "demo"))
    assert out.returncode == 0, out.stderr
    runs = json.loads(run_wb("--store", store, "runs", "--json").stdout)
    assert len(runs) == 46
    by_label = {r["label"]: r for r in runs}
    run = by_label["engine v0.8.3 run 1"]
    assert run["lens"] == "inference" and run["samples"] == 400
    assert run["dimensions"]["engine_revision"] == "v0.8.3"
    fleet = by_label["window B1"]
    assert fleet["lens"] == "fleet" and fleet["dimensions"]["eligibility_history"] == "recorded"
    assert {r["lens"] for r in runs} == {"inference", "training", "fleet"}


def test_generator_is_deterministic(tmp_path, monkeypatch):
    """Regenerating the demo writes byte-identical files (and the seed figures still hold)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate_demo", REPO / "captures" / "generate_demo.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    monkeypatch.setattr(gen, "OUT", tmp_path)
    assert gen.main() == 0
    for path in sorted(tmp_path.rglob("*.json")):
        committed = REPO / "captures" / "demo" / path.relative_to(tmp_path)
        assert path.read_bytes() == committed.read_bytes(), path.name
