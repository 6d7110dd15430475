"""A bundle that holds every kind of derived record: a bisection (its rerun comparisons, the
observation it pins), a hypothesis written after it and decided by a rerun made after it
(its own test), and an action approved and verified by that rerun's plan. Built once per
test process on a throwaway git history with a fake benchmark (no real timing)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bisect.test_bisect import BENCH, _bisect, history
from tests.rerun.helpers import wb


def _bench(tmp: Path, factor: float) -> Path:
    """The bisection's benchmark outside git, at a fixed speed factor."""
    folder = tmp / f"bench-{factor}"
    folder.mkdir()
    (folder / "speed.txt").write_text(f"{factor}\n")
    (folder / "bench.sh").write_text(BENCH)
    return folder


def build(tmp: Path) -> tuple[str, dict]:
    """(the store URL, the exported bundle with samples)."""
    from store import open_store
    from workbench.actions import workflow as aw
    from workbench.investigations import workflow as wf

    url = f"sqlite:///{tmp / 'wb.sqlite'}"
    store = open_store(url)
    inv = wf.new_investigation(store, lens="training", question="Which commit made the step slower?").id
    repo, ids = history(tmp, {5: 1.05}, commits=8)
    _bisect(tmp, url, repo, ids[0], ids[-1], "--investigation", str(inv))
    hyp = wf.new_hypothesis(store, inv, "Commit 5 slowed the step.", "an interleaved rerun of 4 against 5").id
    slow, fast = _bench(tmp, 1.0), _bench(tmp, 1.05)
    code, _, err = wb(
        "rerun",
        "plan",
        "after",
        "--lens",
        "training",
        "--investigation",
        str(inv),
        "--baseline",
        f"sh -c 'cd {slow} && sh bench.sh'",
        "--candidate",
        f"sh -c 'cd {fast} && sh bench.sh'",
        "--rounds",
        "4",
        "--seed",
        "5",
        store=url,
    )
    assert code == 0, err
    code, _, err = wb("rerun", "run", "after", "--workdir", str(tmp / "after"), store=url)
    assert code in (0, 4), err
    wf.decide_hypothesis(store, hyp, "supported", evidence=[{"kind": "rerun_plan", "name": "after"}], by="ana")
    action = aw.propose_action(
        store, inv, kind="restart", scope="the training pool", because=[hyp], expect=("step_ms", "decrease")
    )
    aw.decide_action(store, action.id, "approved", by="dana", why="a restart is cheap")
    aw.verify_action(store, action.id, plan="after", by="dana")
    out = tmp / "rich.json"
    code, _, err = wb("bundle", "export", str(inv), "-o", str(out), "--embed-samples", store=url)
    assert code == 0, err
    return url, json.loads(out.read_text())
