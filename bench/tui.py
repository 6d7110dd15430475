"""Benchmark: the TUI's first frame, Inspect on a 1,000,000-request run, and key latency
while a rerun runs in a worker.

Targets (issue 7): first frame under 1 s; Inspect under 2 s; no keypress waiting more than
100 ms while a rerun runs. Prints each figure beside its target.

    .venv/bin/python bench/tui.py [--requests N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST_FRAME = r"""
import sys, time
t0 = time.perf_counter()
from workbench.tui.app import WorkbenchApp
class Timed(WorkbenchApp):
    def on_mount(self):
        super().on_mount()
        self.call_after_refresh(self.painted)
    def painted(self):
        print(f"FIRST_FRAME {time.perf_counter() - t0:.3f}", flush=True)
        self.exit()
Timed(sys.argv[1]).run(headless=True)
"""


def first_frame(url: str) -> float:
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME, url], capture_output=True, text=True, check=True)
    return float(next(l for l in out.stdout.splitlines() if l.startswith("FIRST_FRAME")).split()[1])


def inspect_big(tmp: Path, requests: int) -> float:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from import_native import write_capture

    from store import open_store
    from workbench.ingest import import_files
    from workbench.investigations import workflow as wf
    from workbench.tui import services

    store = open_store(f"sqlite:///{tmp / 'big.sqlite'}")
    ids = []
    for side in ("a", "b"):
        path = tmp / f"{side}.json"
        write_capture(path, requests)
        text = path.read_text().replace('"label": "bench"', f'"label": "bench {side}"', 1)
        path.write_text(text)
        ids += import_files(store, [path]).run_ids
    inv = wf.create_investigation(store, lens="inference", question="bench", baseline=[ids[0]], candidate=[ids[1]])
    wf.add_comparison(store, inv["id"], [ids[0]], [ids[1]])
    inv = services.investigation(store, inv["id"])
    t = time.perf_counter()
    services.inspect_text(store, inv)  # what the Inspect pane runs in its worker
    return time.perf_counter() - t


async def _press_stages(app, pilot, presses: int) -> list[float]:
    """Seconds from each stage key to the pane switch, as the user sees it."""
    stages = app.query_one("#stages")
    delays = []
    for i in range(presses):
        t = time.perf_counter()
        await pilot.press("1234"[i % 4])
        deadline = time.perf_counter() + 30
        while stages.active != ("frame", "compare", "inspect", "hypothesize")[i % 4]:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"stage key {i} never switched the pane (screen: {type(app.screen).__name__})")
            await asyncio.sleep(0.001)
        delays.append(time.perf_counter() - t)
        await asyncio.sleep(0.05)
    return sorted(delays)


async def _press_down(app, pilot, presses: int) -> list[float]:
    """Seconds from a cursor key in the run list to the highlight moving."""
    runs = app.query_one("#baseline-list")
    runs.focus()
    delays = []
    for i in range(presses):
        before = runs.highlighted
        key = "down" if (i // 10) % 2 == 0 else "up"
        t = time.perf_counter()
        await pilot.press(key)
        deadline = time.perf_counter() + 30
        while runs.highlighted == before and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)
        delays.append(time.perf_counter() - t)
        await asyncio.sleep(0.05)
    return sorted(delays)


async def key_latency(url: str) -> tuple[list[float], list[float], list[float], list[float]]:
    """Stage-key latency with the app idle (the anchor) and while a rerun runs in a worker."""
    from workbench.tui import services
    from workbench.tui.app import WorkbenchApp

    from workbench.tui.picker import InvestigationPicker

    app = WorkbenchApp(url)
    app.animation_level = "none"  # measure the app's work, not the tab underline's glide
    async with app.run_test(size=(80, 24)) as pilot:
        while not isinstance(app.screen, InvestigationPicker):  # the picker opens once the store is open
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press("enter")  # investigation 1, so the Compare pane has runs to move through
        while app.inv is None or not app.query_one("#baseline-list").option_count:
            await app.workers.wait_for_complete()
            await pilot.pause()
        idle = await _press_stages(app, pilot, 40)
        app.action_stage("compare")
        await pilot.pause()
        idle_down = await _press_down(app, pilot, 40)
        services.new_cpu_plan(app.store, "bench-latency", 10, 3)
        stage = app.query_one("#stage-verify")
        await pilot.press("5")
        await app.workers.wait_for_complete()
        await pilot.pause()
        stage.query_one("#plans").highlighted = 0
        await pilot.press("r")
        busy = await _press_stages(app, pilot, 40)
        app.action_stage("compare")
        await pilot.pause()
        busy_down = await _press_down(app, pilot, 40)
        stage.stop.set()
        await app.workers.wait_for_complete()
    return idle, busy, idle_down, busy_down


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1_000_000)
    args = ap.parse_args()
    from store import open_store
    from workbench.demo import load_demo

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url = f"sqlite:///{tmp / 'demo.sqlite'}"
        load_demo(open_store(url))
        frames = sorted(first_frame(url) for _ in range(3))
        print(f"first frame (demo store): median {frames[1]:.3f} s over 3 launches (target < 1 s)")
        idle, delays, idle_down, busy_down = asyncio.run(key_latency(url))

        def show(what: str, anchor: list[float], busy: list[float]) -> None:
            med = lambda xs: xs[len(xs) // 2]  # noqa: E731
            print(f"{what}: idle (anchor) median {1000 * med(anchor):.1f} ms, max {1000 * anchor[-1]:.1f} ms; "
                  f"while a rerun runs in a worker median {1000 * med(busy):.1f} ms, max {1000 * busy[-1]:.1f} ms "
                  f"(ratio {med(busy) / med(anchor):.2f}; target: none over 100 ms)")

        show("stage switch keys (1-4)", idle, delays)
        show("cursor keys in a run list", idle_down, busy_down)
        seconds = inspect_big(tmp, args.requests)
        print(f"Inspect on {args.requests:,}-request runs (baseline and candidate): {seconds:.2f} s (target < 2 s)")
        print(json.dumps({"first_frame_s": frames[1], "stage_key_max_ms": 1000 * delays[-1], "cursor_key_max_ms": 1000 * busy_down[-1],
                          "inspect_s": seconds}))


if __name__ == "__main__":
    main()
