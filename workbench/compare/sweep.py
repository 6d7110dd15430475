"""Compare two load sweeps at matched load: levels paired by requested rate (within a
stated tolerance) or by concurrency (exactly), every serving metric per matched level,
each side's saturation point, goodput at an SLO, and the latency–throughput curve.

A sweep is the set of runs sharing ``meta["sweep"]["id"]`` (see
``workbench.formats.load_sweep``). Each matched level is an ordinary comparison
(``workbench.compare.compare``): the same comparability table, effects and flags. One
run per level a side gives no uncertainty, and the comparison says so; repeated sweeps
(several runs at one load) give run-level intervals per level. The sweep summary
(figures over every level together) is never compared as a level.

Definitions (docs/compare.md):

- **Saturation** (no SLO): walking the levels by requested rate, the highest achieved
  rate while achieved/requested stays ≥ 0.95. With an SLO: the highest achieved rate
  while every SLO statistic of the level holds. Concurrency sweeps need an SLO.
- **Goodput** (DistServe): per level, completed requests meeting *every* per-request
  target (TTFT ≤ t, TPOT ≤ p ...) per second of the level's duration; only where the
  run has per-request rows. A request whose value is unknown does not count as meeting.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import msgspec
from msgspec import UNSET

from lenses import get_lens
from lenses.base import column
from lenses.inference import SERVING_METRICS, InferenceLens
from lenses.inference import _duration as inference_duration
from store.records import RunRecord
from store.run_meta import Load, Sweep
from workbench.compare import compare
from workbench.compare.effects import run_effect
from workbench.numbers import num, percent_change, qty
from workbench.compare.sweep_result import (
    Goodput,
    LevelFigures,
    LevelRef,
    MatchedLevel,
    Matching,
    MetricRow,
    Saturation,
    Side,
    SourcePair,
    SweepComparison,
    SweepEvidence,
    SweepObservation,
    Unmatched,
    ValuePair,
)
from workbench.errors import UsageError
from workbench.formats.load_sweep import load_text

DEFAULT_RATE_TOLERANCE = 0.05
SUSTAINED = 0.95  # achieved/requested at or above this: the load was served
LEVEL_METRICS = (
    "ttft_p50",
    "ttft_p95",
    "tpot_p50",
    "tpot_p95",
    "itl_p50",
    "itl_p95",
    "e2e_p95",
    "request_throughput",
    "output_throughput",
    "error_rate",
)
NOT_CAUSE = "observation, not cause"
_SLO_ITEM = re.compile(r"^\s*([a-z0-9_]+)\s*(?:=|<=|<)\s*([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*(ms|s|us|µs)?\s*$")
_UNIT_MS = {"ms": 1.0, "s": 1000.0, "us": 1e-3, "µs": 1e-3, None: 1.0}
# per-request column of each SLO metric's base (ttft_p95 -> every request's TTFT)
_REQUEST_COLUMN = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e": "e2e_ms"}


# ----------------------------------------------------------------------------- input


def parse_slo(text: str | None) -> dict[str, float]:
    """``"ttft_p95=500ms,tpot_p95=50ms"`` -> ``{"ttft_p95": 500.0, "tpot_p95": 50.0}`` (ms)."""

    if not text:
        return {}
    out: dict[str, float] = {}
    for item in text.split(","):
        m = _SLO_ITEM.match(item)
        if not m:
            raise UsageError(f"--slo {item.strip()!r}: expected METRIC=VALUE[ms|s], e.g. ttft_p95=500ms")
        name, value, unit = m.group(1), float(m.group(2)), m.group(3)
        spec = SERVING_METRICS.get(name)
        if spec is None or spec.unit != "ms" or name.split("_")[0] not in _REQUEST_COLUMN:
            names = ", ".join(n for n, s in SERVING_METRICS.items() if s.unit == "ms")
            raise UsageError(f"--slo {name!r}: not a latency metric (one of {names})")
        out[name] = value * _UNIT_MS[unit]
    return out


def sweep_of(run: RunRecord) -> Sweep | None:
    """The run's ``meta["sweep"]`` (typed), when it names a sweep."""
    sweep = run.typed_meta.sweep
    return sweep if sweep is not None and sweep.id else None


