"""Compare and inspect run sets (``wb compare``, ``wb inspect``): the runs named as typed,
resolved and checked once (``compare/run_sets.py``), the one engine, the way out of a refusal;
two load sweeps are compared at matched load.

Everything a comparison reads is resolved here, for the command line, the TUI and the server
alike: the words of ``--change``/``--accept``/``--why``/``--metric`` and the lens extensions
(``$WB_LENS_EXTENSIONS`` where the use case runs, and ``--extension`` files on a local store:
a server reads none of a client's files).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Generic, Literal, TypeVar

import msgspec

from lenses import builtin_lens
from store.errors import StoreError
from store.records import RunRecord
from workbench.compare import compare, inspect, lens_with_metric, parse_accepts, parse_change
from workbench.compare.host_activity import HostReport, between
from workbench.compare.inspect_data import InspectResult, series
from workbench.compare.model import Comparison
from workbench.compare.run_sets import SHAPE, Selection, check_run_sets
from workbench.compare.sweep_result import SweepComparison
from workbench.compare.way_out import Declarable, WayOut, declarable, rerun_words, way_out
from workbench.errors import NotFound, UsageError
from workbench.investigations.comparisons import comparison_in
from workbench.training.op_rates import RANK_TABLES, Reduced, reduce_stored
from workbench.training.window_kind import steady_steps, unsteady_steps
from workbench.usecases.core import Answer, Context, Request, operation

A = TypeVar("A")


class RunSetRequest(Request[A], Generic[A], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``BASE... --vs CAND... [--control APRIME...]`` and what the comparison declares."""

    baseline: list[str]
    candidate: list[str]
    control: list[str] = []
    lens: str | None = None
    change: list[str] = []  # DIM, DIM=FROM:TO or DIM=FROM->TO, as --change
    accept: list[str] = []  # DIM[,DIM...], as --accept
    why: list[str] = []  # one per accept, or one for all, as --why
    metric: str | None = None  # inference: the primary metric, as --metric
    extensions: list[str] = []  # --extension files (a local store only)


def _extensions(ctx: Context, given: list[str]) -> list[str]:
    if given and ctx.served:
        raise UsageError(
            "--extension names a file here; with --server the server's lens extensions apply (WB_LENS_EXTENSIONS "
            "where it runs)"
        )
    return [*(p for p in os.environ.get("WB_LENS_EXTENSIONS", "").split(os.pathsep) if p), *given]


def selection(ctx: Context, req: RunSetRequest[Any], command: str, leave_out: Sequence[str] = ()) -> Selection:
    """The runs of each side and the parsed declarations (``compare``'s and ``inspect``'s keyword
    arguments but the lens); the runs without the tables of ``leave_out``."""
    if not req.candidate:
        raise UsageError(f"name the candidate runs: wb {command} {SHAPE}")
    changes = dict(parse_change(c) for c in req.change)
    accepts = parse_accepts(tuple(req.accept), tuple(req.why))
    extensions = _extensions(ctx, req.extensions)
    store = ctx.store
    try:
        with store.reading():  # one snapshot of the store for every side
            sides = check_run_sets(
                *(store.resolve_runs(list(refs)) for refs in (req.baseline, req.candidate, req.control))
            )
            base, cand, aprime = (
                store.load_runs(list(ids), leave_out=leave_out)
                for ids in (sides.baseline, sides.candidate, sides.control)
            )
    except StoreError as exc:
        raise NotFound(str(exc)) from None
    chosen = Selection(baseline=base, candidate=cand, changes=changes, accepts=accepts, extensions=extensions)
    if req.control:
        chosen["control"] = aprime
    return chosen


def _engine_lens(req: RunSetRequest[Any], chosen: Selection) -> Any:
    # The name given, or with --metric the lens made from it (the way out says the words given).
    return lens_with_metric([*chosen["baseline"], *chosen["candidate"]], req.lens, chosen["extensions"], req.metric)


