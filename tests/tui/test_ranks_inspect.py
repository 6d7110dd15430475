"""The Inspect pane at 80x24 on two multi-rank jobs: the ranks that moved most, the top
few of every rank (not one line per rank), the injected straggler first, and the block
fits the screen's width and is on screen when scrolled to."""

from __future__ import annotations

import random

import pytest

from tests.training import synth
from tests.tui.pilot import screen_text, settle, text_of
from workbench.tui.app import WorkbenchApp

pytestmark = pytest.mark.asyncio

WORLD, STRAGGLER, TOP = 32, 21, 8  # compare's default: the top 8 ranks
ACCEPT = {name: "synthetic traces of one job" for name in ("model", "objective", "topology", "effective_batch")}


def _job(root, seed: int, straggler: int | None):
    rng = random.Random(seed)
    for r in range(WORLD):  # every rank jittered (so every rank moves a little); the straggler 20 ms longer
        compute = 50_000 + rng.randrange(0, 1_500) + (20_000 if r == straggler else 0)
        synth.write(root / f"rank{r:02d}.json.gz", synth.trace(r, world=WORLD, compute_us=compute))
    return root


def _two_jobs(tmp_path) -> str:
    from store import open_store
    from workbench.ingest import import_files
    from workbench.inputs import ImportOptions
    from workbench.investigations import workflow as wf

    url = f"sqlite:///{tmp_path / 'ranks.sqlite'}"
    store = open_store(url)
    for seed, name, straggler in ((1, "job-a", None), (2, "job-b", STRAGGLER)):
        import_files(store, [_job(tmp_path / name, seed, straggler)], ImportOptions(label=name))
    inv = wf.new_investigation(store, lens="training", question="Which rank slowed job B?", baseline=[1], candidate=[2])
    wf.store_comparison(store, inv.id, [1], [2], accepts=ACCEPT)
    store.close()
    return url


async def test_inspect_shows_the_top_ranks_of_a_multi_rank_pair_at_80x24(tmp_path):
    app = WorkbenchApp(_two_jobs(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.screen.query_one("#picker-list").highlighted = 0
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("3")
        await settle(app, pilot)
        lines = text_of(app.query_one("#inspect-report")).splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("Ranks that moved most"))
        # Scrolled to the block, the 80x24 screen shows its heading and its first ranks.
        app.query_one("#inspect-scroll").scroll_to(y=head, animate=False)
        await pilot.pause()
        screen = screen_text(app)
    assert f"top {TOP} of {WORLD}" in lines[head]
    rows = lines[head + 2 : head + 2 + TOP]
    ranks = [int(row.split()[0]) for row in rows]
    assert ranks[0] == STRAGGLER and rows[0].split()[1] == "compute_ms" and rows[0].split()[-1].startswith("+")
    assert len(set(ranks)) == TOP and all(0 <= r < WORLD for r in ranks)
    assert lines[head + 2 + TOP].startswith("  descriptive:")  # then the block ends: not one line per rank
    block = [line for line in lines if line.split()[:1] and line.split()[0].isdigit() and len(line.split()) == 5]
    assert len(block) == TOP
    assert all(len(line) <= 80 for line in lines)
    assert len(screen) == 24 and all(len(row) <= 80 for row in screen)
    assert any(row.strip().startswith("Ranks that moved most") for row in screen)
    assert any(row.split()[:2] == [str(STRAGGLER), "compute_ms"] for row in screen)
