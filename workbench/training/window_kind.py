"""The observation window from the data: each kept step is steady, startup or checkpoint,
and the run's window is steady, startup, checkpointing or mixed, with the evidence.

Comparing a steady window with a startup or checkpointing one cannot isolate a kernel
regression, so the kind is a must-match dimension (measured, from here). Rules, on the
steps the window policy kept (warm-up and an incomplete last step are already out),
with step time = the step's mean over ranks:

- **checkpoint**: the host is inside a checkpoint-save range during the step (any rank);
  or the step is a step-time outlier (over ``ref + max(5 sigma, 25 % of ref)``) whose
  copy time rose with it (at least 10 % of its excess is extra copy time: state moving
  off the device), which is how a save without annotations shows.
- **startup**: with at least ``MIN_TREND_STEPS`` steps, the leading steps slower than
  ``ref + max(3 sigma, 10 % of ref)``, up to the first step that is not.
- **steady**: the rest; an unexplained outlier stays steady (named in the evidence: it is
  not taken out to flatter either side).

``ref`` and ``sigma`` are the median and the MAD-based spread of the second half of the
non-checkpoint steps (the part least affected by a start-up trend).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import numpy.typing as npt

from store.records import RunRecord
from workbench.vocabulary import JSON, JSONDoc

MIN_TREND_STEPS = 4
STARTUP_EXCESS = 0.10
OUTLIER_EXCESS = 0.25
COPY_SHARE_OF_EXCESS = 0.10
STEADY, STARTUP, CHECKPOINT = "steady", "startup", "checkpoint"


def _ref(values: np.ndarray) -> tuple[float, float]:
    late = values[len(values) // 2 :] if len(values) >= 2 else values
    ref = float(np.median(late))
    return ref, 1.4826 * float(np.median(np.abs(late - ref)))


def classify(
    numbers: Sequence[float],
    step_ms: npt.ArrayLike,
    checkpoint_ms: npt.ArrayLike,
    copy_ms: npt.ArrayLike,
    *,
    warmup_excluded: int,
) -> JSONDoc:
    """The window entries: ``kind``, ``step_kinds`` (non-steady steps by number) and ``kind_evidence``."""
    nums = [float(x) for x in numbers]
    t = np.asarray(step_ms, dtype=np.float64)
    ck = np.asarray(checkpoint_ms, dtype=np.float64)
    cp = np.asarray(copy_ms, dtype=np.float64)
    kinds = [STEADY] * len(nums)
    why: JSONDoc = {}  # step number -> why it is not steady (a part of the document, as the notes)
    notes: list[JSON] = []
    for i, value in enumerate(ck):
        if np.isfinite(value) and value > 0:
            kinds[i] = CHECKPOINT
            why[_key(nums[i])] = f"checkpoint save on the host for {value:.2f} ms"
    plain = np.array([i for i, k in enumerate(kinds) if k == STEADY and np.isfinite(t[i])], dtype=np.int64)
    ref = sigma = float("nan")
    if len(plain):
        ref, sigma = _ref(t[plain])
        _copy_outliers(plain, nums, t, cp, ref, sigma, kinds, why, notes)
        if len(plain) >= MIN_TREND_STEPS:
            slow = ref + max(3 * sigma, STARTUP_EXCESS * ref)
            for i in range(len(nums)):
                if kinds[i] == CHECKPOINT:
                    continue
                if not (np.isfinite(t[i]) and t[i] > slow):
                    break
                kinds[i] = STARTUP
                why[_key(nums[i])] = f"start-up trend: {t[i]:.2f} ms against a steady {ref:.2f} ms"
        else:
            notes.append(
                f"{len(plain)} step(s) outside checkpoints: too few (under {MIN_TREND_STEPS}) to test for a start-up "
                f"trend"
            )
    kind, reason = _window_kind(bool(nums), set(kinds), warmup_excluded, len(plain))
    evidence: JSONDoc = {"reason": reason, "steps": why, "reference_step_ms": ref, "spread_ms": sigma}
    if notes:
        evidence["notes"] = notes
    return {
        "kind": kind,
        "step_kinds": {_key(n): k for n, k in zip(nums, kinds) if k != STEADY},
        "kind_evidence": evidence,
    }


def _copy_outliers(
    plain: np.ndarray,
    nums: list[float],
    t: np.ndarray,
    cp: np.ndarray,
    ref: float,
    sigma: float,
    kinds: list[str],
    why: JSONDoc,
    notes: list[JSON],
) -> None:
    """Step-time outliers: a checkpoint where the extra time is copy time (checkpoint-like I/O), else a note."""
    copy_ref = float(np.nanmedian(cp[plain])) if np.isfinite(cp[plain]).any() else float("nan")
    outlier = ref + max(5 * sigma, OUTLIER_EXCESS * ref)
    for i in plain:
        if t[i] <= outlier:
            continue
        extra_copy = cp[i] - copy_ref
        if np.isfinite(extra_copy) and extra_copy >= COPY_SHARE_OF_EXCESS * (t[i] - ref):
            kinds[i] = CHECKPOINT
            why[_key(nums[i])] = (
                f"step-time outlier ({t[i]:.2f} ms against {ref:.2f} ms) with {extra_copy:.2f} ms more copy "
                "time (checkpoint-like I/O, no save annotation)"
            )
        else:
            notes.append(
                f"step {_key(nums[i])} is a step-time outlier ({t[i]:.2f} ms against {ref:.2f} ms) with no "
                f"checkpoint "
                "or copy activity: kept as steady"
            )


def _window_kind(has_steps: bool, present: set[str], warmup_excluded: int, plain: int) -> tuple[str, str]:
    """The window's kind from the kinds of its steps, and why."""
    if not has_steps:
        return "mixed", "no steps: the whole trace is one window of unknown kind"
    if present == {STEADY}:
        if warmup_excluded or plain >= MIN_TREND_STEPS:
            return (
                "steady",
                "every kept step is steady"
                + (f" ({warmup_excluded} warm-up step(s) excluded)" if warmup_excluded else ""),
            )
        return "mixed", "no warm-up excluded and too few steps to show there is no start-up trend"
    if present <= {STEADY, STARTUP}:
        return "startup", "a start-up trend in the kept steps"
    if present <= {STEADY, CHECKPOINT}:
        return "checkpointing", "checkpoint steps among the kept steps"
    return "mixed", "both start-up and checkpoint steps among the kept steps"