def find_sweep(run_metas: Iterable[tuple[int, Mapping[str, Any]]], ref: str) -> list[int] | None:
    """Run ids of the sweep named by id (``sw-…``) or label among ``run_metas`` ((id, meta)
    of the inference runs, ``Store.run_metas``); ``None`` when no sweep has that name. A
    label shared by several sweeps is an error naming their ids."""
    ref = str(ref).strip()
    found: dict[str, list[int]] = {}
    for run_id, meta in run_metas:
        sweep = meta.get("sweep")
        if isinstance(sweep, dict) and ref in (sweep.get("id"), sweep.get("label")):
            found.setdefault(str(sweep["id"]), []).append(run_id)
    if not found:
        return None
    if len(found) > 1:
        raise UsageError(f"sweep label {ref!r} names several sweeps ({', '.join(sorted(found))}); name one by id")
    return next(iter(found.values()))


# ----------------------------------------------------------------------------- levels


@dataclass
class Level:
    """The runs of one side at one load (several when the sweep was repeated); ``load``
    is the runs' ``meta["load"]`` keys that place a level."""

    load: Load
    runs: list[RunRecord] = field(default_factory=list)

    @property
    def requested_rate(self) -> float | None:
        return self.load.requested_rate

    @property
    def concurrency(self) -> float | None:
        return self.load.concurrency

    def achieved_rate(self, lens: InferenceLens) -> float:
        values = [(r.typed_meta.load or Load()).achieved_rate for r in self.runs]
        known = [v for v in values if v is not None and math.isfinite(v)]
        if len(known) == len(self.runs):
            return sum(known) / len(known)
        thr = [lens.metric_value(r, "request_throughput")[0] for r in self.runs]
        thr = [v for v in thr if math.isfinite(v)]
        return sum(thr) / len(thr) if len(thr) == len(self.runs) else math.nan

    def text(self) -> str:
        return load_text(self.load)


def levels_of(runs: Sequence[RunRecord]) -> list[Level]:
    """A side's levels in load order: runs at the same load are one level."""
    by_load: dict[str, Level] = {}
    for run in sorted(runs, key=lambda r: (sweep.level if (sweep := sweep_of(r)) else 0, r.id or 0)):
        load = run.typed_meta.load or Load()
        key = load_text(load)
        # What places a level: the achieved rate is a figure of its runs, not of the level.
        level = by_load.setdefault(key, Level(msgspec.structs.replace(load, achieved_rate=None)))
        level.runs.append(run)
    return list(by_load.values())


def match_levels(
    base: list[Level], cand: list[Level], axis: str, tolerance: float
) -> tuple[list[tuple[Level, Level]], list[Level], list[Level]]:
    """Pairs (baseline, candidate) in load order, and the unmatched levels of each side.

    ``rate``: requested rates within ``tolerance`` of the larger (nearest first, each level
    used once); ``concurrency``: equal; ``strategy``: the same strategy and load text."""

    def key(level: Level) -> float | None:
        return level.requested_rate if axis == "rate" else level.concurrency if axis == "concurrency" else None

    candidates: list[tuple[float, int, int]] = []
    for i, b in enumerate(base):
        for j, c in enumerate(cand):
            kb, kc = key(b), key(c)
            if axis == "strategy":
                if b.text() == c.text():
                    candidates.append((0.0, i, j))
            elif kb is not None and kc is not None:
                gap = abs(kb - kc) / max(abs(kb), abs(kc), 1e-12)
                if (axis == "rate" and gap <= tolerance) or (axis == "concurrency" and kb == kc):
                    candidates.append((gap, i, j))
    used_b: set[int] = set()
    used_c: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _gap, i, j in sorted(candidates):
        if i not in used_b and j not in used_c:
            used_b.add(i)
            used_c.add(j)
            pairs.append((i, j))
    pairs.sort()
    return (
        [(base[i], cand[j]) for i, j in pairs],
        [b for i, b in enumerate(base) if i not in used_b],
        [c for j, c in enumerate(cand) if j not in used_c],
    )


