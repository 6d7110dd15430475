"""Observations, not causes: rule-based statements derived from the delta, each citing
its evidence (runs, metric, window, values). They say which phases moved beyond noise
and which did not, and where in the request the change sits; they never name a cause.

A rule fires only when every value it cites is known on both sides; what is missing
gets one sentence of its own ("Queue and prefill were not recorded in the baseline
runs: their change cannot be given."), never "from unknown to unknown".
"""

from __future__ import annotations

import math
from typing import Sequence

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from lenses.base import Lens, column, finite
from lenses.fleet import read_window
from store.records import RunRecord
from workbench.compare.effects import DESCRIPTIVE_BAND, movement, single_run
from workbench.numbers import bucket, bucketed_change, num, qty
from workbench.compare.results import MISSING_NOTE, Effect, Evidence, Guardrail, Observation, Phase, Primary, Runs
from workbench.stats.verdicts import Flag
from workbench.vocabulary import RunRef

NOT_CAUSE = "observation, not cause"
# With one run a side there is no interval and no noise estimate: a sentence describes
# these runs and says so, never "no change beyond noise".
ONE_RUN = " (one run a side: a change in these runs, no uncertainty can be given)"
NO_NOISE = " (one run a side: no noise estimate exists, so whether this is beyond noise cannot be said)"
ONE_WINDOW = " (one window a side: a change between these windows, no uncertainty can be given)"


def _ref(run: RunRecord) -> RunRef:
    return run.id if run.id is not None else run.label


def _evidence(
    base, cand, metric: str, values: dict[str, object], effect: Effect | None = None, *, side: str | UnsetType = UNSET
) -> Evidence:
    """The runs, metric, window kind and figures an observation cites (``values``: the
    figures by name, as the rule that fired gives them)."""
    windows = sorted({str(r.window.get("kind") or "unknown") for r in [*base, *cand]})
    return Evidence(
        runs=Runs(baseline=tuple(_ref(r) for r in base), candidate=tuple(_ref(r) for r in cand)),
        metric=metric,
        window=windows[0] if len(windows) == 1 else tuple(windows),
        values=values,
        verdict=effect.verdict if effect is not None else UNSET,
        effect_note=effect.note if effect is not None and effect.note else UNSET,
        side=side,
    )


def _obs(text: str, evidence: Evidence) -> Observation:
    return Observation(text=text, evidence=evidence, kind=NOT_CAUSE)


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _b(p: Phase) -> float | None:
    """A phase's baseline figure in the lens's phase statistic (p95 for inference)."""
    return p.side("baseline", p.statistic)


def _c(p: Phase) -> float | None:
    return p.side("candidate", p.statistic)


def _moved_text(title: str, b: float | None, c: float | None, unit: str) -> str:
    verb = "grew" if c > b else "fell"
    return f"{title} {verb} from {qty(b, unit)} to {qty(c, unit)}"


def _unresolved_text(title: str, b: float | None, c: float | None, unit: str, effect: Effect) -> str:
    verdict = effect.verdict
    if Flag.UNSTABLE in (effect.flags or ()):
        why = "a change these runs cannot judge: the A/A control moved on its own (UNSTABLE)"
    else:
        why = f"a change these runs do not resolve beyond noise{f' ({verdict})' if verdict else ''}"
    return f"{title} went from {qty(b, unit)} to {qty(c, unit)}, {why}."


def _classify(phases: Sequence[Phase]) -> dict[str, list[Phase]]:
    groups: dict[str, list[Phase]] = {"moved": [], "stayed": [], "unresolved": []}
    for p in phases:
        groups[movement(p.effect, _b(p), _c(p))].append(p)
    return groups


def _descriptive(effect: Effect | None) -> bool:
    """No verdict (one run a side, a zero value): "stayed" only describes these runs."""
    return effect is None or effect.verdict is None


def _these(base, cand) -> str:
    return "these two runs" if len(base) == 1 and len(cand) == 1 else "the baseline and candidate runs"


def _both(base, cand) -> str:
    return "in both runs" if len(base) == 1 and len(cand) == 1 else "in the baseline and candidate runs"