def _key(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def unsteady_steps(run: RunRecord) -> dict[str, str]:
    """The steps the classification found not steady, by number, with their kind (none when the
    run was not classified). Read from the run's window: the run's tables are not needed."""
    kinds = run.window.get("step_kinds")
    if not isinstance(kinds, dict) or "kind_evidence" not in run.window:
        return {}
    return {str(k): str(v) for k, v in kinds.items()}


def steady_rows(steps: npt.ArrayLike, unsteady: dict[str, str]) -> np.ndarray:
    """Which rows of a table with this ``step`` column belong to steady steps."""
    return ~np.isin(np.asarray(steps, dtype=np.float64), [float(k) for k in unsteady])


def steady_steps(run: RunRecord) -> tuple[RunRecord, dict[str, str]]:
    """The run restricted to its steady steps (tables filtered, window kind ``steady``),
    and the steps taken out with their kind. A run the classification has not seen is
    returned as it is, with nothing taken out."""
    out = unsteady_steps(run)
    if not out:
        return run, {}
    tables = {}
    for name, cols in run.tables.items():
        steps = cols.get("step")
        if steps is None:
            tables[name] = cols
            continue
        keep = steady_rows(steps, out)
        tables[name] = {k: np.asarray(v)[keep] for k, v in cols.items()}
    window = {**run.window, "kind": "steady", "restricted_to": "steady steps", "excluded_by_restriction": out}
    return dataclasses.replace(run, window=window, tables=tables), out
