"""Plain-text reports of a comparison and an inspection, readable at 80 columns with no
colour. Every string from a capture goes through ``clean`` (control characters shown,
never interpreted)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from workbench.compare import dict_diff
from workbench.compare.charts import distribution_chart, paired_bars
from workbench.compare.findings_render import findings_block, steps_block
from workbench.numbers import change, num, qty
from workbench.compare.inspect_data import InspectResult
from workbench.compare.model import Comparison
from workbench.compare.results import Censored, Effect, Work
from workbench.compare.states import CHANGED, DIFFERENT, MIXED, SAME, UNKNOWN
from workbench.textsafe import clean
from workbench.vocabulary import RunRef

WIDTH = 80


def _cut(value: Any, width: int) -> str:
    text = "unknown" if value is None else clean(value)
    return text if len(text) <= width else text[: width - 1] + "~"


def _runs(refs: Sequence[RunRef]) -> str:
    return ", ".join(clean(r) for r in refs)


def header(c: Comparison) -> list[str]:
    lines = [f"lens: {c.lens.name}"]
    for side in ("baseline", "candidate"):
        lines += textwrap.wrap(f"{side}: {_runs(c.runs.get(side))}", WIDTH, subsequent_indent="  ")
    if c.runs.get("control"):
        lines += textwrap.wrap(
            f"control (A′, baseline again): {_runs(c.runs.get('control'))}", WIDTH, subsequent_indent="  "
        )
    return lines


def control_lines(effect: Effect | None) -> list[str]:
    """The A/A control of an effect: A′/A, its CI90 against the band, the noise floor."""
    aa = effect.aa if effect is not None else None
    if not aa:
        note = effect.control_note if effect is not None else None
        return (
            textwrap.wrap(f"A/A control: {clean(note)}", WIDTH, initial_indent="  ", subsequent_indent="    ")
            if note
            else []
        )
    ci = aa.interval(0.90)
    ci_text = f", CI90 {num(ci.low)}..{num(ci.high)}" if ci and ci.low is not None and ci.high is not None else ""
    text = (
        f"A/A control: A′/A {num(aa.ratio)}{ci_text}; noise floor {num(aa.noise_floor_sd_log)} "
        f"(SD of log values); smallest detectable change {num(aa.mde_pct)} %"
    )
    needed = effect.planning.rounds_needed if effect.planning else None
    if aa.underpowered and needed and effect.delta:
        text += f"; about {needed} runs a side would resolve δ = {num(100 * effect.delta)} %"
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="    ")


def _effect_text(effect: Effect | None) -> str:
    if effect is None:
        return "no effect"
    if effect.verdict is None:
        return effect.note or "no effect"
    ci = effect.interval(0.95)
    if ci and ci.low is not None and ci.high is not None:
        return f"{effect.verdict} (ratio {num(effect.ratio or None)}, CI95 {num(ci.low)}..{num(ci.high)})"
    return str(effect.verdict)


def _effect_short(effect: Effect | None) -> str:
    """The effect in a table cell: the verdict and ratio, or why there is none."""
    if effect is not None and effect.verdict is not None:
        return f"{effect.verdict} ×{num(effect.ratio)}" if effect.ratio else str(effect.verdict)
    note = str(effect.note or "") if effect is not None else ""
    if note.startswith("one run"):
        return "no interval: 1 run/side"
    if note.startswith("unknown"):
        return "unknown"
    if "zero" in note:
        return "no ratio (a zero)"
    return "no effect"


def dimensions_table(c: Comparison) -> list[str]:
    rows = c.comparability.rows
    # What differs first (a diff-first view); unknown also-recorded rows last.
    rank = {CHANGED: 0, DIFFERENT: 1, MIXED: 2, UNKNOWN: 2, SAME: 3}
    order = sorted(
        rows, key=lambda r: (4 if r.state == UNKNOWN and not r.must_match else rank[r.state], not r.must_match)
    )
    lines = [f"  {'dimension':<18} {'state':<9} {'baseline':<19} {'candidate':<19} source"]
    for r in order:
        mark = "*" if r.must_match else " "
        b, v = (dict_diff.cell(x) or x for x in (r.baseline.value, r.candidate.value))
        lines.append(
            f"{mark} {_cut(r.name, 18):<18} {r.state:<9} {_cut(b, 19):<19} {_cut(v, 19):<19} {_cut(r.source, 8)}"
        )
        # A mapping's differing keys, each with both values, wrapped (never cut).
        lines += dict_diff.table_lines(r.name, r.state, r.baseline.value, r.candidate.value, WIDTH)
        if r.note and not (r.state == UNKNOWN and dict_diff.unread_note(r.baseline.value, r.candidate.value)):
            lines.append(f"    note: {_cut(r.note, WIDTH - 10)}")
        if r.accepted_why is not None:
            lines.append(f"    accepted: {_cut(r.accepted_why, WIDTH - 14)}")
    lines.append("  (* must match)")
    return lines


def render_comparison(c: Comparison) -> str:
    out = [
        *header(c),
        "",
        "Comparability",
        *dimensions_table(c),
        "",
    ]
    if not c.comparable:
        return "\n".join(out + _refusal_lines(c))
    for a in c.accepted:
        out.append(f"accepted {a.dimension}: {clean(a.why)}")
    if c.declarations:  # what `wb declare` said, beyond the files ('wb show RUN' has who and why)
        relied = ", ".join(f"run {d.run} {d.dimension} (#{d.declaration})" for d in c.declarations)
        out += textwrap.wrap(clean(f"relies on declarations: {relied}"), WIDTH, subsequent_indent="  ")
    p = c.primary
    out += textwrap.wrap(f"{p.title if p else ''}: {p.text if p else ''}", WIDTH, subsequent_indent="  ")
    out.append(f"  effect: {_effect_text(c.effect)}")
    out += _effect_detail(c.effect)
    out += control_lines(c.effect)
    out += _censored_lines(c)
    out.append("")
    if c.phases:
        out += phases_table(c)
    out += _extra_metric_lines(c)
    out += _guardrail_lines(c)
    out += work_lines(c.work)
    if c.observations:
        out.append("Observations (observation, not cause)")
        for o in c.observations:
            out += textwrap.wrap(clean(o.text), WIDTH, initial_indent="  - ", subsequent_indent="    ")
    return "\n".join(out)


def _refusal_lines(c: Comparison) -> list[str]:
    refusal = c.refusal
    out = textwrap.wrap(f"REFUSED: {clean(refusal.reason)}", WIDTH, subsequent_indent="  ")
    if refusal.also:
        out.append(f"also blocking: {', '.join(refusal.also)}")
    out.append("No delta is computed for a pair that is not comparable.")
    return out


def _effect_detail(effect: Effect | None) -> list[str]:
    """How many runs a verdict rests on, its flags and its reason (nothing without a verdict)."""
    if effect is None or effect.verdict is None:
        return []
    runs = effect.runs
    detail = f"{runs.baseline if runs else '?'} vs {runs.candidate if runs else '?'} runs, unpaired"
    if runs and runs.control is not UNSET:
        detail += f", {runs.control} A′ control runs"
    if effect.flags:
        detail += "; flags: " + ", ".join(effect.flags)
    out = textwrap.wrap(detail, WIDTH, initial_indent="  ", subsequent_indent="  ")
    if effect.reason:
        out += textwrap.wrap(clean(effect.reason), WIDTH, initial_indent="  ", subsequent_indent="  ")
    return out


def _censored_said(side: Censored) -> str:
    if not side.jobs:
        return "none"
    lo, hi = qty(side.min_elapsed_s, "s"), qty(side.max_elapsed_s, "s")
    return f"{side.jobs} job{'s' if side.jobs > 1 else ''}, waiting {lo if lo == hi else f'{lo} to {hi}'} so far"


def _censored_lines(c: Comparison) -> list[str]:
    """Jobs still waiting at the end: right-censored, so outside the mean, and said."""
    censored = c.primary.censored if c.primary else None
    if not (censored and (censored.baseline.jobs or censored.candidate.jobs)):
        return []
    text = (
        f"still waiting at the end (right-censored, not in this mean): baseline {_censored_said(censored.baseline)}; "
        f"candidate {_censored_said(censored.candidate)}"
    )
    return textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="    ")


def _extra_metric_lines(c: Comparison) -> list[str]:
    if not c.metrics:
        return []
    out = ["Extra metrics"]
    for m in c.metrics:
        out.append(f"  {_cut(m.title, 28):<28} {change(m.baseline, m.candidate, m.unit)}  {_effect_text(m.effect)}")
    return out + [""]


def _guardrail_lines(c: Comparison) -> list[str]:
    if not c.guardrails:
        return []
    out = ["Guardrails"]
    for g in c.guardrails:
        out.append(f"  {_cut(g.title, 28):<28} {g.state:<8} {qty(g.baseline, g.unit)} vs {qty(g.candidate, g.unit)}")
        if g.control_state is not UNSET:
            out.append(
                f"  {'':<28} A/A control: {g.control_state} ({qty(None if g.control is UNSET else g.control, g.unit)})"
            )
    return out + [""]


def phases_table(c: Comparison) -> list[str]:
    fleet = c.lens.runs_are_windows
    head = (
        "Window metrics (one value per window, averaged over windows)"
        if fleet
        else "Phases (each run's mean, p50, p95, averaged over runs)"
    )
    lines = [head, *textwrap.wrap(clean(c.lens.phase_note), WIDTH - 2, initial_indent="  ", subsequent_indent="  ")]
    if fleet:
        lines.append(f"  {'metric':<30} {'baseline':>10} {'candidate':>10}  effect")
        for p in c.phases or ():
            lines.append(
                f"  {_cut(p.title, 30):<30} {qty(p.baseline_mean, p.unit):>10} {qty(p.candidate_mean, p.unit):>10}  "
                f"{_cut(_effect_short(p.effect), 24)}"
            )
        return lines + [""]
    lines.append(f"  {'phase':<18} {'mean':>19}  {'p50':>16}  {'p95':>16}")
    for p in c.phases or ():
        mark = "" if p.in_primary else " (beside)"
        arrow = lambda stat: f"{num(p.side('baseline', stat))} → {num(p.side('candidate', stat))}"  # noqa: E731, B023 - used in this iteration
        lines.append(f"  {_cut(p.title + mark, 18):<18} {arrow('mean'):>19}  {arrow('p50'):>16}  {arrow('p95'):>16}")
        lines.append(f"  {'':<18} {p.statistic}: {_cut(_effect_text(p.effect), WIDTH - 28)}")
    lines.append(f"  units: {c.phases[0].unit if c.phases else ''}; phases are not additive")
    return lines + [""]


def work_lines(work: Work | None) -> list[str]:
    if work is None:
        return []
    lines = [
        "Work",
        f"  {clean(work.unit or '')}: {num(work.baseline)} vs {num(work.candidate)}",
    ]  # unit: from the capture
    item = work.per_item
    if item:
        lines.append(
            f"  {clean(item.name)}: {num(item.baseline)} vs {num(item.candidate)} "
            f"({'same' if work.same else 'DIFFERENT'})"
        )
    t = work.throughput
    if t:
        lines.append(f"  throughput: {change(t.baseline, t.candidate, t.unit)}")
    if work.note:
        lines += textwrap.wrap(clean(work.note), WIDTH, initial_indent="  ", subsequent_indent="  ")
    return lines + [""]


def render_inspect(r: InspectResult) -> str:
    c = r.comparison
    if not c.comparable:
        own = findings_block(msgspec.to_builtins(f) for f in r.findings)
        return render_comparison(c) + ("\n\n" + "\n".join(own).rstrip() if own else "")
    out = header(c)
    out += steps_block(msgspec.to_builtins(r.steps) if r.steps is not None else None)
    p = c.primary
    out += [*textwrap.wrap(f"{p.title if p else ''}: {p.text if p else ''}", WIDTH, subsequent_indent="  "), ""]
    out += _inspect_phases(r)
    out += _inspect_distributions(r)
    out += _inspect_over_time(r)
    out += _inspect_operations(r)
    if r.ranks is not None:
        out += ["", *ranks_block(r.ranks)]
    if r.findings:
        out += [""] + findings_block(msgspec.to_builtins(f) for f in r.findings)
    return "\n".join(line.rstrip() for line in "\n".join(out).splitlines())


def _inspect_phases(r: InspectResult) -> list[str]:
    """Phases as paired bars of one statistic; a windowed lens's runs are windows: one chart per metric."""
    c = r.comparison
    if not c.phases:
        return []
    if c.lens.runs_are_windows:
        return [
            "Window metrics",
            *(paired_bars([(ph.title, ph.baseline_mean, ph.candidate_mean)], ph.unit, WIDTH) for ph in c.phases),
            "",
        ]
    stat = c.phases[0].statistic
    return [
        f"Phase {stat} (each run's, averaged over runs), baseline against candidate",
        paired_bars(
            [(ph.title, ph.side("baseline", stat), ph.side("candidate", stat)) for ph in c.phases],
            c.phases[0].unit,
            WIDTH,
        ),
        "",
    ]