# ----------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figure:
    """One serving metric of a level: the mean over its runs, each run's value, and where
    the values came from (working figures: the rows of the matched-level table)."""

    value: float
    per_run: list[float]
    source: str


def level_metrics(lens: InferenceLens, level: Level) -> dict[str, Figure]:
    """Every serving metric of a level: the mean over its runs of each run's value."""
    out = {}
    for name in LEVEL_METRICS:
        values, sources = [], set()
        for run in level.runs:
            v, src = lens.metric_value(run, name)
            values.append(v)
            sources.add(src)
        known = [v for v in values if math.isfinite(v)]
        out[name] = Figure(
            sum(known) / len(known) if len(known) == len(values) and known else math.nan,
            values,
            "/".join(sorted(sources)),
        )
    return out


def saturation(levels: list[LevelFigures], axis: str, slo: dict[str, float]) -> Saturation:
    """The highest achieved rate the side sustains (module docstring), or why unknown;
    ``levels`` are the side's levels in load order."""
    achieved = [lv.achieved_rate for lv in levels]
    peak = max((a for a in achieved if math.isfinite(a)), default=math.nan)
    checks: list[bool | None]
    if slo:
        rule = (
            "highest achieved rate while every SLO holds (" + ", ".join(f"{k} ≤ {v:g} ms" for k, v in slo.items()) + ")"
        )
        checks = []
        for lv in levels:
            vals = {k: lv.metrics[k] for k in slo}
            checks.append(
                None if any(not math.isfinite(v) for v in vals.values()) else all(vals[k] <= slo[k] for k in slo)
            )
    elif axis == "rate":
        rule = f"highest achieved rate while achieved/requested ≥ {SUSTAINED:g}"
        checks = [
            None if not (math.isfinite(a) and lv.requested_rate) else a / lv.requested_rate >= SUSTAINED
            for lv, a in zip(levels, achieved)
        ]
    else:
        return Saturation(
            unit="req/s",
            peak_achieved=peak,
            value=math.nan,
            state="unknown",
            note="a concurrency or strategy sweep states no requested rate: give --slo to find saturation",
        )
    value, state, broke_at = math.nan, "not reached", None
    for lv, a, ok in zip(levels, achieved, checks):
        if ok is None:
            return Saturation(
                unit="req/s",
                peak_achieved=peak,
                rule=rule,
                value=value,
                state="unknown",
                note=f"the level at {lv.load} does not state what the rule needs",
            )
        if not ok:
            state, broke_at = "reached", lv
            break
        value = a
    if broke_at is not None:
        return Saturation(
            unit="req/s", peak_achieved=peak, rule=rule, value=value, state=state, first_unsustained=broke_at.load
        )
    return Saturation(
        unit="req/s",
        peak_achieved=peak,
        rule=rule,
        value=value,
        state=state,
        note="every level sustained: saturation lies beyond the sweep (the value is a lower bound)",
    )


def goodput(lens: InferenceLens, level: Level, slo: dict[str, float]) -> Goodput:
    """Requests per second meeting every per-request target (DistServe), per level."""

    if not slo:
        return Goodput(value=math.nan, note="no --slo given")
    values, attained = [], []
    for run in level.runs:
        ok = column(run, "ok")
        duration = inference_duration(run)
        if ok is None or not len(ok):
            return Goodput(value=math.nan, note="no per-request rows: goodput needs them")
        if not math.isfinite(duration):
            return Goodput(value=math.nan, note="the run states no duration")
        meets = ok == 1
        for name, target in slo.items():
            col = column(run, _REQUEST_COLUMN[name.split("_")[0]])
            if col is None or not (col[ok == 1] == col[ok == 1]).any():
                return Goodput(value=math.nan, note=f"no per-request {name.split('_')[0].upper()} values")
            meets = meets & (col <= target)  # NaN (unknown) never meets a target
        values.append(float(meets.sum()) / duration)
        attained.append(float(meets.sum()) / len(ok))
    return Goodput(value=sum(values) / len(values), attainment=sum(attained) / len(attained), unit="req/s")


