"""From the rank traces of one job to one training ``RunRecord``.

Checks the ranks belong together (distinct ranks, one world size), applies the step
window policy (warm-up steps and an incomplete last step are excluded and recorded),
and assembles the samples, operations and straggler tables plus the dimensions the
trace can vouch for: hardware from the device properties (``measured``; absent means
unknown), rank count from the world size, framework where the trace shows it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from store.records import Dimension, RunRecord
from store.spooled import SpooledTable
from workbench.errors import BadInput
from workbench.inputs import ImporterOption, ImportOptions
from workbench.training import boundaries, clocks, coverage, step_findings, window_kind
from workbench.training import breakdown as bd
from workbench.training import iterations as it
from workbench.training.model import RankTrace
from workbench.training.rank_summary import RankSummary, summarize
from workbench.vocabulary import JSONDoc

DEFAULT_WARMUP_STEPS = 1
WARMUP_STEPS = ImporterOption(
    "warmup_steps",
    "--warmup-steps",
    f"Steps to drop as warm-up from training traces (default {DEFAULT_WARMUP_STEPS}).",
    int,
    minimum=0,
)


def _param_int(options: ImportOptions, key: str, default: int) -> int:
    value = options.params.get(key, default)
    try:
        value = int(value)
    except (TypeError, ValueError):
        raise BadInput(None, f"{key} must be a non-negative integer, got {value!r}") from None
    if value < 0:
        raise BadInput(None, f"{key} must be a non-negative integer, got {value!r}")
    return value


def check_ranks(ranks: list[RankSummary]) -> None:
    """Two files claiming one rank, or files from different world sizes, are an error."""
    if len(ranks) > 1:
        for trace in ranks:
            if trace.rank is None:
                raise BadInput(
                    trace.source,
                    "has no rank (no distributedInfo.rank), so it cannot be told apart from the other rank files in "
                    "its directory",
                )
    seen: dict[int, RankSummary] = {}
    for trace in ranks:
        if trace.rank is None:
            continue
        if trace.rank in seen:
            raise BadInput(
                trace.source, f"claims rank {trace.rank}, as does {seen[trace.rank].source}: two files for one rank"
            )
        seen[trace.rank] = trace
    worlds = {t.world_size for t in ranks if t.world_size is not None}
    if len(worlds) > 1:
        raise BadInput(
            ranks[0].source.parent,
            f"rank files disagree on the world size ({', '.join(map(str, sorted(worlds)))}): not one job",
        )


def build_job(
    arriving: Iterable[RankSummary | RankTrace],
    options: ImportOptions,
    *,
    format_name: str,
    clock_aligned: bool = False,
) -> RunRecord:
    """One run from the job's ranks: their summaries (``rank_summary.summarize``), or whole traces.

    The ranks are taken one at a time (``parallel.read_each`` yields them as they are
    read): each rank's operations and shapes go to the job's spooled tables at once and
    leave its summary, so the client holds the small per-rank parts (steps, phases, step
    facts, metadata) and the tables' vocabularies, not ranks × operations rows. The
    window policy needs every rank, so it is decided after the last one, on those small
    parts, and applied to the spooled rows as they are written (``store.spooled``)."""
    tables = _JobTables()
    ranks = _take_all(arriving, tables)
    check_ranks(ranks)
    ranks = sorted(ranks, key=lambda t: (-1 if t.rank is None else t.rank, str(t.source)))
    warmup = _param_int(options, "warmup_steps", DEFAULT_WARMUP_STEPS)
    spans = [t.span for t in ranks if t.span is not None]
    origin = min(s[0] for s in spans) if spans else 0

    windows = [t.windows for t in ranks]
    numbers = sorted({float(x) for w in windows for x in w.numbers if not np.isnan(x)})
    steps_from = _steps_from(format_name, options, windows)

    excluded = _excluded_steps(ranks, windows, numbers, warmup) if numbers else {}

    samples = _kept_samples(ranks, windows, excluded, origin)
    operations, shapes, collectives = tables.finish(excluded)
    findings, skew = step_findings.run_all(samples, collectives, clock_aligned)
    kept = [n for n in numbers if n not in excluded]
    facts = _step_facts(ranks, kept)
    findings = _with_coverage(_with_clock_checks(findings, ranks, kept), ranks, kept)
    forward_only = _forward_only(ranks, facts)
    if forward_only is not None:
        findings.append(forward_only)

    window = _job_window(numbers, excluded, warmup, steps_from, samples, facts, forward_only)
    record = RunRecord(
        lens="training", label=_job_label(options, ranks), window=window, sources=[t.source for t in ranks]
    )
    record.dimensions.update(_dimensions(ranks))
    record.tables["samples"] = samples
    record.tables["operations"] = operations  # type: ignore[assignment]  # (as op_shapes, below)
    record.tables["skew"] = skew
    memory = _memory_table(ranks, excluded)
    if memory is not None:
        record.tables["memory"] = memory
    if shapes is not None:
        record.tables["op_shapes"] = shapes  # type: ignore[assignment]  # a Mapping of columns, read from its spool
    record.meta.update(_job_meta(ranks, format_name, clock_aligned, findings))
    return record


def _job_window(
    numbers: list[float],
    excluded: dict[float, str],
    warmup: int,
    steps_from: str,
    samples: dict[str, np.ndarray],
    facts: dict[str, np.ndarray],
    forward_only: step_findings.Finding | None,
) -> JSONDoc:
    """The window: the steps kept and why the others are not, its kind, what ends a step, what a step is."""
    kept = [n for n in numbers if n not in excluded]
    warm_excluded = sum(1 for why in excluded.values() if why == "warm-up")
    window = _window(numbers, excluded, warmup, steps_from)
    window.update(
        window_kind.classify(
            kept,
            _per_step(samples, kept, "step_ms", np.nanmean),
            facts["checkpoint_host_ms"][: len(kept)],
            _per_step(samples, kept, "memcpy_ms", np.nanmean),
            warmup_excluded=warm_excluded,
        )
    )
    if numbers:  # has steps
        window["boundary"] = _boundary(steps_from, kept, warm_excluded, facts, forward_only)
    if forward_only is not None and forward_only.status == "found":
        window["step_is"] = "a forward pass (no backward or optimizer activity in the trace)"
    return window


def _job_label(options: ImportOptions, ranks: list[RankSummary]) -> str:
    """The label given, else the directory and how many ranks: ``traces (8 ranks)``."""
    if options.label:
        return options.label
    directory = ranks[0].source.parent
    return f"{directory.name or directory} ({len(ranks)} rank{'s' if len(ranks) != 1 else ''})"


def _job_meta(
    ranks: list[RankSummary], format_name: str, clock_aligned: bool, findings: list[step_findings.Finding]
) -> dict[str, object]:
    return {
        "format": format_name,
        "ranks_present": [t.rank for t in ranks],
        "clock": "host clocks per rank, not aligned across hosts" if not clock_aligned else "aligned",
        "diagnostics": [f.to_json() for f in findings],
        "rank_meta": {str(t.rank): t.meta for t in ranks},
        "definitions": "docs/training.md",
    }


def _kept_samples(
    ranks: list[RankSummary], windows: list[bd.Windows], excluded: dict[float, str], origin: int
) -> dict[str, np.ndarray]:
    """Every rank's step samples but the excluded steps', each step's start on the job's clock (ms from origin)."""
    parts: list[dict[str, np.ndarray]] = []
    for trace, w in zip(ranks, windows):
        samples = {**trace.samples, "step_start_ms": (w.starts - origin).astype(np.float64) / bd.NS_PER_MS}
        keep = ~np.isin(samples["step"], list(excluded))
        parts.append({k: v[keep] for k, v in samples.items()})
    return _concat(parts, bd.SAMPLE_COLUMNS)


def _boundary(
    steps_from: str,
    kept: list[float],
    warm_excluded: int,
    facts: dict[str, np.ndarray],
    forward_only: step_findings.Finding | None,
) -> JSONDoc:
    """What ends a step in the window (``boundaries.boundary``), and what a step is when the trace may be
    forward passes only."""
    boundary = boundaries.boundary(steps_from, kept, warm_excluded, facts["optimizer_steps"], facts["backward_passes"])
    if forward_only is not None:
        boundary["step_is"] = "forward pass" if forward_only.status == "found" else "training step"
    return boundary


def _take_all(arriving: Iterable[RankSummary | RankTrace], tables: _JobTables) -> list[RankSummary]:
    """Every rank's summary, its rows spooled into ``tables`` as it arrives."""
    try:
        return [tables.take(r if isinstance(r, RankSummary) else summarize(r)) for r in arriving]
    finally:
        # A failure here (or Ctrl-C) between two ranks: close the reader now, so it cancels
        # the rank tasks not yet started instead of reading them when it is collected.
        close = getattr(arriving, "close", None)
        if callable(close):
            close()