def _inspect_distributions(r: InspectResult) -> list[str]:
    if not r.distributions:
        return []
    out = [
        "Distributions (items pooled over a side's runs; descriptive, not an interval)",
        f"  {'measure':<14} {'side':<4} {'n':>7} {'p5':>8} {'p50':>8} {'p95':>8} {'p99':>8} {'mean':>8}",
    ]
    for d in r.distributions:
        for side, s in (("baseline", d.baseline), ("candidate", d.candidate)):
            out.append(
                f"  {_cut(d.name, 14):<14} {side[0].upper():<4} {'file' if s.source == 'file' else s.n:>7} "
                + " ".join(f"{num(v):>8}" for v in (s.p5, s.p50, s.p95, s.p99, s.mean))
            )
    for unit in dict.fromkeys(d.unit for d in r.distributions):
        # the chart reads each side's figures by name (nan: unknown)
        rows = [
            (d.name, msgspec.to_builtins(d.baseline), msgspec.to_builtins(d.candidate))
            for d in r.distributions
            if d.unit == unit
        ]
        out.append(distribution_chart(rows, unit, WIDTH))
    return out + [""]


def _inspect_over_time(r: InspectResult) -> list[str]:
    t = r.over_time
    if t is None:
        return []
    out: list[str] = []
    if t.metrics:
        k = t.windows
        first, rest = t.metrics[0], t.metrics[1:]
        out.append(f"Over time: {k} equal windows by {t.by} (window means over runs)")
        rows: list[tuple[str, float | None, float | None]] = [
            (f"{first.name} {i + 1}/{k}", b, v) for i, (b, v) in enumerate(zip(first.baseline, first.candidate))
        ]
        out.append(paired_bars(rows, first.unit, WIDTH))
        if rest:
            out.append("")
            out.append("  candidate / baseline per window (1.00 = no change; ? = unknown)")
            out.append(f"  {'measure':<14}" + "".join(f"{i + 1:>7}" for i in range(min(k, 9))))
            for m in rest:
                cells = [_ratio(b, v) for b, v in zip(m.baseline, m.candidate)][:9]
                out.append(f"  {_cut(m.name, 14):<14}" + "".join(f"{c:>7}" for c in cells))
        out.append("")
    if t.note:
        out += [f"Over time: {clean(t.note)}", ""]
    return out


