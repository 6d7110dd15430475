"""When a slow step becomes an incident: the latency rule and the incident budget.

Both are plain objects over timestamps the caller passes in, so tests drive them with
an injected clock and no sleeps.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass

from workbench.recorder.capture import SEQ_UNIT


@dataclass(frozen=True)
class TriggerRule:
    """A step (or request) is slow when it takes longer than ``slower_than_ms`` or longer
    than ``k_median`` times the median of the last ``history`` ones.

    The median is refreshed every ``refresh_every`` spans (not on every span: sorting is
    the expensive part) and only once ``min_history`` durations are known, so the first
    spans of a run (warm-up, compilation) never fire the relative rule.

    ``at_least_ms`` is a floor under either rule: a span shorter than that never fires,
    so tiny steps on a noisy machine (where 3x a 2 ms median is ordinary jitter) don't
    spend the incident budget.
    """

    slower_than_ms: float | None = None
    k_median: float | None = 3.0
    at_least_ms: float = 0.0
    history: int = 128
    min_history: int = 32
    refresh_every: int = 256
    cooldown_s: float = 60.0
    max_incidents: int = 5
    max_concurrent: int = 1

    def __post_init__(self) -> None:
        if self.slower_than_ms is None and self.k_median is None:
            raise ValueError("a trigger needs slower_than_ms or k_median")
        if self.k_median is not None and self.k_median <= 1.0:
            raise ValueError("k_median must be greater than 1")
        if self.refresh_every < 1 or self.refresh_every & (self.refresh_every - 1):
            raise ValueError("refresh_every must be a power of two")
        if self.min_history < 1 or self.history < self.min_history:
            raise ValueError("need 1 <= min_history <= history")
        if self.at_least_ms < 0:
            raise ValueError("at_least_ms must be non-negative")
        if self.max_incidents < 0 or self.max_concurrent < 1 or self.cooldown_s < 0:
            raise ValueError("incident budget must be non-negative, max_concurrent >= 1")

    def to_json(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {
            "history": self.history,
            "min_history": self.min_history,
            "cooldown_s": self.cooldown_s,
            "max_incidents": self.max_incidents,
            "max_concurrent": self.max_concurrent,
        }
        if self.slower_than_ms is not None:
            out["slower_than_ms"] = self.slower_than_ms
        if self.k_median is not None:
            out["k_median"] = self.k_median
        if self.at_least_ms:
            out["at_least_ms"] = self.at_least_ms
        return out


@dataclass(frozen=True)
class HangRule:
    """When an open step or request is a hang (the watchdog's rule, unless ``hang_after_s``
    fixes the threshold): open longer than ``k`` times the median of the recent spans of its
    kind (the trigger's median, refreshed every ``refresh_every`` spans), and never less than
    ``floor_s``. Before a median is known (fewer than ``min_history`` spans, or no trigger
    watching that kind) the floor alone applies.

    k = 10 and 60 s: a step ten times its usual length is not jitter, and a minute is longer
    than a checkpoint or an evaluation pass usually keeps a step open, yet well inside the
    NCCL watchdog's 10-minute default, so the snapshot is written while the job still lives.
    """

    k: float = 10.0
    floor_s: float = 60.0

    def threshold_s(self, median_ns: float | None) -> float:
        if median_ns is None or not median_ns > 0:
            return self.floor_s
        return max(self.floor_s, self.k * median_ns / 1e9)

    def describe(self, median_ns: float | None) -> str:
        base = f"open longer than {self.k:g}x the median of the recent spans, at least {self.floor_s:g} s"
        if median_ns is None:
            return base
        return f"{base} (median {median_ns / 1e6:.3g} ms)"


# Longer than any span (292 years in ns): the int threshold of a rule that never fires.
NEVER_NS = 1 << 63


class LatencyTrigger:
    """Holds the current threshold; the recorder's hot path compares against it."""

    def __init__(self, rule: TriggerRule) -> None:
        self.rule = rule
        self.recent: deque[float] = deque(maxlen=rule.history)
        # Bound method: one C call per observed span.
        self.observe = self.recent.append
        self.refresh_mask = rule.refresh_every - 1
        self.refresh_seq_mask = self.refresh_mask * SEQ_UNIT  # the same, on span row codes
        self.absolute_ns = rule.slower_than_ms * 1e6 if rule.slower_than_ms is not None else math.inf
        self.floor_ns = rule.at_least_ms * 1e6
        self.median_ns: float | None = None
        self._set(max(self.floor_ns, self.absolute_ns))

    def _set(self, threshold_ns: float) -> None:
        """The threshold as reported (``threshold_ns``) and as the hot path compares it
        (``fires_above_ns``, an int: a duration in integer ns, the clock's contract, exceeds
        x exactly when it exceeds floor(x), and int against int is the cheaper comparison)."""
        self.threshold_ns = threshold_ns
        self.fires_above_ns = NEVER_NS if threshold_ns >= NEVER_NS else math.floor(threshold_ns)

    def refresh(self) -> None:
        """Recompute the threshold from the recent durations."""
        rule = self.rule
        if rule.k_median is None or len(self.recent) < rule.min_history:
            return
        ordered = sorted(self.recent)
        n = len(ordered)
        mid = n // 2
        median = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        self.median_ns = median
        self._set(max(self.floor_ns, min(self.absolute_ns, rule.k_median * median)))

    def disarm(self) -> None:
        """Never fire again (the incident budget is spent); spans still feed the median."""
        self.absolute_ns = self.floor_ns = math.inf
        self._set(math.inf)

    def explain(self, duration_ns: float) -> dict[str, float | str]:
        """Why a duration crossed the threshold, for the snapshot."""
        out: dict[str, float | str] = {
            "duration_ms": duration_ns / 1e6,
            "threshold_ms": self.threshold_ns / 1e6,
        }
        if self.median_ns is not None:
            out["median_ms"] = self.median_ns / 1e6
        relative = (
            self.median_ns is not None
            and self.rule.k_median is not None
            and (self.rule.k_median * self.median_ns <= self.absolute_ns)
        )
        if relative:
            out["rule"] = f"slower than {self.rule.k_median:g}x the median of the last {len(self.recent)}"
        else:
            out["rule"] = f"slower than {self.rule.slower_than_ms:g} ms"
        if self.floor_ns and self.threshold_ns == self.floor_ns:
            out["rule"] += f" (and at least {self.rule.at_least_ms:g} ms)"
        return out

    def reset(self) -> None:
        self.recent.clear()
        self.median_ns = None
        self._set(max(self.floor_ns, self.absolute_ns))


class IncidentBudget:
    """Cooldown, a cap on incidents in flight, and a cap on incidents in total.

    ``admit`` answers ``None`` (go ahead) or the reason the incident is suppressed:
    ``"cooldown"``, ``"busy"`` (``max_concurrent`` snapshots still being written) or
    ``"budget"`` (``max_incidents`` already taken). Suppressions are counted.
    """

    def __init__(self, rule: TriggerRule) -> None:
        self.cooldown_ns = rule.cooldown_s * 1e9
        self.max_total = rule.max_incidents
        self.max_concurrent = rule.max_concurrent
        self.taken = 0
        self.in_flight = 0
        self.last_ns: float | None = None
        self.suppressed = {"cooldown": 0, "busy": 0, "budget": 0}
        # admit() runs on a recording thread, finished() on the snapshot writer.
        self._lock = threading.Lock()

    def admit(self, now_ns: float) -> str | None:
        with self._lock:
            return self._admit(now_ns)

    def _admit(self, now_ns: float) -> str | None:
        reason = None
        if self.taken >= self.max_total:
            reason = "budget"
        elif self.last_ns is not None and now_ns - self.last_ns < self.cooldown_ns:
            reason = "cooldown"
        elif self.in_flight >= self.max_concurrent:
            reason = "busy"
        if reason is not None:
            self.suppressed[reason] += 1
            return reason
        self.taken += 1
        self.in_flight += 1
        self.last_ns = now_ns
        return None

    def finished(self) -> None:
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def reset(self) -> None:
        self._lock = threading.Lock()
        self.taken = 0
        self.in_flight = 0
        self.last_ns = None
        self.suppressed = {"cooldown": 0, "busy": 0, "budget": 0}
