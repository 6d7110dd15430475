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


async def key_latency(url: str) -> list[float]:
    from workbench.tui import services
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp(url)
    delays = []
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("escape")
        plan_id = services.new_cpu_plan(app.store, "bench-latency", 10, 3)
        stage = app.query_one("#stage-verify")
        await pilot.press("5")
        await app.workers.wait_for_complete()
        await pilot.pause()
        stage.query_one("#plans").highlighted = 0
        await pilot.press("r")
        stages = app.query_one("#stages")
        for i in range(60):
            key = "1234" [i % 4]
            t = time.perf_counter()
            await pilot.press(key)
            while stages.active != ("frame", "compare", "inspect", "hypothesize")[i % 4]:
                await asyncio.sleep(0.001)
            delays.append(time.perf_counter() - t)
            await asyncio.sleep(0.05)
        stage.stop.set()
        await app.workers.wait_for_complete()
    return delays


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
        delays = asyncio.run(key_latency(url))
        delays.sort()
        print(f"stage keys while a rerun runs in a worker: median {1000 * delays[len(delays) // 2]:.1f} ms, "
              f"max {1000 * delays[-1]:.1f} ms over {len(delays)} presses (target: none over 100 ms)")
        seconds = inspect_big(tmp, args.requests)
        print(f"Inspect on {args.requests:,}-request runs (baseline and candidate): {seconds:.2f} s (target < 2 s)")
        print(json.dumps({"first_frame_s": frames[1], "key_max_ms": 1000 * delays[-1], "inspect_s": seconds}))


if __name__ == "__main__":
    main()
