"""Inspect: follow the delta into phases, windows and operations.

- distributions: per phase (and the primary's per-item measure), quantiles of the
  requests or steps pooled over a side's runs. Descriptive only: items inside a run are
  not independent samples, so no interval is drawn from them.
- over time: each run cut into equal windows (by request order, step, or job start),
  the mean per window averaged over a side's runs, to see when a change appears.
- operations: where the runs carry an ``operations`` table, the time per step of each
  operation, baseline against candidate, the ones that moved most first.
- findings: every trace diagnostic of each side's runs, and for training pairs the
  operations by shape and memory pressure (``workbench.training.pair_findings``).
- steps: with ``--steps steady``, the startup and checkpoint steps each run left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Sequence

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from lenses.base import Lens, column, finite
from store.records import RunRecord
from workbench.vocabulary import jsonable
from workbench.compare.model import Comparison
from workbench.compare.results import Result
from workbench.training import pair_findings as pf
from workbench.training import ranks as rk
from workbench.training.op_rates import Reduced, reduce_loaded
from workbench.vocabulary import FindingStatus, from_jsonable

QUANTILES = {"p5": 0.05, "p25": 0.25, "p50": 0.5, "p75": 0.75, "p95": 0.95, "p99": 0.99}


class Summary(Result, frozen=True, kw_only=True):
    """Items pooled over a side's runs: count, mean and quantiles (descriptive only)."""

    n: int
    mean: float | None
    p5: float | None
    p25: float | None
    p50: float | None
    p75: float | None
    p95: float | None
    p99: float | None
    # "file": no items on this side; the figures are those the runs' files state (the mean of
    # their stated figures over runs), never derived one from another.
    source: str | UnsetType = UNSET


class Distribution(Result, frozen=True, kw_only=True):
    name: str
    unit: str
    pooled: bool
    baseline: Summary
    candidate: Summary


class WindowSeries(Result, frozen=True, kw_only=True):
    """One measure's window means (averaged over a side's runs), window by window."""

    name: str
    unit: str
    baseline: tuple[float | None, ...]
    candidate: tuple[float | None, ...]


class OverTime(Result, frozen=True, kw_only=True):
    windows: int
    by: str  # what orders the items: request order, step, job start time
    metrics: tuple[WindowSeries, ...]
    note: str | UnsetType = UNSET  # why there are no metrics


class Operation(Result, frozen=True, kw_only=True):
    name: str
    kind: str
    baseline_ms_per_step: float
    candidate_ms_per_step: float
    delta_ms: float


class Finding(Result, frozen=True, kw_only=True):
    """A trace diagnostic (input stall, host submission, straggler, clocks, forward-only,
    memory, shapes, host time) with its evidence: ``side`` is ``baseline``, ``candidate``
    or ``pair`` (a finding about the two sides together); ``run`` names the run of a side's."""

    check: str
    side: str
    run: int | str | None
    status: FindingStatus
    summary: str
    evidence: dict[str, object]
    caveat: str = ""
    hypothesis: str = ""  # what to test before calling the observation a cause


class StepRestriction(Result, frozen=True, kw_only=True):
    """``--steps steady``: the steps each run left out, by kind (startup, checkpoint)."""

    kept: str
    excluded: tuple[dict[str, object], ...]  # {"run": ref, "steps": {step: kind}}


class RankMoved(Result, frozen=True, kw_only=True):
    """One rank's offset from its run's median rank (ms), in the measure where it moved most."""

    rank: int
    measure: str
    baseline_offset_ms: float
    candidate_offset_ms: float
    moved_ms: float


class Ranks(Result, frozen=True, kw_only=True):
    """Multi-rank pairs: the ranks whose offset from the median rank moved most (``top`` of ``shared``)."""

    shared: int  # ranks present on both sides
    moved: tuple[RankMoved, ...]


