"""Where a stored hypothesis came from, for the rule that it is decided by its own test
(``workbench.bundle.decisive``: the same rule ``wb evidence verify --recompute`` applies).

A hypothesis records, when it is written, the highest id of each evidence table
(``evidence_before``): a record at or below it existed already and cannot decide it. The
observations pinned by then are what it was derived from; the comparisons, figures (run
sets), rerun comparisons and executions they rest on cannot decide it either. A hypothesis
written before wb recorded this is placed by time: what was recorded no later than it
(times are to the second, so a tie counts as before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.bundle.decisive import (
    TABLES,
    Origin,
    figures_of,
    not_its_test,
    recorded_before,
    rerun_cannot_decide,
    same_as_origin,
)

if TYPE_CHECKING:
    from store.evidence import EvidenceReader


def latest_ids(read: "EvidenceReader", written_at: str | None = None) -> dict[str, int]:
    """The highest id of each evidence table now (or, with ``written_at``, among the rows
    written no later than it): the tables ``bundle.decisive`` names, every one."""
    out = read.latest_ids(written_at)
    assert set(out) == set(TABLES)
    return out


def origin_of(read: "EvidenceReader", hypothesis: Any) -> Origin:
    """The hypothesis row's :class:`Origin`, from the store."""
    before = dict(hypothesis.evidence_before or {}) or latest_ids(read, hypothesis.created_at)
    rows = read.observations_up_to(hypothesis.investigation_id, before.get("observation", 0))
    comparisons, reruns, figures = set(), set(), set()
    for row in rows:
        cited, rerun_ids, runs = _rested_on(row.evidence or [], row.source or "")
        comparisons |= cited
        reruns |= rerun_ids
        figures |= runs
    for cid in comparisons:
        found = read.comparison(cid)
        if found is not None:
            figures.add(figures_of(found.baseline_runs or [], found.candidate_runs or []))
    executions = {r.execution_id for rid in reruns if (r := read.rerun_comparison(rid)) is not None}
    return Origin(
        test_kind=hypothesis.test_kind,
        before=before,
        comparisons=frozenset(comparisons),
        figures=frozenset(figures),
        reruns=frozenset(reruns),
        executions=frozenset(executions),
    )


def _rested_on(evidence: list[Any], source: str) -> tuple[set[int], set[int], set[tuple[Any, Any]]]:
    """What one observation rests on: the comparisons and rerun comparisons it cites, the
    figures (run sets) of the engine's evidence it carries."""
    comparisons, reruns, figures = set(), set(), set()
    kind, sep, number = source.partition(":")
    if sep and kind == "comparison" and number.isdigit():
        comparisons.add(int(number))
    for item in evidence:
        if not isinstance(item, dict):
            continue
        if item.get("kind") == "comparison" and isinstance(item.get("id"), int):
            comparisons.add(item["id"])
        if item.get("kind") == "rerun_comparison" and isinstance(item.get("id"), int):
            reruns.add(item["id"])
        runs = item.get("runs")
        if (
            isinstance(runs, dict)
            and isinstance(runs.get("baseline"), list)
            and isinstance(runs.get("candidate"), list)
        ):
            figures.add(figures_of(runs["baseline"], runs["candidate"]))
    return comparisons, reruns, figures


def origin_problem(read: "EvidenceReader", ev: dict[str, object], origin: Origin) -> str | None:
    """Why the evidence is not the hypothesis's own test (``None``: it is): its kind, its time,
    or the observations the hypothesis was derived from."""
    kind, rid = str(ev["kind"]), int(ev["id"])  # type: ignore[call-overload]
    wrong = not_its_test(origin.test_kind, kind)
    if wrong:
        return wrong
    ref = f"{kind.replace('_', ' ')} {rid}"
    if kind == "comparison":
        row = read.comparison(rid)
        figures = figures_of(row.baseline_runs or [], row.candidate_runs or [])  # type: ignore[union-attr]
        return recorded_before(origin, kind, ref, rid) or same_as_origin(origin, kind, ref, rid, figures=figures)
    if kind == "rerun_comparison":
        rerun = read.rerun_comparison(rid)
        return recorded_before(origin, kind, ref, rid) or same_as_origin(
            origin,
            kind,
            ref,
            rid,
            execution=rerun.execution_id,  # type: ignore[union-attr]
        )
    if kind == "rerun_plan":
        return _plan_problem(read, rid, origin)
    if kind == "bisection":
        bisection = read.bisection_by_id(rid)
        state = bisection.state if bisection is not None else {}
        steps = {st.get("comparison_id") for st in (state or {}).get("steps") or [] if isinstance(st, dict)}
        if steps & origin.reruns:
            return f"{ref}'s steps are what the observation it was derived from rests on, not its test"
        return recorded_before(origin, kind, ref, rid)
    return recorded_before(origin, kind, ref, rid)


def _plan_problem(read: "EvidenceReader", plan_id: int, origin: Origin) -> str | None:
    """A plan decides through a rerun comparison of its own that can decide and is the
    hypothesis's test (recorded after it, not the rerun it was derived from)."""
    rows = read.plan_comparisons(plan_id)
    reasons = []
    for r in rows:
        ref = f"rerun comparison {r.id}"
        execution = read.execution(r.execution_id)
        reason = (
            rerun_cannot_decide(ref, r.verdict, getattr(execution, "status", None))
            or recorded_before(origin, "rerun_comparison", ref, int(r.id))  # type: ignore[arg-type]
            or same_as_origin(origin, "rerun_comparison", ref, int(r.id), execution=r.execution_id)  # type: ignore[arg-type]
        )
        if reason is None:
            return None
        reasons.append(reason)
    return f"plan {plan_id} has no rerun comparison that is this hypothesis's test ({reasons[-1]})" if reasons else None
