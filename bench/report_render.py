"""Benchmark: the report of a 1,024-rank investigation, its size and how fast a browser draws it.

Builds the tests' 1,024-rank training investigation (tests/report/many_ranks.py: three runs a
side, 6 steps x 1,024 ranks each, one straggler), writes its HTML report from the store and
from its bundle (samples embedded), then in one run, REPEAT times each, headless Chromium
(Debian's) on:

  (a) the anchor: an empty page (the browser's own start and screenshot);
  (b) the report: the same, on the report;
  (c) the page's own load time: a copy of the report with a script (and a policy that lets it
      run) writing ``loadEventEnd - navigationStart`` into the DOM (``--dump-dom``): parse,
      style, layout and the inline SVG, without the browser's start.

Prints the sizes, each median, (b) - (a) and (c); the issue's bar is (c) and (b) - (a) under 2 s
(and the size under 2 MB, which tests/report/test_many_ranks.py asserts). Say the load average
beside the numbers.

    .venv/bin/python bench/report_render.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

TIMING = (
    "<script>addEventListener('load',()=>setTimeout(()=>{const t=performance.timing;"
    "document.body.setAttribute('data-load-ms',t.loadEventEnd-t.navigationStart)},0))</script>"
)


def _chromium(browser: str, page: Path, folder: Path, *extra: str) -> tuple[float, str]:
    from tests.report.browser import FLAGS

    started = time.perf_counter()
    out = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )
    return time.perf_counter() - started, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()

    from store import open_store
    from tests.report.browser import chromium
    from tests.report.many_ranks import many_rank_investigation
    from workbench.bundle.export import write_bundle
    from workbench.investigations.bundling import export_investigation
    from workbench.report.gather import bundle_report, investigation_report
    from workbench.report.render import write_report

    browser = chromium()
    if browser is None:
        sys.exit("no chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = open_store(f"sqlite:///{folder / 'wb.sqlite'}")
        inv = many_rank_investigation(store, folder)
        started = time.perf_counter()
        from_store = write_report(investigation_report(store, inv), folder / "store.html", "html")
        store_s = time.perf_counter() - started
        bundle = write_bundle(export_investigation(store, inv, embed_samples=True), folder / "ranks.bundle.json")
        started = time.perf_counter()
        report = write_report(bundle_report(bundle), folder / "report.html", "html")
        bundle_s = time.perf_counter() - started
        anchor = folder / "anchor.html"
        anchor.write_text("<!DOCTYPE html><title>anchor</title><p>anchor</p>", encoding="utf-8")
        timed = folder / "timed.html"
        text = report.read_text(encoding="utf-8")
        text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text).replace(
            "</body>", TIMING + "</body>"
        )
        timed.write_text(text, encoding="utf-8")

        shots: dict[str, list[float]] = {"anchor": [], "report": []}
        loads: list[float] = []
        for _ in range(a.repeat):
            for name, page in (("anchor", anchor), ("report", report)):
                seconds, _ = _chromium(
                    browser, page, folder, f"--screenshot={folder / (name + '.png')}", "--window-size=1200,3000"
                )
                shots[name].append(seconds)
            _, dom = _chromium(browser, timed, folder, "--dump-dom", "--virtual-time-budget=10000")
            found = re.search(r'data-load-ms="(\d+)"', dom)
            if found:
                loads.append(int(found.group(1)) / 1000)
        med = {k: statistics.median(v) for k, v in shots.items()}
        print(f"load average: {os.getloadavg()[0]:.2f}")
        print(
            f"report: {report.stat().st_size:,} bytes from the bundle ({bundle.stat().st_size:,}-byte bundle), "
            f"{from_store.stat().st_size:,} bytes from the store"
        )
        print(
            f"write the report: {bundle_s:.2f} s from the bundle (verify --recompute included), "
            f"{store_s:.2f} s from the store"
        )
        print(f"(a) chromium, empty page:  {med['anchor']:.2f} s (median of {a.repeat})")
        print(f"(b) chromium, the report:  {med['report']:.2f} s; (b) - (a) = {med['report'] - med['anchor']:.2f} s")
        if loads:
            print(f"(c) the page's own load:   {statistics.median(loads):.3f} s (navigationStart to loadEventEnd)")
        else:
            print("(c) the page's own load:   not read (no data-load-ms in the DOM)")


if __name__ == "__main__":
    main()