class InspectResult(msgspec.Struct, frozen=True, kw_only=True):
    """``wb inspect``: the comparison and, for a comparable pair, the per-phase detail."""

    comparison: Comparison
    distributions: tuple[Distribution, ...] = ()
    over_time: OverTime | None = None  # None: not computed (a refused pair), written as {}
    operations: tuple[Operation, ...] | None = None  # None: the runs carry no operations table
    findings: tuple[Finding, ...] = ()
    steps: StepRestriction | None = None
    ranks: Ranks | None = None  # None: not a multi-rank pair

    def to_json(self) -> dict[str, object]:
        out = {
            "comparison": self.comparison.to_json(),
            "distributions": [msgspec.to_builtins(d) for d in self.distributions],
            "over_time": msgspec.to_builtins(self.over_time) if self.over_time is not None else {},
            "operations": None if self.operations is None else [msgspec.to_builtins(o) for o in self.operations],
        }
        if self.findings:
            out["findings"] = [msgspec.to_builtins(f) for f in self.findings]
        if self.steps is not None:
            out["steps"] = msgspec.to_builtins(self.steps)
        if self.ranks is not None:
            out["ranks"] = msgspec.to_builtins(self.ranks)
        return jsonable(out)

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> "InspectResult":
        """``wb inspect --json``'s document typed again (what a server answered): nulls with
        their reason beside them are the nan or ±inf they were, so it draws as the result did."""
        raw = from_jsonable(dict(doc))
        if not isinstance(raw.get("comparison"), Mapping):
            raise msgspec.ValidationError("Expected `object` - at `$.comparison`")

        def typed(key: str, kind: object) -> object:
            return msgspec.convert(raw[key], kind) if raw.get(key) else None

        return cls(
            comparison=Comparison.from_json(raw["comparison"]),
            distributions=msgspec.convert(raw.get("distributions") or [], tuple[Distribution, ...]),
            over_time=typed("over_time", OverTime),  # type: ignore[arg-type]
            operations=None
            if raw.get("operations") is None
            else msgspec.convert(raw["operations"], tuple[Operation, ...]),
            findings=msgspec.convert(raw.get("findings") or [], tuple[Finding, ...]),
            steps=typed("steps", StepRestriction),  # type: ignore[arg-type]
            ranks=typed("ranks", Ranks),  # type: ignore[arg-type]
        )


def describe(values: np.ndarray) -> Summary:
    v = finite(values)
    if not v.size:
        return msgspec.convert({"n": 0, "mean": math.nan, **{k: math.nan for k in QUANTILES}}, Summary)
    qs = np.quantile(v, list(QUANTILES.values()))
    return msgspec.convert(
        {"n": int(v.size), "mean": float(v.mean()), **{k: float(q) for k, q in zip(QUANTILES, qs)}}, Summary
    )


def series(lens: Lens, run: RunRecord) -> dict[str, np.ndarray]:
    """Per-item values in time order: the primary's per-item measure first, then phases."""
    return lens.item_series(run)


def _units(lens: Lens) -> dict[str, str]:
    units = {p.name: p.unit for p in lens.phases}
    units.update({lens.item_measure.name: lens.item_measure.unit} if lens.item_measure else {})
    return units


def distributions(lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord]) -> list[Distribution]:
    sb = [series(lens, r) for r in base]
    sc = [series(lens, r) for r in cand]
    names = list(dict.fromkeys(k for s in sb + sc for k in s))
    units = _units(lens)
    out = []
    for name in names:
        pool_b = np.concatenate([s[name] for s in sb if name in s] or [np.empty(0)])
        pool_c = np.concatenate([s[name] for s in sc if name in s] or [np.empty(0)])
        b, c = (_or_stated(lens, runs, name, describe(pool)) for runs, pool in ((base, pool_b), (cand, pool_c)))
        out.append(Distribution(name=name, unit=units.get(name, ""), pooled=True, baseline=b, candidate=c))
    return out


def _or_stated(lens: Lens, runs: Sequence[RunRecord], name: str, pooled: Summary) -> Summary:
    """The pooled items, or, where a side has none, the statistics its files state (each the mean
    of the runs' stated figure; one no run states stays unknown)."""
    if pooled.n or not runs:
        return pooled
    stated = [lens.stated_statistics(r, name) for r in runs]
    if not all(stated):
        return pooled

    def figure(k: str) -> float:
        return float(np.mean([s[k] for s in stated])) if all(k in s for s in stated) else math.nan

    figures: dict[str, object] = {"n": 0, "mean": figure("mean"), **{k: figure(k) for k in QUANTILES}, "source": "file"}
    return msgspec.convert(figures, Summary)


def _window_means(values: np.ndarray, k: int) -> list[float]:
    if values.size < k:
        return [math.nan] * k
    return [float(finite(c).mean()) if finite(c).size else math.nan for c in np.array_split(values, k)]


def over_time(lens: Lens, base: Sequence[RunRecord], cand: Sequence[RunRecord], windows: int) -> OverTime:
    sb = [series(lens, r) for r in base]
    sc = [series(lens, r) for r in cand]
    names = list(dict.fromkeys(k for s in sb + sc for k in s))
    units = _units(lens)
    metrics = []
    for name in names:
        side = {}
        for label, ss in (("baseline", sb), ("candidate", sc)):
            rows = (
                np.array([_window_means(s[name], windows) for s in ss if name in s]) if ss else np.empty((0, windows))
            )
            with np.errstate(all="ignore"):
                side[label] = (
                    [float(np.nanmean(col)) if np.isfinite(col).any() else math.nan for col in rows.T]
                    if rows.size
                    else [math.nan] * windows
                )
        if any(math.isfinite(v) for v in side["baseline"] + side["candidate"]):
            metrics.append(
                WindowSeries(
                    name=name,
                    unit=units.get(name, ""),
                    baseline=tuple(side["baseline"]),
                    candidate=tuple(side["candidate"]),
                )
            )
    order = lens.item_order
    note: str | UnsetType = UNSET
    if not metrics:
        fewest = min((len(v) for s in sb + sc for v in s.values()), default=0)
        note = f"too few items per run for {windows} windows (the shortest run has {fewest})"
    return OverTime(windows=windows, by=order, metrics=tuple(metrics), note=note)


