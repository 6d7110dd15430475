"""The hang watchdog: a step or request that stays open too long is snapshotted while it is
still open, and again when it ends.

Runs on its own thread (``wb-recorder-watchdog``), never the workload's: the hot path only
leaves the span it opened in ``rec._opened`` (a slot store it did before, of the span
instead of its number). Each check reads that span's start, compares how long it has been
open with the threshold, and looks for its end row in the span ring (``rowsearch``). It
wakes every quarter of the threshold (between 20 ms and 1 s): a hang is seen within
``threshold + period``, and at the default (at least 60 s) the thread wakes once a second.

``check(now_ns)`` is the whole of one tick, so tests drive it on their own clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.recorder.rowsearch import EndSearch
from workbench.recorder.trigger import HangRule

MIN_PERIOD_S = 0.02
MAX_PERIOD_S = 1.0


@dataclass
class Hang:
    """A span reported as hung, until its end row appears."""

    span: Any
    start_ns: float
    search: EndSearch
    reported_ns: float
    threshold_ns: float


class Watchdog:
    """Watches the most recently opened span (``opened.span``) of one recorder.

    ``median_ns(kind)``: the recent median of that span kind (the trigger's), or ``None``;
    ``on_hang(hang)`` and ``on_end(hang, end_ns)`` take the snapshots (the recorder's)."""

    def __init__(
        self,
        *,
        fixed_s: float | None,
        rule: HangRule,
        median_ns: Callable[[int], float | None],
        opened: Any,
        ring: Any,
        clock_ns: Callable[[], float],
        on_hang: Callable[[Hang], None],
        on_end: Callable[[Hang, float], None],
        on_fault: Callable[[BaseException, str], None],
        max_hangs: int,
        thread_time: Callable[[], float] = time.thread_time,
    ) -> None:
        self.fixed_ns = None if fixed_s is None else fixed_s * 1e9
        self.rule = rule
        self.median_ns = median_ns
        self.opened = opened
        self.ring = ring
        self.clock_ns = clock_ns
        self.on_hang = on_hang
        self.on_end = on_end
        self.on_fault = on_fault
        self.max_hangs = max_hangs
        self.thread_time = thread_time
        self.hung: Hang | None = None
        self.hangs = 0
        self.suppressed = 0
        self.checks = 0
        self.cpu_s = 0.0
        self.status = "not started"
        self._settled: Any = None  # the latest span known not to be hung (ended, or over budget)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def threshold_ns(self, kind: int) -> float:
        if self.fixed_ns is not None:
            return self.fixed_ns
        return self.rule.threshold_s(self.median_ns(kind)) * 1e9

    def describe(self, kind: int) -> str:
        if self.fixed_ns is not None:
            return f"open longer than {self.fixed_ns / 1e9:g} s (hang_after_s)"
        return self.rule.describe(self.median_ns(kind))

    def period_s(self) -> float:
        span = self.opened.span
        quarter = self.threshold_ns(getattr(span, "_kind", 0)) / 4e9
        return min(MAX_PERIOD_S, max(MIN_PERIOD_S, quarter))

    def check(self, now_ns: float) -> None:
        """One tick: follow a reported hang to its end; else report the open span if it is one."""
        self.checks += 1
        hung = self.hung
        if hung is not None:
            end = hung.search.find(self.ring)
            if end is not None:
                self.hung = None
                self._settled = hung.span
                self.on_end(hung, end)
            return  # one hang at a time: while it lasts, nothing newer is reported
        span = self.opened.span
        start = getattr(span, "_start", None)
        if start is None or span is self._settled:
            return
        threshold = self.threshold_ns(span._kind)
        if now_ns - start <= threshold:
            return
        search = EndSearch(float(span._seq + span._kind), float(start))
        if search.find(self.ring) is not None:
            self._settled = span  # it ended; the loop is between spans
            return
        self._settled = span
        if self.hangs >= self.max_hangs:
            self.suppressed += 1
            return
        self.hangs += 1
        self.hung = Hang(span, float(start), search, now_ns, threshold)
        self.on_hang(self.hung)

    def start(self) -> None:
        self._stop.clear()
        self.status = "ok"
        self._thread = threading.Thread(target=self._run, name="wb-recorder-watchdog", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        cpu0 = self.thread_time()
        try:
            while not self._stop.wait(self.period_s()):
                try:
                    self.check(self.clock_ns())
                except Exception as exc:  # noqa: BLE001 - one bad check, counted
                    self.on_fault(exc, "watchdog")
                self.cpu_s = self.thread_time() - cpu0
        except Exception as exc:  # noqa: BLE001 - the watchdog dies quietly, counted
            self.status = "failed"
            self.on_fault(exc, "watchdog thread")

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout)
        if self.status == "ok":
            self.status = "stopped"

    def counters(self) -> dict[str, float | int | str]:
        span = self.opened.span
        return {
            "status": self.status,
            "rule": self.describe(getattr(span, "_kind", 0)),
            "threshold_s": round(self.threshold_ns(getattr(span, "_kind", 0)) / 1e9, 6),
            "hangs": self.hangs,
            "suppressed": self.suppressed,
            "checks": self.checks,
            "cpu_s": round(self.cpu_s, 6),
        }
