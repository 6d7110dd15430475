"""Plain-text lines for trace findings (``wb inspect``, ``wb show``) and for the steps
``--steps steady`` left out: each finding with its status, its sentence and its
evidence figures, so that none is visible only in ``--json``. Strings from captures
(kernel and operator names inside summaries) are cleaned before display."""

from __future__ import annotations

import math
import textwrap
from typing import Any, Iterable, Mapping

from workbench.numbers import num
from workbench.textsafe import clean

WIDTH = 80
_TITLES = {
    "input_stall": "input stall",
    "host_submission": "host submission",
    "exposed_communication": "exposed communication",
    "straggler": "straggler",
    "clock_host_device": "clocks, host/device",
    "clock_ranks": "clocks, across ranks",
    "profile_kind": "profile kind",
    "slowest_rank": "slowest rank",
    "shapes": "by shape",
    "memory": "memory pressure",
    "host_bound": "host time",
    "kernel_coverage": "kernel coverage",
}
_STATUS = {"found": "FOUND", "not_found": "not found", "undecided": "undecided"}


def _figure(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "unknown" if value is None else str(value).lower()
    if isinstance(value, int | float):
        return "unknown" if isinstance(value, float) and not math.isfinite(value) else num(value)
    return clean(value)


def finding_lines(f: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """One finding: ``title: STATUS: summary`` wrapped, then its evidence figures."""
    title = _TITLES.get(str(f.get("check")), clean(f.get("check")))
    head = f"{title}: {_STATUS.get(str(f.get('status')), clean(f.get('status')))}: {clean(f.get('summary', ''))}"
    lines = textwrap.wrap(head, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")
    evidence = f.get("evidence") or {}
    if evidence:
        text = ", ".join(f"{clean(k)} {_figure(v)}" for k, v in evidence.items())
        lines += textwrap.wrap(
            f"evidence: {text}", WIDTH, initial_indent=indent + "  ", subsequent_indent=indent + "    "
        )
    if f.get("hypothesis"):
        lines += textwrap.wrap(
            f"to test: {clean(f['hypothesis'])}", WIDTH, initial_indent=indent + "  ", subsequent_indent=indent + "    "
        )
    return lines


def findings_block(
    findings: Iterable[Mapping[str, Any]], title: str = "Trace findings (observations, not causes)"
) -> list[str]:
    """Findings grouped by side and run, found first within each group."""
    rows = list(findings)
    if not rows:
        return []
    out = [title]
    groups: dict[tuple[str, Any], list[Mapping[str, Any]]] = {}
    for f in rows:
        groups.setdefault((str(f.get("side", "")), f.get("run")), []).append(f)
    order = {"found": 0, "undecided": 1, "not_found": 2}
    for (side, run), items in groups.items():
        if side:
            out.append(
                f"  {'baseline and candidate' if side == 'pair' else side}"
                + (f" run {clean(run)}" if run is not None else "")
                + ":"
            )
        for f in sorted(items, key=lambda x: order.get(str(x.get("status")), 3)):
            out += finding_lines(f, "    " if side else "  ")
    return out + [""]


def steps_block(steps: Mapping[str, Any] | None) -> list[str]:
    """What ``--steps steady`` left out, run by run."""
    if not steps:
        return []
    out = [f"Steps: both sides restricted to their {clean(steps.get('kept'))} steps"]
    for entry in steps.get("excluded") or ():
        left = entry.get("steps") or {}
        what = ", ".join(f"{clean(k)} ({clean(v)})" for k, v in left.items()) if left else "none"
        note = f"; {clean(entry['note'])}" if entry.get("note") else ""
        out += textwrap.wrap(
            f"run {clean(entry.get('run'))}: left out {what}{note}",
            WIDTH,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    return out + [""]


def window_lines(window: Mapping[str, Any]) -> list[str]:
    """The window kind's evidence, the steps that are not steady, the boundary and what a step is."""
    out = []
    evidence = window.get("kind_evidence")
    if isinstance(evidence, Mapping):
        out += textwrap.wrap(
            f"why: {clean(evidence.get('reason', ''))}", WIDTH, initial_indent="  ", subsequent_indent="    "
        )
        for step, why in (evidence.get("steps") or {}).items():
            out += textwrap.wrap(
                f"step {clean(step)}: {clean(why)}", WIDTH, initial_indent="  ", subsequent_indent="    "
            )
        for note in evidence.get("notes") or ():
            out += textwrap.wrap(clean(note), WIDTH, initial_indent="  ", subsequent_indent="    ")
    boundary = window.get("boundary")
    if isinstance(boundary, Mapping):
        text = ", ".join(f"{clean(k)} {_figure(v)}" for k, v in boundary.items())
        out += textwrap.wrap(f"measurement boundary: {text}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    if window.get("step_is"):
        out += textwrap.wrap(
            f"each step is {clean(window['step_is'])}", WIDTH, initial_indent="  ", subsequent_indent="    "
        )
    return out
