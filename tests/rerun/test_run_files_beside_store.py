"""A rerun's per-run files live beside the store that records them, not in the default data directory."""

from __future__ import annotations

import json

from store.engine import work_dir

from .helpers import fake_bench, wb, write_plan


def test_run_files_go_beside_a_named_store(tmp_path, monkeypatch):
    data_home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = f"sqlite:///{elsewhere / 's.sqlite'}"
    monkeypatch.setenv("WB_STORE", store)
    bench = fake_bench(tmp_path)
    plan = write_plan(tmp_path / "p.toml", baseline=[str(bench), "10"], candidate=[str(bench), "11"], name="p")
    assert wb("rerun", "plan", "--from-file", str(plan), "--json", store=store)[0] == 0
    code, out, err = wb("rerun", "run", "p", "--json", store=store)  # no --workdir: the default place
    assert code == 0, err
    assert json.loads(out)["execution"]["status"] == "complete"
    captures = sorted((elsewhere / "s.work" / "rerun").rglob("*.capture.json"))
    assert len(captures) == 9, captures  # 3 rounds of A, B, A′
    assert not (data_home / "wb").exists(), sorted(str(p) for p in (data_home / "wb").rglob("*"))


def test_work_dir_of_each_kind_of_store(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert work_dir(f"sqlite:///{tmp_path / 'a' / 'team.sqlite'}") == tmp_path / "a" / "team.work"
    server = work_dir("postgresql+psycopg://wb:secret@db.example:5432/perf")
    assert server.parent == tmp_path / "xdg" / "wb" / "work" and "secret" not in str(server)
    assert server != work_dir("postgresql+psycopg://wb:secret@db.example:5432/other")
