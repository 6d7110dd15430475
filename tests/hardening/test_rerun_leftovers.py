"""Issue 28 item 8: a rerun arm leaves nothing running into later arms; what it left is
killed and said in the run's record; each run's output is capped."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.rerun.helpers import wb, write_plan
from workbench.rerun import execute

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strays are found through /proc")

CAPTURE = (
    'printf \'{"format": "workbench.capture/1", "lens": "training", "label": "b", "samples": '
    '[{"step": 0, "rank": 0, "step_ms": 10}, {"step": 1, "rank": 0, "step_ms": 10.1}]}\' > "$WB_CAPTURE_OUT"\n'
)


def _script(tmp_path, body: str):
    path = tmp_path / "arm.sh"
    path.write_text("#!/bin/sh\n" + body + CAPTURE)
    return ["sh", str(path)]


def _runs(tmp_path, store, argv, **top):
    plan = write_plan(tmp_path / "plan.toml", baseline=argv, candidate=argv, **top)
    code, out, err = wb("rerun", "plan", "--from-file", str(plan), store=store)
    assert code == 0, err
    code, out, err = wb("rerun", "run", "p", "--json", "--workdir", str(tmp_path / "work"), store=store)
    assert code in (0, 1, 3), err
    doc = json.loads(out)
    found = []

    def walk(x):
        if isinstance(x, dict):
            if "slot" in x and "status" in x and "reason" in x:
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return sorted({r["slot"]: r for r in found}.values(), key=lambda r: r["slot"])


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(") ")[2].split()[0] != "Z"
    except OSError:
        return False


def test_processes_left_behind_are_killed_and_recorded(tmp_path, sqlite_url):
    marker = tmp_path / "pids"
    # Each run first checks that no process of an earlier run survives, then leaves four:
    # one in its group, one setsid, one setsid by a parent that exits, one with no environment.
    argv = _script(
        tmp_path,
        f"""
for pid in $(cat {marker} 2>/dev/null); do
  if kill -0 "$pid" 2>/dev/null && ! grep -q '^[^ ]* ([^)]*) Z' /proc/$pid/stat; then echo "stray $pid alive" >&2; exit 3; fi
done
sleep 300 & echo $! >> {marker}
setsid sleep 301 & echo $! >> {marker}
setsid sh -c 'sleep 302 & echo $! >> {marker}; exit 0'
env -i setsid sleep 303 & echo $! >> {marker}
sleep 0.5  # let the children detach (setsid) before the arm exits: each is then found by its own path
""",
    )
    runs = _runs(tmp_path, sqlite_url, argv)
    assert len(runs) == 9 and all(r["status"] == "ok" for r in runs), [(r["status"], r["reason"]) for r in runs]
    assert all(r["reason"].startswith("left 4 process(es) running after it exited, killed:") for r in runs), runs[0][
        "reason"
    ]
    for how in ("process group", "environment", "orphan"):
        assert how in runs[0]["reason"]
    pids = [int(p) for p in marker.read_text().split()]
    assert len(pids) == 36 and not any(_alive(p) for p in pids)


def test_a_setsid_child_does_not_escape_the_timeout(tmp_path, sqlite_url):
    marker = tmp_path / "pids"
    argv = _script(
        tmp_path,
        f"""
if [ "$WB_RERUN_SLOT" = 0 ]; then setsid sleep 301 & echo $! >> {marker}; sleep 100; fi
""",
    )
    runs = _runs(tmp_path, sqlite_url, argv, timeout_s=2)
    first = runs[0]
    # The setsid child is found by its environment; the killed shell's own `sleep 100` may still
    # be on its way out when the arm is swept (then it is counted too): one or two, never zero.
    assert first["status"] == "failed" and re.match(
        r"timed out after 2 s \(killed\); left [12] process\(es\)", first["reason"]
    ), first["reason"]
    assert "'sleep' (environment)" in first["reason"], first["reason"]
    assert all(r["status"] == "ok" and r["reason"] == "" for r in runs[1:])
    assert not _alive(int(marker.read_text().split()[0]))


def test_output_is_capped_per_stream(tmp_path, sqlite_url, monkeypatch):
    monkeypatch.setattr(execute, "OUTPUT_CAP_BYTES", 1000)
    argv = _script(tmp_path, "head -c 5000 /dev/zero | tr '\\0' o\nhead -c 300 /dev/zero | tr '\\0' e >&2\n")
    runs = _runs(tmp_path, sqlite_url, argv)
    assert all(r["status"] == "ok" for r in runs)
    out = sorted((tmp_path / "work").rglob("*.stdout"))[0].read_bytes()
    assert out.startswith(b"o" * 1000) and b"o" * 1001 not in out
    assert b"[wb: 4,000 more bytes not kept: each run's output is capped at" in out
    err = sorted((tmp_path / "work").rglob("*.stderr"))[0].read_bytes()
    assert err == b"e" * 300