# ----------------------------------------------------------------------------- the comparison


def compare_sweeps(
    baseline: Sequence[RunRecord],
    candidate: Sequence[RunRecord],
    *,
    metric: str | None = None,
    slo: dict[str, float] | None = None,
    rate_tolerance: float = DEFAULT_RATE_TOLERANCE,
    changes: dict | None = None,
    accepts: dict | None = None,
    load: Callable[[list[RunRecord]], list[RunRecord]] | None = None,
) -> SweepComparison:
    """The sweep comparison (``wb compare SWEEP --vs SWEEP``; ``.to_json()`` is its ``--json``).

    ``load``: gives a level's runs with their columns when ``baseline``/``candidate``
    hold metadata only (the CLI), so at most two levels' rows are in memory at once."""
    slo = slo or {}
    load = load or (lambda runs: list(runs))
    lens = _sweep_lens(baseline, candidate, metric)
    axis = _common_axis(baseline, candidate)
    base_levels, cand_levels = levels_of(baseline), levels_of(candidate)
    pairs, only_b, only_c = match_levels(base_levels, cand_levels, axis, rate_tolerance)
    figures: dict[int, LevelFigures] = {}  # id(level) -> its figures
    matched = []
    table = None
    for b, c in pairs:
        level, rows = _compare_level(lens, b, c, load, slo, figures, changes, accepts)
        matched.append(level)
        if table is None:
            table = rows
    for lv in [*only_b, *only_c]:
        full = Level(lv.load, load(lv.runs))
        figures[id(lv)] = _level_figures(lens, full, slo, level_metrics(lens, full))
    sides = {
        side: _side(runs, [figures[id(lv)] for lv in levels], axis, slo)
        for side, runs, levels in (("baseline", baseline, base_levels), ("candidate", candidate, cand_levels))
    }
    matching = _matching(axis, rate_tolerance)
    unmatched = Unmatched(baseline=[lv.text() for lv in only_b], candidate=[lv.text() for lv in only_c])
    return SweepComparison(
        kind="sweep comparison",
        lens="inference",
        primary_metric=lens.primary.name,
        matching=matching,
        slo=slo,
        baseline=sides["baseline"],
        candidate=sides["candidate"],
        dimensions=table,
        matched=matched,
        unmatched=unmatched,
        uncertainty=_uncertainty_note(pairs),
        observations=observations(sides["baseline"], sides["candidate"], matched, unmatched, matching),
    )


def _sweep_lens(baseline: Sequence[RunRecord], candidate: Sequence[RunRecord], metric: str | None) -> InferenceLens:
    """The inference lens (judged on ``metric`` when given); refused when a side is empty or not inference runs."""
    for side, runs in (("baseline", baseline), ("candidate", candidate)):
        if not runs:
            raise UsageError(f"the {side} sweep has no runs")
        others = [r for r in runs if r.lens != "inference"]
        if others:
            raise UsageError(f"run {others[0].id} is not an inference run: sweeps are compared in the inference lens")
    lens = get_lens("inference")
    assert isinstance(lens, InferenceLens)  # the registry's inference lens; narrows the type for what follows
    if not metric:
        return lens
    try:
        return lens.with_metric(metric)
    except ValueError as exc:
        raise UsageError(f"--metric: {exc}") from None