def _excluded_steps(
    ranks: list[RankSummary], windows: list[bd.Windows], numbers: list[float], warmup: int
) -> dict[float, str]:
    """Window policy: an incomplete last step (kernel launches whose kernels never appear) is dropped; then
    the first ``warmup`` steps, as long as at least two steps remain. Step number -> why."""
    excluded: dict[float, str] = {}
    last = numbers[-1]
    for trace, w in zip(ranks, windows):
        sel = w.numbers == last
        # Launches with no kernel in every step (graph replays) are the trace's way, not a cut.
        usual = int(trace.unmatched[~sel].max()) if np.any(~sel) else 0
        missing = int(trace.unmatched[sel].sum()) if np.any(sel) else 0
        zero = bool(np.any((w.ends - w.starts)[sel] <= 0))
        if missing > usual or zero:
            excluded[last] = "incomplete last step" + (
                f" ({missing} kernel launches with no kernel in the trace)" if missing > usual else " (no duration)"
            )
            break
    remaining = [n for n in numbers if n not in excluded]
    n_warm = min(warmup, max(len(remaining) - 2, 0))
    for n in remaining[:n_warm]:
        excluded[n] = "warm-up"
    return excluded


def _window(numbers: list[float], excluded: dict[float, str], warmup: int, steps_from: str) -> JSONDoc:
    """The run's window: its policy and the steps it kept and left out (and why)."""
    has_steps = bool(numbers)
    warm_excluded = sum(1 for why in excluded.values() if why == "warm-up")
    return {
        "kind": "steady" if has_steps and warm_excluded else "mixed",
        "warmup_excluded": warm_excluded,
        "steps_from": steps_from,
        "policy": (
            f"steps from {steps_from}; the first {warmup} step(s) excluded as warm-up when at least two steps "
            f"remain; "
            "the last step excluded when incomplete (kernel launches with no kernel in the trace)"
        )
        if has_steps
        else f"{NO_STEPS}: one window covering the whole trace",
        "steps_total": len(numbers),
        "steps_included": [n for n in numbers if n not in excluded],
        "excluded_steps": {str(int(n)): why for n, why in sorted(excluded.items())},
        "last_step_excluded": bool(has_steps and numbers[-1] in excluded and excluded[numbers[-1]] != "warm-up"),
    }


