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

Both are schemas of the stored JSON (``store.run_meta.Load`` and ``Sweep``): written here as
the plain mappings the store keeps in ``run.meta``, read back typed through ``run.typed_meta``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import get_args

import msgspec

from store.records import RunRecord
from store.run_meta import Load, Sweep, SweepAxis

AXES: tuple[SweepAxis, ...] = get_args(SweepAxis)

# ``meta["load"]`` as stored: Load's fields, every one present (None: unknown).
LoadDoc = dict[str, float | str | None]


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f >= 0 else None


def load_meta(
    *,
    requested_rate: object = None,
    concurrency: object = None,
    strategy: str | None = None,
    achieved_rate: object = None,
) -> LoadDoc:
    """A level's load as stored, every figure a finite number or ``None`` (unknown)."""
    load = Load(
        requested_rate=_finite(requested_rate),
        concurrency=_finite(concurrency),
        strategy=str(strategy) if strategy else None,
        achieved_rate=_finite(achieved_rate),
    )
    doc: LoadDoc = msgspec.structs.asdict(load)
    return doc


# The load of a benchmark told to send every request at once (vLLM's and SGLang's
# ``request_rate: "inf"``): no requested rate, and not an unknown one either.
ALL_AT_ONCE = "all at once"


def load_text(load: Load) -> str:
    """``37.97 req/s``, ``concurrency 8``, ``synchronous`` ... for labels and tables."""
    parts = []
    if load.requested_rate is not None:
        parts.append(f"{load.requested_rate:g} req/s")
    if load.concurrency is not None:
        parts.append(f"concurrency {load.concurrency:g}")
    if not parts and load.strategy:
        parts.append(load.strategy)
    return ", ".join(parts) or "load unknown"


def sweep_axis(loads: Sequence[Load]) -> SweepAxis:
    """What the levels vary: the requested rate when every level states one and they
    differ, else the concurrency, else the strategy (GuideLLM's mixed profiles)."""
    rates = [ld.requested_rate for ld in loads]
    if all(r is not None for r in rates) and len(set(rates)) > 1:
        return "rate"
    conc = [ld.concurrency for ld in loads]
    if all(c is not None for c in conc) and len(set(conc)) > 1:
        return "concurrency"
    return "strategy"


def _order_key(axis: SweepAxis, load: Load) -> tuple[float, ...]:
    # sweep_axis chose the axis because every level states it: the figure is there.
    if axis == "rate":
        return (load.requested_rate or 0.0,)
    if axis == "concurrency":
        return (load.concurrency or 0.0,)
    # Strategies: slowest first (synchronous), then by rate or concurrency, then maximum.
    strategy = load.strategy or ""
    rank = 0 if strategy == "synchronous" else 2 if strategy in ("throughput", ALL_AT_ONCE) else 1
    return (rank, load.requested_rate or load.concurrency or 0.0)


def sweep_id(tool: str, label: str, parts: Sequence[object]) -> str:
    """A stable identity for the sweep: tool, label and what its levels came from. A part
    naming a file (``PATH`` or ``PATH:LINE``) counts by the file's content, not its path,
    so the same files give the same sweep in any checkout or folder."""
    digest = hashlib.sha256(
        "\x1f".join([tool, label, *map(_content, parts)]).encode("utf-8", "surrogatepass")
    ).hexdigest()
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


def mark_sweep(
    runs: list[RunRecord],
    *,
    tool: str,
    label: str,
    parts: Sequence[object],
    summary: Mapping[str, object] | None = None,
    relabel: bool = True,
) -> list[RunRecord]:
    """Give ≥ 2 runs (each with ``meta["load"]``) one sweep identity, in load order.

    ``relabel``: each run's label becomes ``"<label> @ <load>"`` so levels are told
    apart in ``wb runs``. One run alone is a single level, not a sweep: left as it is.
    """
    if len(runs) < 2:
        return runs
    loads = [r.typed_meta.load or Load() for r in runs]
    axis = sweep_axis(loads)
    order = sorted(range(len(runs)), key=lambda i: _order_key(axis, loads[i]))
    ident = sweep_id(tool, label, parts)
    out = []
    for level, i in enumerate(order):
        run = runs[i]
        sweep = Sweep(
            id=ident,
            label=label,
            tool=tool,
            axis=axis,
            level=level,
            levels=len(runs),
            summary=dict(summary) if summary else None,
        )
        run.meta["sweep"] = {k: v for k, v in msgspec.structs.asdict(sweep).items() if k != "summary" or v is not None}
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
        loads = {load_text(r.typed_meta.load or Load()) for r in members}
        if len(loads) > 1:
            mark_sweep(
                members,
                tool=tool,
                label=label or members[0].meta.get("_sweep_label") or tool,
                relabel=False,
                parts=[f"{r.sources[0].resolve()}:{r.meta.get('line')}" for r in members],
            )
            for r in members:
                if label and r.label == label:  # one result per file: "LABEL @ 10 req/s" tells them apart
                    r.label = f"{label} @ {load_text(r.typed_meta.load or Load())}"
        for r in members:
            r.meta.pop("_sweep_label", None)
    return runs