def _compare_level(
    lens: InferenceLens,
    b: Level,
    c: Level,
    load: Callable[[list[RunRecord]], list[RunRecord]],
    slo: dict[str, float],
    figures: dict[int, LevelFigures],
    changes: dict | None,
    accepts: dict | None,
) -> tuple[MatchedLevel, list]:
    """One matched pair of levels compared (their figures kept in ``figures``), with its comparability rows;
    only this pair's rows are in memory while it runs."""
    full_b, full_c = Level(b.load, load(b.runs)), Level(c.load, load(c.runs))
    metrics_b, metrics_c = level_metrics(lens, full_b), level_metrics(lens, full_c)
    figures[id(b)], figures[id(c)] = (
        _level_figures(lens, full_b, slo, metrics_b),
        _level_figures(lens, full_c, slo, metrics_c),
    )
    result = compare(full_b.runs, full_c.runs, lens, changes, accepts)
    rows = [row.to_json() for row in result.comparability.rows]
    refs = {
        side: LevelRef(load=lv.text(), runs=[r.id for r in lv.runs], achieved_rate=figures[id(lv)].achieved_rate)
        for side, lv in (("baseline", b), ("candidate", c))
    }
    if not result.comparable:
        return MatchedLevel(**refs, comparable=False, refusal=result.refusal), rows
    level = MatchedLevel(
        **refs,
        comparable=True,
        refusal=result.refusal,
        primary=result.primary,
        guardrails=list(result.guardrails),
        metrics=[_metric_row(name, metrics_b[name], metrics_c[name]) for name in LEVEL_METRICS],
    )
    return level, rows


def _side(runs: Sequence[RunRecord], side_levels: list[LevelFigures], axis: str, slo: dict[str, float]) -> Side:
    """One sweep as the comparison shows it: its levels' figures, saturation and best goodput."""
    sweep = sweep_of(runs[0]) or Sweep(id="")
    good = [lv.goodput.value for lv in side_levels if math.isfinite(lv.goodput.value)]
    return Side(
        sweep=sweep.id or None,
        label=sweep.label,
        tool=sweep.tool,
        axis=sweep.axis,
        runs=[r.id if r.id is not None else r.label for r in runs],
        levels=side_levels,
        saturation=saturation(side_levels, axis, slo),
        max_goodput=max(good) if good else math.nan,
        summary_not_compared=bool(sweep.summary),
    )


def _common_axis(baseline: Sequence[RunRecord], candidate: Sequence[RunRecord]) -> str:
    axes = {sweep.axis for sweep in map(sweep_of, [*baseline, *candidate]) if sweep and sweep.axis}
    if len(axes) > 1:
        raise UsageError(f"the sweeps vary different things ({' and '.join(sorted(axes))}): levels cannot be matched")
    return axes.pop() if axes else "rate"


def _matching(axis: str, tolerance: float) -> Matching:
    rule = {
        "rate": f"requested rate within {tolerance:.0%} of the larger",
        "concurrency": "equal concurrency",
        "strategy": "the same strategy and load",
    }[axis]
    return Matching(axis=axis, tolerance=tolerance if axis == "rate" else None, rule=rule)


def _uncertainty_note(pairs: list[tuple[Level, Level]]) -> str:
    if any(len(b.runs) < 2 or len(c.runs) < 2 for b, c in pairs):
        return (
            "one run per level on a side: no uncertainty can be given for those levels; the figures "
            "describe these runs (repeat the sweep for run-level intervals per level)"
        )
    return "several runs per level on both sides: effects are run-level intervals per level"


def _level_figures(
    lens: InferenceLens, level: Level, slo: dict[str, float], metrics: dict[str, Figure]
) -> LevelFigures:
    return LevelFigures(
        load=level.text(),
        requested_rate=level.requested_rate,
        concurrency=level.concurrency,
        achieved_rate=level.achieved_rate(lens),
        runs=[r.id for r in level.runs],
        metrics={k: v.value for k, v in metrics.items()},
        sources={k: v.source for k, v in metrics.items()},
        goodput=goodput(lens, level, slo),
    )


def _metric_row(name: str, fb: Figure, fc: Figure) -> MetricRow:

    spec = SERVING_METRICS[name]
    vb, vc = fb.value, fc.value
    delta = vc - vb if math.isfinite(vb) and math.isfinite(vc) else math.nan
    differ = fb.source != fc.source and "unknown" not in (fb.source, fc.source)
    return MetricRow(
        name=name,
        title=spec.title,
        unit=spec.unit,
        lower_is_better=spec.lower_is_better,
        baseline=vb,
        candidate=vc,
        delta=delta,
        delta_pct=100.0 * delta / abs(vb) if math.isfinite(delta) and vb else math.nan,
        source=SourcePair(baseline=fb.source, candidate=fc.source),
        effect=run_effect(fb.per_run, fc.per_run, lower_is_better=spec.lower_is_better),
        **(
            {"note": "the sides state this figure differently (per-request rows against a file's summary)"}
            if differ
            else {}
        ),
    )