OPERATION_COLUMNS = ("name", "kind", "step", "rank", "count", "total_ms")
SHAPE_COLUMNS = ("name", "shape", "kind", "step", "count", "total_ms", "rank")


class _JobTables:
    """The job's operations and shape tables, spooled rank by rank as the ranks arrive,
    and each (step, rank)'s collective kernel count (the straggler check needs it)."""

    def __init__(self) -> None:
        self.operations = SpooledTable(OPERATION_COLUMNS, text=("name", "kind"), key="step")
        self.shapes = SpooledTable(SHAPE_COLUMNS, text=("name", "shape", "kind"), key="step")
        self.collectives: dict[tuple[float, float], int] = {}

    def take(self, trace: RankSummary) -> RankSummary:
        """The rank's rows into the spools; the summary keeps the rest."""
        order = (-1 if trace.rank is None else trace.rank, str(trace.source))  # the job's rows in rank order, as before
        if trace.operations:
            ops = trace.operations
            rank_key = float("nan") if trace.rank is None else float(trace.rank)
            kinds = (
                np.asarray(trace.labels.get("kind", []), dtype=object)[ops["kind"]]
                if len(ops["kind"])
                else np.zeros(0, dtype=object)
            )
            coll = kinds == "collective"
            for step in np.unique(ops["step"][coll]):
                self.collectives[(float(step), rank_key)] = int(ops["count"][coll & (ops["step"] == step)].sum())
            self.operations.append(ops, trace.labels, order=order)
        if trace.shape_ops is not None:
            rank = np.full(len(trace.shape_ops["count"]), np.nan if trace.rank is None else float(trace.rank))
            self.shapes.append({**trace.shape_ops, "rank": rank}, trace.shape_labels, order=order)
        # Copied: the rank keeps its summary, not a second copy of its rows.
        trace.operations, trace.labels, trace.shape_ops, trace.shape_labels = {}, {}, None, {}
        return trace

    def finish(
        self, excluded: dict[float, str]
    ) -> tuple[SpooledTable, SpooledTable | None, dict[tuple[float, float], int]]:
        """The tables with the excluded steps' rows left out, and the kept steps' collective counts."""
        for table in (self.operations, self.shapes):
            table.order()
            table.exclude(list(excluded))
        collectives = {key: n for key, n in self.collectives.items() if key[0] not in excluded}
        return self.operations, (self.shapes if self.shapes.chunks else None), collectives


