"""Load levels and sweeps: one run per load level, levels grouped by a sweep identity.

Every inference benchmark run says the load it was measured at in ``meta["load"]``::

    {"requested_rate": req/s or None, "concurrency": N or None,
     "strategy": "constant" | "poisson" | "synchronous" | "throughput" | ... or None,
     "achieved_rate": req/s or None}

(``None`` where the file does not say; ``request_rate: "inf"`` is no requested rate).
When one file or folder holds several levels, each level's run also gets
``meta["sweep"]``::

    {"id": "sw-…", "label", "tool", "axis": "rate" | "concurrency" | "strategy",
     "level": index in load order, "levels": count, "summary": {...} (optional)}

The sweep summary (figures over every level together) is metadata of the sweep, never
a level of its own: it mixes loads and cannot be compared as one.

Both are typed as ``TypedDict`` (:class:`Load`, :class:`SweepMeta`), not records: they
live inside ``run.meta``, which the store keeps as JSON, so they stay plain mappings that
round-trip through it unchanged.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from store.records import RunRecord

AXES = ("rate", "concurrency", "strategy")


class Load(TypedDict):
    """``meta["load"]``: the load a run was measured at (``None``: the file does not say)."""

    requested_rate: float | None
    concurrency: float | None
    strategy: str | None
    achieved_rate: float | None


class SweepMeta(TypedDict):
    """``meta["sweep"]``: the sweep a level's run belongs to."""

    id: str
    label: str
    tool: str
    axis: str  # one of AXES
    level: int  # index in load order
    levels: int
    summary: NotRequired[Mapping[str, object]]  # figures over every level: never a level


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f >= 0 else None


def load_meta(*, requested_rate: object = None, concurrency: object = None, strategy: str | None = None,
              achieved_rate: object = None) -> Load:
    """A level's load, every figure a finite number or ``None`` (unknown)."""
    return {
        "requested_rate": _finite(requested_rate),
        "concurrency": _finite(concurrency),
        "strategy": str(strategy) if strategy else None,
        "achieved_rate": _finite(achieved_rate),
    }


def load_text(load: Mapping[str, object]) -> str:
    """``37.97 req/s``, ``concurrency 8``, ``synchronous`` ... for labels and tables."""
    parts = []
    if load.get("requested_rate") is not None:
        parts.append(f"{load['requested_rate']:g} req/s")
    if load.get("concurrency") is not None:
        parts.append(f"concurrency {load['concurrency']:g}")
    if not parts and load.get("strategy"):
        parts.append(str(load["strategy"]))
    return ", ".join(parts) or "load unknown"


def sweep_axis(loads: Sequence[Mapping[str, object]]) -> str:
    """What the levels vary: the requested rate when every level states one and they
    differ, else the concurrency, else the strategy (GuideLLM's mixed profiles)."""
    rates = [ld.get("requested_rate") for ld in loads]
    if all(r is not None for r in rates) and len(set(rates)) > 1:
        return "rate"
    conc = [ld.get("concurrency") for ld in loads]
    if all(c is not None for c in conc) and len(set(conc)) > 1:
        return "concurrency"
    return "strategy"


def _order_key(axis: str, load: Mapping[str, object]) -> tuple:
    if axis == "rate":
        return (load["requested_rate"],)
    if axis == "concurrency":
        return (load["concurrency"],)
    # Strategies: slowest first (synchronous), then by rate or concurrency, then maximum.
    strategy = load.get("strategy") or ""
    rank = 0 if strategy == "synchronous" else 2 if strategy in ("throughput", "inf rate") else 1
    return (rank, load.get("requested_rate") or load.get("concurrency") or 0.0)


def sweep_id(tool: str, label: str, parts: Sequence[object]) -> str:
    """A stable identity for the sweep: tool, label and what its levels came from. A part
    naming a file (``PATH`` or ``PATH:LINE``) counts by the file's content, not its path,
    so the same files give the same sweep in any checkout or folder."""
    digest = hashlib.sha256("\x1f".join([tool, label, *map(_content, parts)]).encode("utf-8", "surrogatepass")).hexdigest()
    return f"sw-{digest[:10]}"


def _content(part: object) -> str:
    text = str(part)
    path, sep, line = text.rpartition(":")
    if not (sep and line.isdigit()):
        path, line = text, ""
    file = Path(path)
    if not file.is_file():
        return text
    with file.open("rb") as f:
        return f"{hashlib.file_digest(f, 'sha256').hexdigest()}:{line}"


def mark_sweep(runs: list[RunRecord], *, tool: str, label: str, parts: Sequence[object],
               summary: Mapping[str, object] | None = None, relabel: bool = True) -> list[RunRecord]:
    """Give ≥ 2 runs (each with ``meta["load"]``) one sweep identity, in load order.

    ``relabel``: each run's label becomes ``"<label> @ <load>"`` so levels are told
    apart in ``wb runs``. One run alone is a single level, not a sweep: left as it is.
    """
    if len(runs) < 2:
        return runs
    loads = [r.meta.get("load") or load_meta() for r in runs]
    axis = sweep_axis(loads)
    order = sorted(range(len(runs)), key=lambda i: _order_key(axis, loads[i]))
    ident = sweep_id(tool, label, parts)
    out = []
    for level, i in enumerate(order):
        run = runs[i]
        sweep: SweepMeta = {"id": ident, "label": label, "tool": tool, "axis": axis, "level": level, "levels": len(runs)}
        if summary:
            sweep["summary"] = summary
        run.meta["sweep"] = sweep
        if relabel:
            run.label = f"{label} @ {load_text(loads[i])}"
        out.append(run)
    return out


def group_levels(runs: list[RunRecord], tool: str, label: str | None) -> list[RunRecord]:
    """Results of one setup at several loads (one file each or appended in one) become
    the levels of one sweep: same model, backend, label and ``--metadata``; different
    request rate or concurrency. Results at one load only stay single runs.

    Each run carries ``meta["_setup"]`` (the grouping key) and ``meta["_sweep_label"]``;
    both are removed here. ``label``: the user's ``--label``, which then names the
    sweep; levels that would all be called LABEL become "LABEL @ 10 req/s" (results
    of one file keep their "LABEL #k")."""
    groups: dict[str, list[RunRecord]] = {}
    for run in runs:
        groups.setdefault(run.meta.pop("_setup"), []).append(run)
    for members in groups.values():
        loads = {load_text(r.meta["load"]) for r in members}
        if len(loads) > 1:
            mark_sweep(members, tool=tool, label=label or members[0].meta.get("_sweep_label") or tool, relabel=False,
                       parts=[f"{r.sources[0].resolve()}:{r.meta.get('line')}" for r in members])
            for r in members:
                if label and r.label == label:  # one result per file: "LABEL @ 10 req/s" tells them apart
                    r.label = f"{label} @ {load_text(r.meta['load'])}"
        for r in members:
            r.meta.pop("_sweep_label", None)
    return runs