def _way_out(result: Comparison, command: str, req: RunSetRequest[Any], chosen: Selection) -> WayOut | None:
    """The commands that resolve a refusal (None: compared)."""
    base: list[Any] = [r.id for r in chosen["baseline"]]
    cand: list[Any] = [r.id for r in chosen["candidate"]]
    control: list[Any] = [r.id for r in chosen.get("control", [])]
    words = rerun_words(
        command, base, cand, req.lens, req.change, chosen["accepts"], req.extensions, control, metric=req.metric
    )
    return way_out(result, base, cand, words, [*chosen["baseline"], *chosen["candidate"]])


class Compared(msgspec.Struct, frozen=True, kw_only=True):
    """A comparison of runs (with the way out of a refusal), or of two load sweeps."""

    comparison: Comparison | None = None
    way_out: WayOut | None = None
    sweep: SweepComparison | None = None

    def document(self) -> dict[str, Any]:
        """``wb compare --json``."""
        if self.sweep is not None:
            return self.sweep.to_json()
        assert self.comparison is not None
        doc = self.comparison.to_json()
        if self.way_out is not None:
            doc["way_out"] = self.way_out.to_json()
        return doc

    def to_json(self) -> dict[str, Any]:
        return {
            "comparison": None if self.comparison is None else self.comparison.to_json(),
            "way_out": None if self.way_out is None else self.way_out.to_json(),
            "sweep": None if self.sweep is None else self.sweep.to_json(),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "Compared":
        return cls(
            comparison=None if doc.get("comparison") is None else Comparison.from_json(doc["comparison"]),
            way_out=None if doc.get("way_out") is None else WayOut.from_json(doc["way_out"]),
            sweep=None if doc.get("sweep") is None else SweepComparison.from_json(doc["sweep"]),
        )


class Compare(RunSetRequest[Compared], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb compare``: runs, or one sweep a side (``--slo``, ``--rate-tolerance``)."""

    slo: str | None = None
    rate_tolerance: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.05
    plot: bool = False  # a sweep's curve is drawn from the answer; runs have none


@operation("compare", "read")
def compare_runs(ctx: Context, req: Compare) -> Compared:
    """Compare baseline runs with candidate runs: comparability first, then the delta."""
    sides = _sweep_sides(ctx, req) if not req.control else None
    if sides is not None:  # SWEEP --vs SWEEP: levels matched by load
        return Compared(sweep=_compare_sweeps(ctx, req, sides))
    if req.plot:
        raise UsageError("--plot draws a load sweep's curve: name one sweep on each side (its id sw-... or label)")
    chosen = selection(ctx, req, "compare")
    result = compare(lens=_engine_lens(req, chosen), **chosen)
    return Compared(comparison=result, way_out=_way_out(result, "compare", req, chosen))


def _sweep_sides(ctx: Context, req: Compare) -> tuple[list[int], list[int]] | None:
    """The two sweeps' run ids, or ``None`` when the names are runs (the usual compare)."""
    if len(req.baseline) != 1 or len(req.candidate) != 1:
        return None
    sides = []
    for ref in (req.baseline[0], req.candidate[0]):
        if not ref.startswith("sw-"):
            try:
                ctx.store.resolve_run(ref)
                return None  # a run by that id or label: an ordinary comparison
            except StoreError:
                pass
        from workbench.compare.sweep import find_sweep  # load sweeps only (see OWN_LAZY)

        ids = find_sweep(ctx.store.run_metas("inference"), ref)
        if ids is None:
            return None
        sides.append(ids)
    return sides[0], sides[1]


def _compare_sweeps(ctx: Context, req: Compare, sides: tuple[list[int], list[int]]) -> SweepComparison:
    from workbench.compare.sweep import compare_sweeps, parse_slo  # load sweeps only (see OWN_LAZY)

    if len(req.accept) != len(req.why):
        raise UsageError(f"every --accept needs its own --why TEXT ({len(req.accept)} --accept, {len(req.why)} --why)")
    if set(sides[0]) & set(sides[1]):
        raise UsageError("the same sweep is on both sides")
    store = ctx.store
    # Metadata first; each level's rows are loaded when it is compared (bounded memory).
    meta_only = [store.load_runs(ids, tables=[]) for ids in sides]
    return compare_sweeps(
        meta_only[0],
        meta_only[1],
        metric=req.metric,
        slo=parse_slo(req.slo),
        rate_tolerance=req.rate_tolerance,
        changes=dict(parse_change(c) for c in req.change),
        accepts=dict(zip(req.accept, req.why)),
        load=lambda runs: store.load_runs([int(r.id) for r in runs if r.id is not None]),
    )


class Inspected(msgspec.Struct, frozen=True, kw_only=True):
    """An inspection: the comparison with its per-phase detail, a flight recorder's host side,
    the way out of a refusal, and the plots of ``--plot`` (drawn where the runs are)."""

    result: InspectResult
    host: HostReport | None = None
    way_out: WayOut | None = None
    plots: str | None = None

    def document(self) -> dict[str, Any]:
        """``wb inspect --json``."""
        return {
            **self.result.to_json(),
            **({"host_activity": self.host.to_json()} if self.host else {}),
            **({"way_out": self.way_out.to_json()} if self.way_out else {}),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "inspection": self.result.to_json(),
            "host_activity": None if self.host is None else self.host.to_json(),
            "way_out": None if self.way_out is None else self.way_out.to_json(),
            "plots": self.plots,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "Inspected":
        return cls(
            result=InspectResult.from_json(doc["inspection"]),
            host=None if doc.get("host_activity") is None else HostReport.from_json(doc["host_activity"]),
            way_out=None if doc.get("way_out") is None else WayOut.from_json(doc["way_out"]),
            plots=doc.get("plots"),
        )


class Inspect(RunSetRequest[Inspected], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb inspect``: ``--windows``, ``--top``, ``--ranks``, ``--steps``, ``--plot [--phase]``."""

    windows: Annotated[int, msgspec.Meta(ge=2, le=50)] = 8
    top: Annotated[int, msgspec.Meta(ge=1, le=200)] = 10
    top_ranks: Annotated[int, msgspec.Meta(ge=1, le=200)] = 8
    steps: Literal["all", "steady"] = "all"
    plot: bool = False
    phase: str | None = None
    plot_size: tuple[int, int] | None = None  # columns and lines of the plots (default: the CLI's)


@operation("inspect", "read")
def inspect_runs(ctx: Context, req: Inspect) -> Inspected:
    """Follow a comparable pair's delta into phase distributions, windows over time and operations."""
    # The tables that grow with a job's ranks are reduced from the store a run at a time, never
    # held whole (issue 47); with --steps steady, over each run's steady steps.
    chosen = selection(ctx, req, "inspect", leave_out=RANK_TABLES)
    reduced = _reduced(ctx, chosen["baseline"], chosen["candidate"], steady=req.steps == "steady")
    result = inspect(
        lens=_engine_lens(req, chosen),
        windows=req.windows,
        top=req.top,
        steps=req.steps,
        top_ranks=req.top_ranks,
        reduced=reduced,
        **chosen,
    )
    comparable = result.comparison.comparable
    # Drawn first: a --phase these runs lack is refused before anything is shown.
    plots = _plots(result.comparison.lens, chosen, req) if req.plot and comparable else None
    return Inspected(
        result=result,
        # A flight recorder's host side (stacks, CPU, GC), for a comparable pair like the rest.
        host=between(chosen["baseline"], chosen["candidate"]) if comparable else None,
        way_out=_way_out(result.comparison, "inspect", req, chosen),
        plots=plots,
    )


def _reduced(
    ctx: Context, base: list[RunRecord], cand: list[RunRecord], *, steady: bool
) -> tuple[list[Reduced], list[Reduced]]:
    """Each run's rank tables reduced from the store (the runs were read without them)."""

    def reduced(run: RunRecord) -> Reduced:
        return reduce_stored(ctx.store, int(run.id or 0), unsteady_steps(run) if steady else None)

    with ctx.store.reading():
        return [reduced(r) for r in base], [reduced(r) for r in cand]


def _plots(lens: Any, chosen: Selection, req: Inspect) -> str:
    """The plots of ``--plot`` on the runs the report read (their steady steps with ``--steps steady``)."""
    from workbench.compare.plots import inspect_plots  # plotext, when drawn: only with --plot

    sides = [chosen["baseline"], chosen["candidate"]]
    if req.steps == "steady":
        sides = [[steady_steps(run)[0] for run in runs] for runs in sides]
    if req.plot_size is None:
        return "Plots\n" + inspect_plots(lens, sides[0], sides[1], req.phase)
    return "Plots\n" + inspect_plots(
        lens, sides[0], sides[1], req.phase, width=req.plot_size[0], height=req.plot_size[1]
    )


class RunSpark(Answer, frozen=True, kw_only=True):
    """A run's primary per-item measure over time, reduced to what its sparkline needs: the mean
    of each of at most ``cells`` slices, the extremes, the run's mean (nan: none)."""

    label: str
    slices: tuple[float, ...]
    low: float
    high: float
    mean: float


class RunSparks(Answer, frozen=True, kw_only=True):
    sparks: dict[int, RunSpark]


class SparkRuns(Request[RunSparks], frozen=True, kw_only=True, forbid_unknown_fields=True):
    lens: str
    runs: list[int]
    cells: int = 50


@operation("runs.sparks", "read")
def spark_runs(ctx: Context, req: SparkRuns) -> RunSparks:
    """Each run's measure over time (requests, steps or job starts in order), reduced once."""
    lens = builtin_lens(req.lens)
    out = {}
    for run in ctx.store.load_runs(req.runs):
        values = [float(v) for v in next(iter(series(lens, run).values()), [])]
        n, cells = len(values), min(req.cells, len(values))
        slices = []
        for i in range(cells):
            chunk = [v for v in values[i * n // cells : (i + 1) * n // cells] if math.isfinite(v)]
            slices.append(sum(chunk) / len(chunk) if chunk else math.nan)
        finite = [v for v in values if math.isfinite(v)]
        out[int(run.id)] = RunSpark(  # type: ignore[arg-type]
            label=run.label,
            slices=tuple(slices),
            low=min(finite, default=math.nan),
            high=max(finite, default=math.nan),
            mean=sum(finite) / len(finite) if finite else math.nan,
        )
    return RunSparks(sparks=out)


class StoredWayOut(Answer, frozen=True, kw_only=True):
    """The way out of a stored refused comparison (None: it was compared), and what it would declare."""

    way_out: WayOut | None
    declarable: tuple[Declarable, ...]


class WayOutOfStored(Request[StoredWayOut], frozen=True, kw_only=True, forbid_unknown_fields=True):
    comparison: int


@operation("comparisons.way_out", "read")
def way_out_of_stored(ctx: Context, req: WayOutOfStored) -> StoredWayOut:
    """A stored comparison's way out of its refusal, as ``wb compare`` says it (the runs' own data
    rule out a declaration they contradict)."""
    view, _inv = comparison_in(ctx.store, req.comparison)
    result = view.comparison()
    if result.comparable:
        return StoredWayOut(way_out=None, declarable=())
    params = view.parameters
    base, cand = list(view.baseline_runs), list(view.candidate_runs)
    records = ctx.store.load_runs([int(r) for r in [*base, *cand]], tables=[])
    changes = []
    for name, values in params.changes.items():
        old, new = ("" if v is None else str(v) for v in (list(values) + [None, None])[:2])
        changes.append(
            f"{name}={old}->{new}" if ":" in old + new else f"{name}={old}:{new}" if old or new else str(name)
        )
    words = rerun_words("compare", base, cand, None, changes, dict(params.accepts), (), params.control)
    return StoredWayOut(
        way_out=way_out(result, base, cand, words, records),
        declarable=declarable(result, [int(r) for r in base], [int(r) for r in cand], records),
    )


class InspectStored(Request[Inspected], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The inspection of a stored comparison: the engine again on its parameters (without the A/A
    control runs: the detail is descriptive), with the plots fitted to ``plot_size``."""

    comparison: int
    lens: str  # the investigation's, when the comparison names none
    plot_size: tuple[int, int] | None = None


@operation("inspect.stored", "read")
def inspect_stored(ctx: Context, req: InspectStored) -> Inspected:
    """Inspect a stored comparison's runs with its parameters."""
    from workbench.compare.plots import CLI_W, HEIGHT, inspect_plots  # plotext, when drawn

    view, _inv = comparison_in(ctx.store, req.comparison)
    arguments: dict[str, Any] = {**view.parameters.engine_arguments(), "lens": view.parameters.lens or req.lens}
    baseline, candidate = (  # the rank tables reduced from the store, as wb inspect reads them
        ctx.store.load_runs([int(r) for r in ids], leave_out=RANK_TABLES)
        for ids in (view.baseline_runs, view.candidate_runs)
    )
    result = inspect(baseline, candidate, reduced=_reduced(ctx, baseline, candidate, steady=False), **arguments)
    comparable = result.comparison.comparable
    width, height = req.plot_size or (CLI_W, HEIGHT)
    return Inspected(
        result=result,
        host=between(baseline, candidate) if comparable else None,  # a flight recorder's stacks, CPU, GC
        plots=inspect_plots(result.comparison.lens, baseline, candidate, width=width, height=height)
        if comparable
        else None,
    )


class Sweep(Answer, frozen=True, kw_only=True):
    """A load sweep in the store: one inference run a load level, sharing a sweep id."""

    id: str
    label: str
    tool: str
    runs: tuple[int, ...]  # in level order

    @property
    def name(self) -> str:
        return self.label or self.id


class Sweeps(Answer, frozen=True, kw_only=True):
    items: list[Sweep]


class ListSweeps(Request[Sweeps], frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


@operation("sweeps.list", "read")
def list_sweeps(ctx: Context, req: ListSweeps) -> Sweeps:
    """Every load sweep in the store: id, label, tool and its run ids in level order."""
    from workbench.compare.sweep import sweep_of  # load sweeps only (see OWN_LAZY)

    found: dict[str, tuple[str, str, list[int]]] = {}
    store = ctx.store
    for run in store.load_runs([r.id for r in store.list_runs("inference")], tables=[]):  # metadata only
        sweep = sweep_of(run)
        if sweep is not None:
            entry = found.setdefault(sweep.id, (sweep.label or "", sweep.tool or str(run.meta.get("tool") or ""), []))
            entry[2].append(int(run.id))  # type: ignore[arg-type]
    return Sweeps(
        items=[
            Sweep(id=sweep_id, label=label, tool=tool, runs=tuple(ids))
            for sweep_id, (label, tool, ids) in found.items()
        ]
    )


class CompareSweeps(Request[Compared], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Two load sweeps by their runs (the TUI's picks), with the change and acceptances."""

    baseline: list[int]
    candidate: list[int]
    changes: dict[str, list[str | None]] = {}
    accepts: dict[str, str] = {}


@operation("sweeps.compare", "read")
def compare_sweep_runs(ctx: Context, req: CompareSweeps) -> Compared:
    """Two load sweeps compared at matched load (one level's rows in memory at a time)."""
    from workbench.compare.sweep import compare_sweeps  # load sweeps only (see OWN_LAZY)

    store = ctx.store
    meta_only = [store.load_runs(list(ids), tables=[]) for ids in (req.baseline, req.candidate)]
    result = compare_sweeps(
        meta_only[0],
        meta_only[1],
        changes={k: (v[0] if v else None, v[1] if len(v) > 1 else None) for k, v in req.changes.items()},
        accepts=dict(req.accepts),
        load=lambda runs: store.load_runs([int(r.id) for r in runs if r.id is not None]),
    )
    return Compared(sweep=result)