def operations(
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    top: int,
    reduced: tuple[Sequence[Reduced], Sequence[Reduced]] | None = None,
) -> list[Operation] | None:
    """The operations that moved most, per step (``reduced``: each run's operations table reduced
    already, ``workbench.training.op_rates``)."""
    rb, rc = reduced or ([reduce_loaded(r) for r in base], [reduce_loaded(r) for r in cand])
    ob = [r.operations for r in rb if r.operations is not None]
    oc = [r.operations for r in rc if r.operations is not None]
    if not ob or not oc:
        return None
    names = set().union(*ob, *oc)
    rows = []
    for name in names:
        kind = next((o[name][0] for o in ob + oc if name in o), "")
        b = float(np.mean([o.get(name, (kind, 0.0))[1] for o in ob]))
        c = float(np.mean([o.get(name, (kind, 0.0))[1] for o in oc]))
        rows.append(Operation(name=name, kind=kind, baseline_ms_per_step=b, candidate_ms_per_step=c, delta_ms=c - b))
    rows.sort(key=lambda r: (-abs(r.delta_ms), r.name))
    return rows[:top]


def _ref(run: RunRecord) -> int | str:
    return run.id if run.id is not None else run.label


def run_findings(side: str, runs: Sequence[RunRecord]) -> list[Finding]:
    """Each run's own diagnostics as the importer recorded them (``meta["diagnostics"]``)."""
    out = []
    for run in runs:
        for f in run.meta.get("diagnostics") or ():
            if isinstance(f, dict) and {"check", "status", "summary"} <= f.keys():
                out.append(
                    Finding(
                        check=str(f["check"]),
                        side=side,
                        run=_ref(run),
                        status=str(f["status"]),
                        summary=str(f["summary"]),
                        evidence=dict(f.get("evidence") or {}),
                        caveat=str(f.get("caveat") or ""),
                        hypothesis=str(f.get("hypothesis") or ""),
                    )
                )
    return out


def pair_findings(
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    reduced: tuple[Sequence[Reduced], Sequence[Reduced]] | None = None,
) -> list[Finding]:
    """Training pair findings: operations by shape and memory pressure."""
    found = [*pf.shapes(base, cand, reduced=reduced), pf.memory(base, cand)]
    return [
        Finding(
            check=f.check,
            side="pair",
            run=None,
            status=f.status,
            summary=f.summary,
            evidence=dict(f.evidence),
            caveat=f.caveat,
        )
        for f in found
        if f is not None
    ]


def ranks_moved(base: Sequence[RunRecord], cand: Sequence[RunRecord], top: int) -> Ranks | None:
    """For pairs whose runs all have two or more ranks (a ``rank`` column: training jobs): the ranks that moved most
    against their run's median rank (``workbench.training.ranks``)."""

    def multi(run: RunRecord) -> bool:
        r = column(run, "rank")
        return r is not None and len(np.unique(finite(r))) > 1

    if not base or not cand or not all(multi(r) for r in (*base, *cand)):
        return None
    moves, shared = rk.ranks_moved([r.samples for r in base], [r.samples for r in cand], top)
    return Ranks(
        shared=shared,
        moved=tuple(
            RankMoved(
                rank=m.rank,
                measure=m.measure,
                baseline_offset_ms=m.baseline_offset_ms,
                candidate_offset_ms=m.candidate_offset_ms,
                moved_ms=m.moved_ms,
            )
            for m in moves
        ),
    )


def build_inspect(
    comparison: Comparison,
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    *,
    windows: int = 8,
    top: int = 10,
    steps: StepRestriction | None = None,
    top_ranks: int = 8,
    reduced: tuple[Sequence[Reduced], Sequence[Reduced]] | None = None,
) -> InspectResult:
    """``reduced``: the runs' operations and op_shapes tables reduced already (runs loaded without
    them, ``workbench.training.op_rates.reduce_stored``); by default, reduced from the runs."""
    own = (*run_findings("baseline", base), *run_findings("candidate", cand))
    if not comparison.comparable:
        return InspectResult(comparison=comparison, findings=own, steps=steps)
    lens = comparison.lens
    reduced = reduced or ([reduce_loaded(r) for r in base], [reduce_loaded(r) for r in cand])
    found = operations(base, cand, top, reduced)
    pair = pair_findings(base, cand, reduced)  # from op_shapes and memory tables, where the runs carry them
    return InspectResult(
        comparison=comparison,
        distributions=tuple(distributions(lens, base, cand)),
        over_time=over_time(lens, base, cand, windows),
        operations=None if found is None else tuple(found),
        findings=(*own, *pair),
        steps=steps,
        ranks=ranks_moved(base, cand, top_ranks),
    )