def _known(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def _missing_sides(base, cand, b: float | None, c: float | None) -> str:
    """Where a value is missing: "in the baseline runs", "in the candidate run", "on either side"."""
    if not _known(b) and not _known(c):
        return "on either side"
    side, runs = ("baseline", base) if not _known(b) else ("candidate", cand)
    return f"in the {side} run{'s' if len(runs) != 1 else ''}"


def _were(names: list[str]) -> str:
    return "was" if len(names) == 1 else "were"


def _not_recorded(base, cand, missing: list[Phase]) -> list[Observation]:
    """One sentence per set of sides for the phases not known on both sides."""
    by_where: dict[str, list[Phase]] = {}
    for p in missing:
        by_where.setdefault(_missing_sides(base, cand, _b(p), _c(p)), []).append(p)
    out = []
    for where, ps in by_where.items():
        names = [p.title.lower() for p in ps]
        text = (
            f"{_join(names).capitalize()} {_were(names)} not recorded {where}: {'its' if len(ps) == 1 else 'their'} "
            f"change cannot be given."
        )
        known = {p.name: {k: v for k, v in (("baseline", _b(p)), ("candidate", _c(p))) if _known(v)} for p in ps}
        ev = _evidence(base, cand, "phases not recorded", {"missing": [p.name for p in ps], "recorded": known})
        out.append(_obs(text, ev))
    return out


def _primary_missing(base, cand, primary: Primary) -> list[Observation]:
    b, c = primary.baseline, primary.candidate
    if _known(b, c):
        return []
    text = (
        f"{primary.title.capitalize()} was not recorded {_missing_sides(base, cand, b, c)}: its change cannot be given."
    )
    known = {k: v for k, v in (("baseline", b), ("candidate", c)) if _known(v)}
    return [_obs(text, _evidence(base, cand, primary.metric, {"missing": primary.metric, "recorded": known}))]


def phase_observations(lens: Lens, base, cand, primary: Primary, phases: Sequence[Phase]) -> list[Observation]:
    out: list[Observation] = _primary_missing(base, cand, primary)
    missing = [p for p in phases if not _known(_b(p), _c(p))]
    phases = [p for p in phases if _known(_b(p), _c(p))]
    groups = _classify(phases)
    values = {p.name: {"baseline": _b(p), "candidate": _c(p)} for p in phases}
    one = ONE_RUN if single_run(primary.effect) else ""
    if lens.phase_sentences == "each":
        out.extend(_each_phase(base, cand, groups, values, one))
    else:
        out.extend(_phases_in_one(base, cand, groups, values, one))
    for p in groups["unresolved"]:
        text = _unresolved_text(p.title, _b(p), _c(p), p.unit, p.effect)
        out.append(_obs(text, _evidence(base, cand, f"{p.name} {p.statistic}", values[p.name], p.effect)))
    out.extend(_not_recorded(base, cand, missing))
    out.extend(_location(lens, base, cand, primary, groups))
    out.extend(_unlocated(lens, base, cand, primary, phases, groups, one))
    return out


def _each_phase(base, cand, groups: dict[str, list[Phase]], values: dict, one: str) -> list[Observation]:
    """A sentence per phase that moved, one for those that stayed (judged), one for those only described."""
    out: list[Observation] = []
    for p in groups["moved"]:
        text = _moved_text(f"{p.title} time", _b(p), _c(p), p.unit) + "."
        out.append(
            _obs(
                text + one if one else text,
                _evidence(base, cand, f"{p.name} {p.statistic}", values[p.name], p.effect),
            )
        )
    judged = [p for p in groups["stayed"] if not _descriptive(p.effect)]
    described = [p for p in groups["stayed"] if _descriptive(p.effect)]
    stat = groups["stayed"][0].statistic if groups["stayed"] else ""
    if judged:
        names = _join([p.title.lower() for p in judged]).capitalize()
        text = f"{names} took the same time {_both(base, cand)} (no change beyond noise)."
        out.append(_obs(text, _evidence(base, cand, f"phase {stat}s", {p.name: values[p.name] for p in judged})))
    if described:  # no interval: say what these runs show, and that noise is not known
        figures = _join([f"{p.title.lower()} ({qty(_b(p), p.unit)} → {qty(_c(p), p.unit)})" for p in described])
        text = (
            f"{figures[0].upper() + figures[1:]} changed by less than {num(100 * DESCRIPTIVE_BAND)} % "
            f"between {_these(base, cand)}{NO_NOISE if one else ' (no interval: a value is zero)'}."
        )
        out.append(_obs(text, _evidence(base, cand, f"phase {stat}s", {p.name: values[p.name] for p in described})))
    return out


def _phases_in_one(base, cand, groups: dict[str, list[Phase]], values: dict, one: str) -> list[Observation]:
    """Every phase in one sentence: those that stayed (largest first), then those that moved."""
    out: list[Observation] = []
    stayed = sorted(groups["stayed"], key=lambda p: -(_b(p) if math.isfinite(_b(p)) else 0))
    parts = []
    if stayed:
        first, rest = stayed[0], stayed[1:]
        parts.append(
            f"{first.title} stayed at {qty(_b(first), first.unit)}"
            + "".join(f", {p.title.lower()} at {qty(_b(p), p.unit)}" for p in rest)
        )
    moved = [
        _moved_text(p.title if not parts and i == 0 else p.title.lower(), _b(p), _c(p), p.unit)
        for i, p in enumerate(groups["moved"])
    ]
    if moved:
        parts.append(_join(moved))
    if parts:
        text = "; ".join(parts) + "."
        phase_vals = {p.name: values[p.name] for p in groups["stayed"] + groups["moved"]}
        caveat = (ONE_RUN if groups["moved"] else NO_NOISE) if one else ""  # nothing moved: no "change" to caveat
        out.append(_obs(text + caveat, _evidence(base, cand, "phase means (exposed time)", phase_vals)))
    return out


def _unlocated(
    lens: Lens, base, cand, primary: Primary, phases: Sequence[Phase], groups: dict[str, list[Phase]], one: str
) -> list[Observation]:
    """The primary moved but none of its recorded phases did: say so, and which of its phases are not recorded."""
    out: list[Observation] = []
    b, c = primary.baseline, primary.candidate
    if (
        lens.phases
        and movement(primary.effect, b, c) == "moved"
        and not _within_resolution(primary)
        and not any(p.in_primary for p in groups["moved"])
    ):
        recorded = {p.name for p in phases if p.in_primary}
        unrecorded = [s.title.lower() for s in lens.phases if s.in_primary and s.name not in recorded]
        if not recorded:  # nothing of what the primary measures is known on both sides
            text = (
                f"{_join(unrecorded).capitalize()} {_were(unrecorded)} not recorded: the change in {primary.title} "
                f"cannot be located."
            )
            out.append(
                _obs(
                    text,
                    _evidence(
                        base,
                        cand,
                        primary.metric,
                        {"baseline": b, "candidate": c, "phases_not_recorded": unrecorded},
                        primary.effect,
                    ),
                )
            )
        else:
            beyond = f"by more than {num(100 * DESCRIPTIVE_BAND)} % in these runs" if one else "beyond noise"
            text = (
                _moved_text(primary.title.capitalize(), b, c, primary.unit)
                + f", but none of its recorded phases moved {beyond}"
            )
            text += f" ({_join(unrecorded)} not recorded)." if unrecorded else "."
            text += one
            out.append(
                _obs(
                    text,
                    _evidence(
                        base,
                        cand,
                        primary.metric,
                        {"baseline": b, "candidate": c, "phases_stayed": [p.name for p in groups["stayed"]]},
                        primary.effect,
                    ),
                )
            )
    return out


def _location(lens: Lens, base, cand, primary: Primary, groups: dict[str, list[Phase]]) -> list[Observation]:
    """Where in the request the primary change sits: before the model or inside it (only
    when every part of the primary at the other stage is known on both sides)."""
    if not lens.locates_by_stage:
        return []
    b, c = primary.baseline, primary.candidate
    if movement(primary.effect, b, c) != "moved" or _within_resolution(primary):
        return []
    moved_primary = [p for p in groups["moved"] if p.in_primary]
    if not moved_primary:
        return []
    known = {p.name for g in groups.values() for p in g}
    unknown_at = {
        stage: [s.title.lower() for s in lens.phases if s.in_primary and s.stage == stage and s.name not in known]
        for stage in ("model", "before_model")
    }
    values: dict[str, object] = {
        "baseline": b,
        "candidate": c,
        "moved": [p.name for p in groups["moved"]],
        "stayed": [p.name for p in groups["stayed"]],
    }
    word = "added" if c > b else "saved"
    where = {
        "before_model": "before the model starts work on the request",
        "model": "while the model works on the request",
    }
    for stage, other in (("before_model", "model"), ("model", "before_model")):
        if all(p.stage == stage for p in moved_primary) and not any(p.stage == other for p in groups["moved"]):
            if unknown_at[other]:  # the other stage may have moved too: no location claim
                names = unknown_at[other]
                text = (
                    f"{_join(names).capitalize()} {_were(names)} not recorded: whether all the {word} latency "
                    f"happens {where[stage]} cannot be established."
                )
                values["not_recorded"] = [s.name for s in lens.phases if s.title.lower() in names]
                return [_obs(text, _evidence(base, cand, primary.metric, values, primary.effect))]
            evidence = _evidence(base, cand, primary.metric, values, primary.effect)
            if stage == "before_model":
                return [_obs(f"The {word} latency happens {where[stage]}.", evidence)]
            return [
                _obs(f"The {word} latency happens {where[stage]} ({_join([p.name for p in moved_primary])}).", evidence)
            ]
    return []


def guardrail_observations(base, cand, guardrails: Sequence[Guardrail]) -> list[Observation]:
    out = []
    for g in guardrails:
        vals = (
            f"{qty(g.baseline, g.unit)} vs {qty(g.candidate, g.unit)}"
            if g.unit
            else f"{num(g.baseline)} vs {num(g.candidate)}"
        )
        if g.state == "held":
            text = f"{g.title} held ({vals})."
        elif g.state == "broken":
            text = f"{g.title} broke its guardrail ({vals}; rule {g.rule} {num(g.limit)})."
        elif isinstance(g.note, str) and g.note != MISSING_NOTE:  # why it cannot be judged, said by the contract
            text = f"{g.title} cannot be judged ({vals}): {g.note}."
            out.append(_obs(text, _evidence(base, cand, g.metric, {"state": g.state, "note": g.note})))
            continue
        else:
            text = (
                f"{g.title} was not recorded {_missing_sides(base, cand, g.baseline, g.candidate)}: the guardrail "
                f"cannot be judged."
            )
            known = {k: getattr(g, k) for k in ("baseline", "candidate") if _known(getattr(g, k))}
            out.append(
                _obs(
                    text,
                    _evidence(
                        base,
                        cand,
                        g.metric,
                        {
                            **known,
                            "state": g.state,
                            "missing": [k for k in ("baseline", "candidate") if k not in known],
                        },
                    ),
                )
            )
            continue
        out.append(
            _obs(
                text,
                _evidence(base, cand, g.metric, {"baseline": g.baseline, "candidate": g.candidate, "state": g.state}),
            )
        )
    return out


def fleet_observations(lens: Lens, base, cand, primary: Primary, phases: Sequence[Phase]) -> list[Observation]:
    censored = _censored_waits(base, cand)
    return [
        *_fleet_moves(base, cand, primary, phases),
        *_unknown_waits(base, cand, primary, censored),
        *censored,
        *_gang_blocking_findings(base, cand),
    ]


def _fleet_moves(base, cand, primary: Primary, phases: Sequence[Phase]) -> list[Observation]:
    """The mean queue wait and the service attainment, where they moved."""
    out = []
    b, c = primary.baseline, primary.candidate
    if movement(primary.effect, b, c) != "stayed" and _known(b, c):
        out.append(
            _obs(
                _window_change("Mean queue wait", b, c, "s", primary.effect),
                _evidence(base, cand, primary.metric, {"baseline": b, "candidate": c}, primary.effect),
            )
        )
    for p in phases:
        pb, pc = p.baseline_mean, p.candidate_mean
        if p.name == "service_attainment" and _known(pb, pc) and movement(p.effect, pb, pc) != "stayed":
            out.append(
                _obs(
                    _window_change("Service attainment", pb, pc, "%", p.effect),
                    _evidence(base, cand, p.name, {"baseline": pb, "candidate": pc}, p.effect),
                )
            )
    return out


def _unknown_waits(base, cand, primary: Primary, censored: list[Observation]) -> list[Observation]:
    """A side whose mean queue wait is unknown, unless its censored waits already say why (no job started)."""
    out = []
    b, c = primary.baseline, primary.candidate
    explained = {
        o.evidence.side
        for o in censored
        if o.evidence.values["windows_without_started_jobs"] == o.evidence.values["windows"]
    }
    for side, runs, value in (("baseline", base, b), ("candidate", cand, c)):
        if not _known(value) and side not in explained:
            where = f"the {side} window" if len(runs) == 1 else f"the {side} windows"
            text = (
                f"The mean queue wait is unknown in {where}: no job with a known eligible time started there (queue "
                f"wait = start − eligible)."
            )
            ev = _evidence(
                base,
                cand,
                primary.metric,
                {"missing": side, **{k: v for k, v in (("baseline", b), ("candidate", c)) if _known(v)}},
            )
            out.append(_obs(text, ev))
    return out


def _gang_blocking_findings(base, cand) -> list[Observation]:
    """One observation per distinct finding, citing every window where it holds."""
    out = []
    found: dict[tuple[str, str], list[Observation]] = {}  # (fact, caveat) -> the windows' observations of it
    for side, runs in (("baseline", base), ("candidate", cand)):
        for run in runs:
            for fact, caveat, obs in _gang_blocking(side, run, read_window(run), base, cand):
                found.setdefault((fact, caveat), []).append(obs)
    for (fact, caveat), same in found.items():
        first = same[0].evidence
        runs = Runs(
            baseline=tuple(r for o in same for r in o.evidence.runs.baseline),
            candidate=tuple(r for o in same for r in o.evidence.runs.candidate),
        )
        side = "both" if runs.baseline and runs.candidate else first.side
        side_runs = base if side == "baseline" else cand
        if side != "both" and len(side_runs) > 1:
            fact += f" (in {len(same)} of {len(side_runs)} {side} windows)"
        evidence = msgspec.structs.replace(
            first, runs=runs, side=side, per_window=tuple(o.evidence.values for o in same)
        )
        out.append(_obs(f"{fact}.{caveat}", evidence))
    return out


def _window_change(title: str, b: float, c: float, unit: str, effect: Effect | None) -> str:
    """A window metric that moved (with the one-window caveat when there is no interval),
    or went from one value to another without a resolved change."""
    if movement(effect, b, c) == "moved":
        return _moved_text(title, b, c, unit) + "." + (ONE_WINDOW if single_run(effect) else "")
    return _unresolved_text(title, b, c, unit, effect)


def _censored_waits(base, cand) -> list[Observation]:
    """Jobs still waiting at a window's end: right-censored waits, said with their lower
    bounds, their share of the target (known misses, pending) and, when more than half
    may still be waiting, the Kaplan–Meier median as a bound."""
    out = []
    for side, runs in (("baseline", base), ("candidate", cand)):
        windows = [read_window(r) for r in runs]
        censored = np.concatenate([w.censored for w in windows]) if windows else np.array([])
        if not censored.size:
            continue
        n = int(censored.size)
        where = f"the {side} window" if len(runs) == 1 else f"{len(runs)} {side} windows"
        lo, hi = float(censored.min()), float(censored.max())
        span = qty(lo, "s") if lo == hi else f"{qty(lo, 's')} to {qty(hi, 's')}"
        idle = [w for w in windows if not w.waits.size]
        lead = ""
        if idle:
            lead = (
                f"No job started in {where if len(idle) == len(windows) else f'{len(idle)} of the {side} windows'}: "
                "the mean queue wait is unknown there; "
            )
        jobs = f"{n} job{'s' if n > 1 else ''}"
        text = (
            f"{lead}{jobs} in {where} {'were' if n > 1 else 'was'} still waiting at the end, "
            f"after at least {span} (right-censored waits: lower bounds, not in the mean queue wait)"
        )
        known = sum(w.known_misses for w in windows)
        pending = sum(w.pending for w in windows)
        text += _censored_clauses(windows, n, known, pending)
        values = {
            "censored_jobs": n,
            "min_elapsed_s": lo,
            "max_elapsed_s": hi,
            "known_misses": known,
            "pending": pending,
            "windows_without_started_jobs": len(idle),
            "windows": len(runs),
        }
        ev = _evidence(
            base if side == "baseline" else [],
            cand if side == "candidate" else [],
            "right-censored waits at window end",
            values,
            side=side,
        )
        out.append(_obs(text[0].upper() + text[1:] + ".", ev))
    return out


def _censored_clauses(windows: list, n: int, known: int, pending: int) -> str:
    """What the censored waits say of the target (known misses, pending: attainment bounds) and of the median."""
    text = ""
    targets = sorted({w.wait_target_s for w in windows if math.isfinite(w.wait_target_s)})
    target = f"the {qty(targets[0], 's')} target" if len(targets) == 1 else "the wait target"
    if targets and known:
        text += (
            f"; {'all' if known == n else known} {'of them ' if known != n else ''}already past {target}: "
            f"known misses in the service attainment"
        )
    if targets and pending:
        bounds = [w.attainment_bounds for w in windows if w.pending]
        low = min(b[0] for b in bounds)
        high = max(b[1] for b in bounds)
        text += (
            f"; {pending} still within {target}: pending, so attainment lies between "
            f"{qty(100 * low, '%')} and {qty(100 * high, '%')}"
        )
    unreached = [bound for _, bound in map(lambda w: w.km_median(), windows) if math.isfinite(bound)]
    if unreached:
        text += (
            f"; more than half may still be waiting: the median wait (Kaplan–Meier) exceeds {qty(min(unreached), 's')}"
        )
    return text


def _gang_blocking(side: str, run: RunRecord, w, base, cand) -> list[tuple[str, str, Observation]]:
    """(the fact, without its full stop; the caveat it needs, or ""; the observation)."""
    idle = w.idle_end
    gangs = w.waiting_gangs
    if not gangs or not math.isfinite(idle) or idle <= 0:
        return []
    blocked = [g for g in gangs if g > idle]
    if not blocked:
        return []
    idle_n = num(idle)
    if len(blocked) == len(gangs):
        sizes = sorted(set(gangs))
        need = (
            f"each needing {sizes[0]} GPUs at once"
            if len(sizes) == 1
            else f"each needing more GPUs at once than were free ({_join([str(s) for s in sizes])})"
        )
        text = f"{idle_n} GPUs sat unallocated while {len(gangs)} jobs waited, {need}"
    else:
        text = (
            f"{idle_n} GPUs sat unallocated while {len(gangs)} jobs waited; {len(blocked)} of them needed more GPUs "
            f"at once than were free"
        )
    # Without eligibility history "waiting" is read from submission times: a job held by a
    # dependency looks like one waiting for GPUs. With it recorded, the wait is the job's own.
    caveat = ""
    if not w.eligibility_known:
        some = finite(column(run, "eligible")).size > 0
        caveat = (
            " Eligibility history covers only some jobs here, so idle capacity cannot be assumed usable."
            if some
            else " Without eligibility history, idle capacity cannot be assumed usable."
        )
    evidence = _evidence(
        [run] if side == "baseline" else [],
        [run] if side == "candidate" else [],
        "idle GPUs and waiting gangs at window end",
        {
            "idle_gpus": idle,
            "capacity_gpus": w.capacity,
            "waiting_gang_sizes": list(gangs),
            "window_end": w.end,
            "eligibility_known": w.eligibility_known,
        },
        side=side,
    )
    return [(text, caveat, _obs(f"{text}.{caveat}", evidence))]


def observations(
    lens: Lens,
    base: Sequence[RunRecord],
    cand: Sequence[RunRecord],
    primary: Primary,
    phases: Sequence[Phase],
    guardrails: Sequence[Guardrail],
) -> list[Observation]:
    if lens.runs_are_windows:
        found = fleet_observations(lens, base, cand, primary, phases)
    else:
        found = phase_observations(lens, base, cand, primary, phases)
    return _bucketed_observations(base, cand, primary) + found + guardrail_observations(base, cand, guardrails)


def _within_resolution(primary: Primary) -> bool:
    return primary.bucketed is not UNSET and primary.bucketed.within_resolution


def _bucketed_observations(base, cand, primary: Primary) -> list[Observation]:
    """A histogram percentile: what the buckets say, beside the interpolated figures."""
    bk = primary.bucketed
    if bk is UNSET or not _known(primary.baseline, primary.candidate):
        return []
    title, unit = primary.title.capitalize(), primary.unit
    b, c = bucket(bk.baseline_low, bk.baseline_high, unit), bucket(bk.candidate_low, bk.candidate_high, unit)
    where = f"both in {b}" if b == c else f"the baseline in {b} and the candidate in {c}"
    text = (
        f"{title} is interpolated inside histogram buckets ({qty(primary.baseline, unit)} → "
        f"{qty(primary.candidate, unit)}); "
        f"the buckets place {where}"
    )
    if bk.within_resolution:
        text += ": the change is within the histogram's resolution."
    else:
        text += f": {bucketed_change(primary.baseline, primary.candidate, unit, bk).rsplit(': ', 1)[1]}."
    values = {"baseline": primary.baseline, "candidate": primary.candidate, **msgspec.to_builtins(bk)}
    return [_obs(text, _evidence(base, cand, primary.metric, values, primary.effect))]