def _per_step(samples: dict[str, np.ndarray], steps: list[float], column: str, reduce: Any) -> np.ndarray:
    """``column`` reduced over ranks for each of ``steps`` (NaN where no rank has a value)."""
    out = np.full(len(steps), np.nan)
    values = samples.get(column)
    if values is None:
        return out
    for i, step in enumerate(steps):
        v = values[(samples["step"] == step) & np.isfinite(values)]
        if v.size:
            out[i] = float(reduce(v))
    return out


def _step_facts(ranks: list[RankSummary], steps: list[float]) -> dict[str, np.ndarray]:
    """The ranks' step facts for the kept steps: the most any rank shows (NaN: no rank can say)."""
    out: dict[str, np.ndarray] = {}
    whole = not steps  # no step markers: each rank's one window is the whole trace
    for key in ("checkpoint_host_ms", "optimizer_steps", "backward_ops", "backward_passes"):
        col = np.full(max(len(steps), 1) if whole else len(steps), np.nan)
        for trace in ranks:
            values = trace.facts.get(key)
            if values is None:
                continue
            for i, step in enumerate(steps or [float("nan")]):
                v = values if whole else values[trace.windows.numbers == step]
                v = v[np.isfinite(v)]
                if v.size:
                    col[i] = max(float(v.max()), col[i]) if np.isfinite(col[i]) else float(v.max())
        out[key] = col
    return out


def _with_clock_checks(
    findings: list[step_findings.Finding], ranks: list[RankSummary], kept: list[float]
) -> list[step_findings.Finding]:
    """The clock checks, and the attributions they leave unresolved when the clocks disagree."""
    host_device = clocks.host_device(ranks)
    across = clocks.across_ranks(ranks, kept)
    out = []
    for f in findings:
        if host_device.status == "found" and f.check in ("host_submission", "input_stall"):
            f = clocks.unresolved(f, host_device)
        elif across.status == "found" and f.check == "straggler":
            f = clocks.unresolved(f, across)
        out.append(f)
    return out + [host_device, across]


def _forward_only(ranks: list[RankSummary], facts: dict[str, np.ndarray]) -> step_findings.Finding | None:
    """A trace with operators but no backward or optimizer activity: forward passes only (inference-style)."""
    backward, optimizer = facts["backward_ops"], facts["optimizer_steps"]
    if not np.isfinite(backward).any() and not np.isfinite(optimizer).any():
        return None  # no CPU operators (an nsys export, say): the trace cannot tell
    if np.nansum(backward) > 0 or np.nansum(optimizer) > 0:
        return step_findings._finding(
            "profile_kind",
            "not_found",
            "backward or optimizer activity present: training steps",
            {"backward_ops": float(np.nansum(backward)), "optimizer_steps": float(np.nansum(optimizer))},
        )
    return step_findings._finding(
        "profile_kind",
        "found",
        "the trace looks like forward passes only (no backward operator, no optimizer step): each step is a forward "
        "pass, "
        "not a training step",
        {"backward_ops": 0, "optimizer_steps": 0},
        'step time here is forward time; compare it only with forward-only traces (docs/training.md, "Forward-only '
        'traces")',
    )


