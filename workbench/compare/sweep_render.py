"""The plain-text report of a sweep comparison (80 columns, no colour); every string
from a capture goes through ``clean``."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import UNSET

from workbench.numbers import MINUS, num, qty, signed_percent
from workbench.compare.sweep_result import MatchedLevel, Side, SweepComparison
from workbench.textsafe import clean

WIDTH = 80


def _cut(value: Any, width: int) -> str:
    text = "unknown" if value is None else clean(value)
    return text if len(text) <= width else text[: width - 1] + "~"


def _wrap(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(clean(text), WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _dimension_lines(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """The comparability table from its JSON rows, as ``render.dimensions_table`` draws it
    (a mapping's differing keys one per line, never cut)."""
    from workbench.compare import dict_diff

    rank = {"changed": 0, "different": 1, "mixed": 2, "unknown": 2, "same": 3}
    order = sorted(
        rows,
        key=lambda r: (
            4 if r["state"] == "unknown" and not r.get("must_match") else rank.get(str(r["state"]), 3),
            not r.get("must_match"),
        ),
    )
    lines = [f"  {'dimension':<18} {'state':<9} {'baseline':<19} {'candidate':<19} source"]
    for r in order:
        name, state = str(r["name"]), str(r["state"])  # a comparability row's words
        mark = "*" if r.get("must_match") else " "
        b, v = (dict_diff.cell(x) or x for x in (r.get("baseline"), r.get("candidate")))
        lines.append(
            f"{mark} {_cut(name, 18):<18} {state:<9} {_cut(b, 19):<19} {_cut(v, 19):<19} {_cut(r.get('source'), 8)}"
        )
        lines += dict_diff.table_lines(name, state, r.get("baseline"), r.get("candidate"), WIDTH)
        if r.get("note") and not (state == "unknown" and dict_diff.unread_note(r.get("baseline"), r.get("candidate"))):
            lines.append(f"    note: {_cut(r['note'], WIDTH - 10)}")
        accepted = r.get("accepted")
        if accepted:
            why = accepted.get("why") if isinstance(accepted, Mapping) else None
            lines.append(f"    accepted: {_cut(why, WIDTH - 14)}")
    lines.append("  (* must match)")
    return lines


def _saturation_lines(doc: SweepComparison) -> list[str]:
    """Saturation and goodput of each side (observations, not causes)."""
    b, c = doc.baseline, doc.candidate
    out: list[str] = []
    out.append("Saturation (observation, not cause)")
    for side, s in (("baseline", b), ("candidate", c)):
        sat = s.saturation
        value = qty(sat.value, "req/s")
        more = f", first unsustained at {sat.first_unsustained}" if sat.first_unsustained else ""
        out += _wrap(f"{side}: {value} ({sat.state}){more}; peak achieved {qty(sat.peak_achieved, 'req/s')}")
        if sat.note:
            out += _wrap(sat.note, "    ")
    rule = b.saturation.rule
    if rule:
        out += _wrap(f"rule: {rule}")
    if doc.slo:

        def best(s: Side) -> str:
            value = s.max_goodput
            if value is not None and math.isfinite(value):
                return qty(value, "req/s")
            notes = {lv.goodput.note for lv in s.levels if lv.goodput.note}
            return "unknown" + (f" ({'; '.join(sorted(notes))})" if notes else "")

        out += _wrap(
            f"goodput (DistServe: requests/s meeting every target), best level: baseline {best(b)}; candidate {best(c)}"
        )
    return out


def render_sweep_comparison(comparison: SweepComparison, curve: str | None = None) -> str:
    """The report, with the latency–throughput curve drawn now from the levels (the result
    keeps the points, never a picture): ``curve`` when given (the TUI's, fitted to its
    region), else ``workbench.compare.plots.sweep_curve`` at 80 columns."""
    if curve is None:
        from workbench.compare.plots import sweep_curve  # numpy and plotext: drawn when a report is

        curve = sweep_curve(comparison)
    doc = comparison
    b, c = doc.baseline, doc.candidate
    out = [f"lens: {doc.lens} (sweep comparison; primary {doc.primary_metric})"]
    for side, s in (("baseline", b), ("candidate", c)):
        out += _wrap(
            f"{side}: sweep {s.sweep} {s.label or ''} ({s.tool or '?'}), {len(s.levels)} levels, "
            f"runs {', '.join(map(str, s.runs))}",
            "",
        )
    out += _wrap(
        f"Levels matched by {doc.matching.rule}. The sweep summaries (all loads together) are "
        f"metadata, never compared as a level.",
        "",
    )
    out.append("")
    if doc.dimensions:
        out.append("Comparability (first matched level; every level is checked)")
        out += _dimension_lines(doc.dimensions)
        out.append("")
    out += _saturation_lines(doc)
    out.append("")
    out.append("Curve")
    out.append(curve)
    out.append("")
    for m in doc.matched:
        out += _level_lines(m)
    if doc.matched:
        out += _wrap(doc.uncertainty, "")
        out.append("")
    un = doc.unmatched
    if un.baseline or un.candidate:
        out += _wrap(
            f"Unmatched: baseline {', '.join(un.baseline) or 'none'}; candidate {', '.join(un.candidate) or 'none'}", ""
        )
        out.append("")
    out += _goodput_lines(doc)
    if doc.observations:
        out.append("Observations (observation, not cause)")
        for o in doc.observations:
            out += textwrap.wrap(clean(o.text), WIDTH, initial_indent="  - ", subsequent_indent="    ")
    return "\n".join(line.rstrip() for line in out)


def _level_lines(m: MatchedLevel) -> list[str]:
    """One matched level: its metrics side by side (or why it was refused) and any broken guardrail."""
    head = (
        f"Level {m.baseline.load} vs {m.candidate.load}: achieved {num(m.baseline.achieved_rate)} vs "
        f"{num(m.candidate.achieved_rate)} req/s"
    )
    out = [_cut(head, WIDTH)]
    if not m.comparable:
        return out + _wrap(f"REFUSED: {m.refusal.reason if m.refusal else ''}")
    out.append(f"  {'metric':<24} {'baseline':>12} {'candidate':>12} {'change':>9}  source")
    for row in m.metrics or []:
        src = row.source
        source = src.baseline if src.baseline == src.candidate else f"{src.baseline}/{src.candidate}"
        out.append(
            f"  {_cut(row.title, 24):<24} {qty(row.baseline, row.unit):>12} {qty(row.candidate, row.unit):>12} "
            f"{signed_percent(row.delta_pct, 1, missing='', minus=MINUS):>9}  {_cut(source, 14)}"
        )
    broken = [g.title for g in m.guardrails or [] if g.state == "broken"]
    if broken:
        out.append(f"  guardrail broken: {', '.join(broken)}")
    return out


def _goodput_lines(doc: SweepComparison) -> list[str]:
    """Goodput level by level, when SLO targets were given and some level's attainment is known."""
    sides = (("baseline", doc.baseline), ("candidate", doc.candidate))
    if not (doc.slo and any(lv.goodput.attainment is not UNSET for _side, s in sides for lv in s.levels)):
        return []
    out = ["Goodput per level (requests/s meeting every target; attainment)"]
    for side, s in sides:
        for lv in s.levels:
            g = lv.goodput
            text = (
                f"{qty(g.value, 'req/s')} ({num(100 * g.attainment)} % met)"
                if g.attainment is not UNSET
                else f"unknown: {g.note or ''}"
            )
            out.append(_cut(f"  {side[0].upper()} {lv.load:<16} {text}", WIDTH))
    return out + [""]
