"""Parsers that must stay linear in their input (issue 28 item 5).

Each case is timed at n and at 10n in the same process and the *ratio* is checked (never
the wall time): linear work gives about 10, the quadratic behaviour these replace gave
about 70-100. The bound (40) leaves room for a noisy shared machine, and the times are the
thread's CPU time (``time.thread_time``): other processes (pytest's other worker) do not
stretch them as they stretch the wall clock.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

from workbench.diagnostics.logs import parse_file
from workbench.formats import prom_text

RATIO_BOUND = 40.0


def _ratio(make, n: int, rounds: int = 5) -> float:
    """Time at 10n over time at n, each the best of ``rounds`` runs taken in turns (so a
    burst of load on a shared machine slows both sides, not one)."""
    small, large = make(n), make(10 * n)
    small()  # warm caches and regex compilation before either timing
    best_small = best_large = float("inf")
    for _ in range(rounds):
        for fn, which in ((small, "s"), (large, "l")):
            t = time.thread_time()
            fn()
            elapsed = time.thread_time() - t
            if which == "s":
                best_small = min(best_small, elapsed)
            else:
                best_large = min(best_large, elapsed)
    return best_large / max(best_small, 1e-6)


def test_untyped_prometheus_series_parse_and_diff_linearly():
    def make(n: int):
        text = "".join(f'untyped_metric_{i}{{pod="p"}} {i}\n' for i in range(n)).encode()
        counters = "".join(f"requests_{i}_total {i}\n" for i in range(n)).encode()

        def work():
            for body in (text, counters):
                scrape = prom_text.parse(io.BytesIO(body))
                prom_text.difference(scrape, scrape)

        return work

    assert _ratio(make, 2000) < RATIO_BOUND


def _log_case(tmp_path: Path, fragment: str):
    """A kernel log of long lines made of n hostile fragments (1,000 fit in the 64 KiB a
    line is cut to): backtracking over repeated fragments is quadratic in their count."""

    def make(n: int):
        path = tmp_path / f"kern-{n}.log"
        path.write_text(
            ("[ 12.345678] " + fragment * n + "\n") * 20
        )  # 20 lines: the small case is not lost in timer noise
        return lambda: parse_file(path)

    return make


def _fits(fragment: str) -> int:
    """n such that the 10n-fragment line still fits the 64 KiB a line is cut to."""
    return 60_000 // (10 * len(fragment))


def test_repeated_segfault_fragments_scan_linearly(tmp_path):
    fragment = "python[123]: segfault at 7f ip 00007f sp 00007f error 4 "
    assert _ratio(_log_case(tmp_path, fragment), _fits(fragment)) < RATIO_BOUND


def test_other_repeated_kernel_fragments_scan_linearly(tmp_path):
    for i, fragment in enumerate(
        (
            "Out of memory: Killed process 12 (python ",
            "NVRM: GPU 0000:3b:00.0: GPU has not fallen off the bus ",
            "oom_reaper: reaped process 7 (x ",
            "python invoked oom-killer: ",
        )
    ):
        folder = tmp_path / str(i)
        folder.mkdir()
        assert _ratio(_log_case(folder, fragment), _fits(fragment)) < RATIO_BOUND, fragment