NO_STEPS = "no steps (no step marker, optimizer-step or data-loader annotation in the trace)"
_INFERRED = {
    it.OPTIMIZER: "Optimizer.step# annotations (no step marker: an iteration ends where an optimizer step ends)",
    it.LOADER: "DataLoader __next__ annotations (no step marker: an iteration begins where a batch is asked for)",
}


def _marker(format_name: str, options: ImportOptions) -> str:
    if format_name.startswith("Kineto"):
        return "ProfilerStep#N"
    pattern = options.params.get("step_pattern")
    return f"NVTX ranges matching {pattern}" if pattern else "NVTX step ranges (default pattern)"


def _steps_from(format_name: str, options: ImportOptions, windows: list[bd.Windows]) -> str:
    """What the job's steps are: the format's markers, the iterations annotations mark, or none."""
    found = sorted({w.boundary for w in windows if w.boundary != it.NONE and len(w.numbers)})
    if not found:
        return NO_STEPS
    names = [_marker(format_name, options) if b == it.MARKER else _INFERRED[b] for b in found]
    return names[0] if len(names) == 1 else "ranks differ: " + "; ".join(names)


def _with_coverage(
    findings: list[step_findings.Finding], ranks: list[RankSummary], kept: list[float]
) -> list[step_findings.Finding]:
    """The kernel coverage check, and the idle-time findings it withholds when kernels are missing."""
    check = coverage.kernel_coverage(ranks, kept)
    if check.status == "found":
        findings = [coverage.withheld(f, check) if f.check in coverage.WITHHELD else f for f in findings]
    return [*findings, check]


def _memory_table(ranks: list[RankSummary], excluded: dict[float, str]) -> dict[str, np.ndarray] | None:
    """The job's memory table (per step and rank), excluded steps left out."""
    parts = []
    for trace in ranks:
        if trace.memory is None:
            continue
        table = {
            "step": trace.windows.numbers.astype(np.float64),
            "rank": np.full(len(trace.windows.numbers), np.nan if trace.rank is None else float(trace.rank)),
            **trace.memory,
        }
        keep = ~np.isin(table["step"], list(excluded))
        parts.append({k: np.asarray(v)[keep] for k, v in table.items()})
    if not parts:
        return None
    return _concat(parts, tuple(parts[0]))


def _concat(parts: list[dict[str, np.ndarray]], columns: tuple[str, ...]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for col in columns:
        arrays = [p[col] for p in parts if col in p]
        if not arrays:
            out[col] = np.zeros(0)
            continue
        if any(a.dtype.kind in "UO" for a in arrays):  # text: objects (shared strings), never fixed-width rows
            out[col] = np.concatenate([a.astype(object) for a in arrays])
        else:
            out[col] = np.concatenate(arrays).astype(np.float64)
    return out


def _dimensions(ranks: list[RankSummary]) -> dict[str, Dimension]:
    dims: dict[str, Dimension] = {}
    devices = [t.devices for t in ranks]
    if devices and all(devices):
        names = sorted({name for d in devices for name in d})
        dims["hardware"] = Dimension(" + ".join(names), "measured")
    worlds = {t.world_size for t in ranks if t.world_size is not None}
    if worlds:
        dims["rank_count"] = Dimension(int(next(iter(worlds))), "measured")
    elif len(ranks) == 1 and ranks[0].rank is None:
        # No distributedInfo at all: PyTorch writes it whenever torch.distributed is up.
        dims["rank_count"] = Dimension(1, "derived")
    frameworks = {t.framework for t in ranks}
    if len(frameworks) == 1 and None not in frameworks:
        dims["framework"] = Dimension(next(iter(frameworks)), "measured")
    return dims
