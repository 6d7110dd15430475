"""Issue 28 item 9: a damaged store (a corrupt page, a missing table, a bad blob) and a
full disk are one line naming the store; a write that finds no space loses nothing."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from tests.hardening import inputs
from tests.hardening.test_refusals import wb


@pytest.fixture
def two_runs(capsys, tmp_path):
    path = tmp_path / "wb.sqlite"
    url = f"sqlite:///{path}"
    for i in range(2):
        rc, _out, err = wb(
            capsys,
            "--store",
            url,
            "import",
            str(inputs.native_capture(tmp_path / f"c{i}.json", label=f"r{i}", ttft=1 + i)),
        )
        assert rc == 0, err
    return url, path


def _one_line(capsys, url, *args, needle):
    rc, out, err = wb(capsys, "--store", url, *args)
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc != 0 and len(lines) == 1 and "internal error" not in err, (rc, err)
    assert lines[0].startswith("wb: error: ") and url in lines[0] and needle in lines[0], lines[0]
    return lines[0]


def _sql(path, statement):
    con = sqlite3.connect(path)
    con.execute(statement)
    con.commit()
    con.close()


@pytest.mark.parametrize("args", [["show", "1"], ["compare", "1", "--vs", "2"]])
def test_a_bad_blob(capsys, two_runs, args):
    url, path = two_runs
    _sql(path, "UPDATE run_column SET data = x'0001020304'")
    _one_line(capsys, url, *args, needle="is not a stored column")


@pytest.mark.parametrize("args", [["show", "1"], ["compare", "1", "--vs", "2"]])
def test_a_missing_table(capsys, two_runs, args):
    url, path = two_runs
    _sql(path, "DROP TABLE run_column")
    _one_line(capsys, url, *args, needle="no such table: run_column")


def test_a_corrupt_page(capsys, two_runs):
    url, path = two_runs
    _sql(path, "PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # every page after the first two: the tables' b-trees
        f.seek(8192)
        f.write(b"\xa5" * (size - 8192))
    _one_line(capsys, url, "compare", "1", "--vs", "2", needle="malformed")


@pytest.fixture
def full_disk(monkeypatch, two_runs):
    """SQLite's own 'database or disk is full' (SQLITE_FULL): no page may be added."""
    import store.api
    import store.engine

    url, path = two_runs
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
    pragma = f"PRAGMA max_page_count={pages}"
    monkeypatch.setattr(store.engine, "SQLITE_PRAGMAS", (*store.engine.SQLITE_PRAGMAS, pragma))
    real = store.api.connect_sqlite

    def capped(p, *args, **kw):
        con = real(p, *args, **kw)
        if not kw.get("read_only"):
            con.execute(pragma)
        return con

    monkeypatch.setattr(store.api, "connect_sqlite", capped)
    return url


def _stored(capsys, url):
    rc, out, err = wb(capsys, "--store", url, "runs", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    return [(r["id"], r["label"]) for r in (doc if isinstance(doc, list) else doc["runs"])]


def test_disk_full_during_import(capsys, tmp_path, full_disk):
    before = _stored(capsys, full_disk)
    big = inputs.native_capture(tmp_path / "big.json", label="big", n=20_000)
    _one_line(capsys, full_disk, "import", str(big), needle="is full (no space left on its disk): nothing was written")
    assert _stored(capsys, full_disk) == before


def test_disk_full_during_declare_and_investigate_new(capsys, full_disk):
    before = _stored(capsys, full_disk)
    _one_line(capsys, full_disk, "declare", "1", "model=" + "m" * 200_000, "--why", "w", needle="is full")
    _one_line(
        capsys,
        full_disk,
        "investigate",
        "new",
        "--lens",
        "inference",
        "--question",
        "q" * 200_000 + "?",
        needle="is full",
    )
    assert _stored(capsys, full_disk) == before