def _inspect_operations(r: InspectResult) -> list[str]:
    if r.operations is None:
        return ["Operations: the runs carry no operations table."]
    if not r.operations:
        return []
    out = [
        "Operations that moved most (ms per step, mean over runs)",
        f"  {'operation':<36} {'kind':<10} {'baseline':>9} {'candidate':>9} {'delta':>9}",
    ]
    for o in r.operations:
        out.append(
            f"  {_cut(o.name, 36):<36} {_cut(o.kind, 10):<10} {num(o.baseline_ms_per_step):>9} "
            f"{num(o.candidate_ms_per_step):>9} {('+' if o.delta_ms > 0 else '') + num(o.delta_ms):>9}"
        )
    return out


def _ratio(b: Any, c: Any) -> str:
    if (
        not (isinstance(b, int | float) and isinstance(c, int | float))
        or not (math.isfinite(b) and math.isfinite(c))
        or b == 0
    ):
        return "?"
    return f"{c / b:.2f}"


def ranks_block(ranks: Any) -> list[str]:
    """The ranks that moved most against their run's median rank: a few lines, whatever the job's size."""
    if not ranks.moved:
        return [f"Ranks: no rank moved against its run's median rank ({ranks.shared} ranks on both sides)."]
    out = [
        f"Ranks that moved most (offset from the run's median rank, ms; top {len(ranks.moved)} of {ranks.shared})",
        f"  {'rank':>6} {'measure':<18} {'baseline':>9} {'candidate':>9} {'moved':>9}",
    ]
    for m in ranks.moved:
        out.append(
            f"  {m.rank:>6} {_cut(m.measure, 18):<18} {num(m.baseline_offset_ms):>9} {num(m.candidate_offset_ms):>9} "
            f"{('+' if m.moved_ms > 0 else '') + num(m.moved_ms):>9}"
        )
    out += textwrap.wrap(
        "descriptive: a rank's steps are not independent samples; the straggler findings say who waited",
        WIDTH,
        initial_indent="  ",
        subsequent_indent="  ",
    )
    return out