# ----------------------------------------------------------------------------- words and chart


def observations(
    baseline: Side, candidate: Side, matched: list[MatchedLevel], unmatched: Unmatched, matching: Matching
) -> list[SweepObservation]:
    found = [_saturation_observation(baseline, candidate), *(_metric_trend(name, matched) for name in LEVEL_METRICS)]
    return [o for o in found if o is not None] + _matching_observations(matched, unmatched, matching)


def _saturation_observation(baseline: Side, candidate: Side) -> SweepObservation | None:
    """Where the candidate saturates against the baseline, when both are known."""
    sb, sc = baseline.saturation, candidate.saturation
    vb, vc = sb.value, sc.value
    if not (math.isfinite(vb) and math.isfinite(vc)):
        return None
    bound = " (a lower bound: not reached in the sweep)" if "not reached" in (sb.state, sc.state) else ""
    verb = "saturates at" if sc.state == "reached" else "sustains at least"
    rule = None if sc.rule is UNSET else sc.rule
    return SweepObservation(
        text=f"Candidate {verb} {num(vc)} req/s against {num(vb)} ({percent_change(vb, vc)}){bound}; rule: {rule}.",
        evidence=SweepEvidence(baseline=sb, candidate=sc),
        kind=NOT_CAUSE,
    )


def _metric_trend(name: str, matched: list[MatchedLevel]) -> SweepObservation | None:
    """A metric higher (or lower) at every matched load, or higher at some and lower at others
    (a move under 2 % of the larger side is none); fewer than two known levels say nothing."""
    rows = [
        (m.baseline.load, row)
        for m in matched
        if m.metrics
        for row in m.metrics
        if row.name == name and row.delta is not None and math.isfinite(row.delta)
    ]
    if len(rows) < 2:
        return None
    spec_title, unit = rows[0][1].title, rows[0][1].unit
    scale = [max(abs(r.baseline), abs(r.candidate)) for _, r in rows]
    up = [load for (load, r), s in zip(rows, scale) if r.delta > 0.02 * s]
    down = [load for (load, r), s in zip(rows, scale) if r.delta < -0.02 * s]
    first = f"also at {rows[0][0]} ({qty(rows[0][1].baseline, unit)} → {qty(rows[0][1].candidate, unit)})"
    if len(up) == len(rows):
        text = f"{spec_title} is higher at every matched load, {first}."
    elif len(down) == len(rows):
        text = f"{spec_title} is lower at every matched load, {first}."
    elif up and down:
        text = f"{spec_title} is higher at {len(up)} and lower at {len(down)} of {len(rows)} matched loads."
    else:
        return None
    evidence = SweepEvidence(
        metric=name, levels={load: ValuePair(baseline=r.baseline, candidate=r.candidate) for load, r in rows}
    )
    return SweepObservation(text=text, evidence=evidence, kind=NOT_CAUSE)


def _matching_observations(
    matched: list[MatchedLevel], unmatched: Unmatched, matching: Matching
) -> list[SweepObservation]:
    """The levels left unmatched, and that none matched when so."""
    out: list[SweepObservation] = []
    un = unmatched
    if un.baseline or un.candidate:
        out.append(
            SweepObservation(
                text=f"Unmatched levels ({matching.rule}): baseline {', '.join(un.baseline) or 'none'}; "
                f"candidate {', '.join(un.candidate) or 'none'}. They appear on the curve only.",
                evidence=SweepEvidence(baseline=un.baseline, candidate=un.candidate),
                kind=NOT_CAUSE,
            )
        )
    if not matched:
        out.append(
            SweepObservation(
                text="No level matched: the sweeps can be read side by side on the curve, not compared level by level.",
                evidence=SweepEvidence(baseline=un.baseline, candidate=un.candidate),
                kind=NOT_CAUSE,
            )
        )
    return out
