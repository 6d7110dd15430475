"""Ranks as a dimension: an 8-rank job with one straggler is named in import findings
and in ``wb inspect A --vs B`` (the ranks that moved most, a few lines, not one per rank)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.training import synth
from workbench.training import ranks as rk

WORLD, STRAGGLER = 8, 5
ACCEPT = ("--accept", "model,objective,topology,effective_batch", "--why", "synthetic traces of one job")


def _job(root: Path, straggler: int | None) -> Path:
    for r in range(WORLD):
        compute = (
            70_000 if r == straggler else 50_000
        )  # the straggler's compute is 20 ms longer; the others wait for it
        synth.write(root / f"rank{r}.json.gz", synth.trace(r, world=WORLD, compute_us=compute))
    return root


def _samples(rows: list[tuple[float, float, float, float]]) -> dict[str, np.ndarray]:
    step, rank, ms, comp = (np.array(c, dtype=np.float64) for c in zip(*rows))
    return {
        "step": step,
        "rank": rank,
        "step_ms": ms,
        "compute_ms": comp,
        "communication_ms": np.full(len(step), np.nan),
    }


def test_rank_table_and_slowest_rank_per_step():
    s = _samples(
        [
            (1, 0, 100, 50),
            (1, 1, 130, 80),
            (1, 2, 101, 50),
            (2, 0, 100, 50),
            (2, 1, 128, 78),
            (2, 2, 99, 50),
            (3, 0, 120, 70),
            (3, 1, 100, 50),
            (3, 2, 100, 50),
            (4, 0, 90, 40),
        ]
    )  # step 4: one rank, not compared
    table = rk.rank_table(s)
    assert table["rank"].tolist() == [0, 1, 2]
    assert table["steps"].tolist() == [4, 3, 3]
    assert table["step_ms_mean"][1] == pytest.approx((130 + 128 + 100) / 3)
    assert table["slowest_steps"].tolist() == [1, 2, 0]
    assert np.isnan(table["communication_ms_mean"]).all()  # unknown, not zero
    slow = rk.slowest_rank(s)
    assert (slow.rank, slow.steps_slowest, slow.steps_compared, slow.steps) == (1, 2, 3, (1.0, 2.0))
    assert slow.margin_ms_median == pytest.approx(np.median([130 - 101, 128 - 100]))


def test_ranks_moved_uses_offsets_from_the_median_rank():
    base = _samples([(1, r, 100, 50) for r in range(4)])
    everywhere = _samples([(1, r, 110, 60) for r in range(4)])  # every rank 10 ms slower: no rank moved
    one = _samples([(1, r, 100 + (25 if r == 2 else 0), 50 + (25 if r == 2 else 0)) for r in range(4)])
    moves, shared = rk.ranks_moved([base], [everywhere], 3)
    assert shared == 4 and moves == []
    moves, _ = rk.ranks_moved([base], [one], 2)
    assert [m.rank for m in moves] == [2] and moves[0].moved_ms == pytest.approx(25) and moves[0].measure == "step_ms"
    many = [_samples([(1, r, 100 + r, 50) for r in range(64)])]
    moves, shared = rk.ranks_moved([_samples([(1, r, 100, 50) for r in range(64)])], many, 5)
    assert shared == 64 and [m.rank for m in moves] == [0, 63, 1, 62, 2]  # top N, not one line per rank


def test_an_eight_rank_straggler_is_named_at_import_and_in_inspect(tmp_path, wb_env):
    from tests.conftest import run_wb

    a, b = _job(tmp_path / "job-a", None), _job(tmp_path / "job-b", STRAGGLER)
    for path, label in ((a, "job-a"), (b, "job-b")):
        assert run_wb("import", str(path), "--label", label).returncode == 0
    shown = run_wb("inspect", "job-a", "--vs", "job-b", "--ranks", "3", "--json", *ACCEPT)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["ranks"]["shared"] == WORLD and len(doc["ranks"]["moved"]) == 1  # no other rank moved against its median
    top = doc["ranks"]["moved"][0]
    assert (
        top["rank"] == STRAGGLER and top["measure"] == "compute_ms" and top["moved_ms"] == pytest.approx(20.0, abs=0.01)
    )
    found = {(f["side"], f["check"]): f for f in doc["findings"]}
    strag = found[("candidate", "straggler")]
    assert strag["status"] == "found" and strag["evidence"]["straggler_rank"] == STRAGGLER
    assert "steps 2, 3, 4" in strag["summary"] and "observation, not cause" in strag["summary"]
    assert f"rank {STRAGGLER}" in strag["hypothesis"] and "another node" in strag["hypothesis"]
    assert found[("baseline", "straggler")]["status"] != "found"  # equal ranks: no straggler to name
    assert found[("candidate", "slowest_rank")]["status"] == "not_found"  # the others wait: step times stay level

    text = run_wb("inspect", "job-a", "--vs", "job-b", "--ranks", "3", *ACCEPT)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Ranks that moved most"))
    assert f"top 1 of {WORLD}" in lines[head]
    assert lines[head + 2].split()[:2] == [str(STRAGGLER), "compute_ms"]
    assert f"rank {STRAGGLER} is the one the others wait for" in text.stdout.replace("\n    ", " ").replace("\n  ", " ")
    assert "to test:" in text.stdout
    assert max(len(line) for line in lines) <= 80


def test_ranks_share_one_copy_of_each_name(tmp_path):
    """The client's text grows with the distinct names, not with ranks x names."""
    from workbench.importers.base import ImportOptions
    from workbench.training.parallel import read_all
    from workbench.importers.kineto import read_rank

    paths = [synth.write(tmp_path / f"rank{r}.json", synth.trace(r, world=3)) for r in range(3)]
    summaries = read_all(read_rank, paths, ImportOptions(params={"jobs": 1}))
    first = summaries[0].labels["name"]
    for other in summaries[1:]:
        assert other.labels["name"] == first
        assert all(a is b for a, b in zip(other.labels["name"], first))
