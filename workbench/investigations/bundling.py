"""Between the store and bundles: gather an investigation for export; import one for review.

Export collects plain data from the store and hands it to
:func:`workbench.bundle.export.build_bundle`. Import verifies first, then copies the
bundle's records into the store as a read-only investigation marked as imported,
keeping the bundle text verbatim. Import never runs anything a bundle carries: its
rerun plans stay inside the stored bundle text and are not made into plans.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.bundle.export import build_bundle, rerun_run_ids
from workbench.bundle.reader import DEFAULT_MAX_BYTES, array, content, listed, obj, parse_bundle, read_bundle_bytes
from workbench.bundle.verify import verify_bundle
from workbench.compare.model import verdict_of
from workbench.errors import BadInput, WbError
from workbench.investigations.bundle_refs import Remap
from workbench.investigations.views import ComparisonView, HypothesisView, InvestigationView, ObservationView
from workbench.investigations.workflow import current_user, investigation_view
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from store.api import Store
    from store.investigations import BundleCopy, ImportedBundle, Investigation


class ImportedInvestigation(TypedDict):
    """What ``wb bundle import`` did (its ``--json``): the stored bundle and investigation."""

    bundle: int | None
    investigation: int | None
    already_imported: bool
    checksum: str


# The run's descriptor is a dict[str, object]: its declarations are ``Declared.to_json()``
# documents, typed so (store.declarations), not as JSON values.
def _run_descriptor(store: "Store", run_id: int) -> tuple[dict[str, object], list[JSONDoc]]:
    from store.declarations import history  # SQLModel: loaded with the store, not at import

    record = store.load_run(run_id, tables=[])
    captures: list[JSONDoc] = [
        {
            "sha256": c.sha256,
            "size": c.size,
            "name": c.name,
            "format": c.format,
            "importer": c.importer,
            "importer_version": c.importer_version,
            "imported_at": c.imported_at,
        }
        for c in store.run_captures(run_id)
    ]
    summary = store.get_run(run_id)
    declared = [d.to_json() for d in history(store, [run_id])]
    return (
        {
            "ref": f"run/{run_id}",
            "id": run_id,
            "label": record.label,
            "lens": record.lens,
            "dimensions": {k: d.to_json() for k, d in sorted(record.dimensions.items())},
            "window": record.window,
            "work": {"unit": record.work.unit, "amount": record.work.amount} if record.work else None,
            "quality": record.quality,
            "meta": record.meta,
            "sample_count": summary.sample_count,
            "captures": [c["sha256"] for c in captures],
            # `wb declare` history; absent when none, so older bundles read the same.
            **({"declarations": declared} if declared else {}),
        },
        captures,
    )


def _rerun_records(
    store: "Store",
    hypotheses: Sequence[HypothesisView],
    observations: Sequence[ObservationView] = (),
    action_plans: Sequence[int] = (),
    steps: Sequence[int] = (),
) -> tuple[list[JSONDoc], list[JSONDoc]]:
    """Rerun plans and comparisons linked to hypotheses, cited by observations or bisection
    steps (``steps``: their comparison ids, so a bisection still running is rebuilt too) or
    verifying actions, as stored by the rerun harness."""
    plan_ids = sorted({i for h in hypotheses for i in h.links["rerun_plans"]} | set(action_plans))
    comparison_ids = {i for h in hypotheses for i in h.links["rerun_comparisons"]} | set(steps)
    comparison_ids |= {
        int(e["id"])
        for o in observations
        for e in o.evidence
        if isinstance(e, dict) and e.get("kind") == "rerun_comparison" and isinstance(e.get("id"), int)
    }
    from store.rerun import comparison_ids_of_plans, plan_ids_of_comparisons, records_by_id  # SQLAlchemy

    if plan_ids:  # a linked plan brings every comparison made of its executions
        comparison_ids.update(comparison_ids_of_plans(store, plan_ids))
    if comparison_ids:  # a carried comparison brings the plan it analysed
        plan_ids = sorted(set(plan_ids) | set(plan_ids_of_comparisons(store, sorted(comparison_ids))))
    plans: list[JSONDoc] = []
    comparisons: list[JSONDoc] = []
    for kind, table, ids, sink in (
        ("rerun-plan", "plan", plan_ids, plans),
        ("rerun-comparison", "comparison", sorted(comparison_ids), comparisons),
    ):
        for i, record in zip(ids, records_by_id(store, table, ids)):  # type: ignore[arg-type]
            sink.append({"ref": f"{kind}/{i}", "record": record or {"unavailable": "not found in this store"}})
    return plans, comparisons


def export_investigation(store: "Store", inv: str | int, *, embed_samples: bool = False) -> dict[str, Any]:
    """The bundle for investigation ``inv`` (a dict, sealed with its checksum)."""
    view = investigation_view(store, inv)
    if view.imported:
        raise WbError(f"investigation {view.id} was imported; share the original bundle instead", exit_code=3)
    actions, action_plans = _actions(store, view.id, view.hypotheses)
    bisections = _bisections(store, view.id)
    steps = _cited_by_steps(bisections)
    plans, rerun_comparisons = _rerun_records(store, view.hypotheses, view.observations, action_plans, steps)
    run_ids = _cited_run_ids(view, rerun_comparisons)
    runs, captures = [], []
    for run_id in run_ids:
        desc, caps = _run_descriptor(store, run_id)
        runs.append(desc)
        captures.extend(caps)
    declared_runs = {run_id for run_id, r in zip(run_ids, runs) if r.get("declarations")}
    frame = _frame_doc(view)
    comparisons = [_comparison_doc(c, declared_runs) for c in view.comparisons]
    # Observations and hypotheses travel as their JSON, without the store's own ids.
    observations = [{k: v for k, v in o.to_json().items() if k not in ("id", "label")} for o in view.observations]
    hypotheses = [{k: v for k, v in h.to_json().items() if k != "id"} for h in view.hypotheses]
    samples = None
    if embed_samples:
        samples = {f"run/{i}": store.load_run(i).tables for i in run_ids}
    try:
        return _build(
            frame,
            runs,
            captures,
            comparisons,
            observations,
            hypotheses,
            plans,
            rerun_comparisons,
            samples,
            bisections,
            actions,
        )
    except (ValueError, TypeError) as exc:  # text that cannot be canonicalized (e.g. a lone surrogate)
        raise WbError(f"cannot export investigation {view.id}: {exc}") from None


def _cited_run_ids(view: InvestigationView, rerun_comparisons: list[JSONDoc]) -> list[int]:
    """Every run the investigation cites, once, in the order first cited: the frame's, each comparison's
    (its control's too), then the arms' runs of the carried rerun comparisons (--recompute rebuilds them)."""
    run_ids: list[int] = []
    for ids in [view.baseline_runs, view.candidate_runs] + [
        ids for c in view.comparisons for ids in (c.baseline_runs, c.candidate_runs, _control_ids(c))
    ]:
        run_ids.extend(int(i) for i in ids if i not in run_ids)
    run_ids.extend(i for i in rerun_run_ids(rerun_comparisons) if i not in run_ids)
    return run_ids


def _frame_doc(view: InvestigationView) -> dict[str, Any]:
    return {
        "ref": view.ref,
        "title": view.title,
        "lens": view.lens,
        "question": view.question,
        "guardrails": list(view.guardrails),
        "intended_change": view.intended_change,
        "created_by": view.created_by,
        "created_at": view.created_at,
        "baseline": [f"run/{i}" for i in view.baseline_runs],
        "candidate": [f"run/{i}" for i in view.candidate_runs],
    }


def _comparison_doc(c: ComparisonView, declared_runs: set[int]) -> dict[str, Any]:
    control = _control_ids(c)
    return {
        "ref": c.ref,
        "baseline": [f"run/{i}" for i in c.baseline_runs],
        "candidate": [f"run/{i}" for i in c.candidate_runs],
        # The A/A control runs (baseline again), when the comparison had them.
        **({"control": [f"run/{i}" for i in control]} if control else {}),
        "parameters": c.parameters.to_json(),
        "engine": c.engine.to_json(),
        **_declarations_in_force(c, declared_runs),
        "result": c.result,
        "created_by": c.created_by,
        "created_at": c.created_at,
    }


def _bisections(store: "Store", investigation_id: int) -> list[JSONDoc]:
    """The investigation's bisections (specification and every step), for the recipe."""
    from store.bisect import bisections_of  # SQLAlchemy: loaded with the store, not at import

    return [
        {
            "ref": f"bisection/{r.id}",
            "investigation": f"investigation/{investigation_id}",
            "name": r.name,
            "status": r.status,
            "spec": r.spec,
            "state": r.state,
        }
        for r in bisections_of(store, investigation_id)
    ]


def _cited_by_steps(bisections: Sequence[JSONDoc]) -> list[int]:
    """The rerun comparisons the bisections' steps cite."""
    out = []
    for bisection in bisections:
        state = bisection.get("state")
        steps = state.get("steps") if isinstance(state, dict) else None
        for step in steps if isinstance(steps, list) else []:
            cited = step.get("comparison_id") if isinstance(step, dict) else None
            if isinstance(cited, int):
                out.append(cited)
    return out


def _declarations_in_force(comparison: ComparisonView, declared_runs: set[int]) -> JSONDoc:
    """The ``wb declare`` values the comparison relied on, as its engine recorded them when it
    ran: an input of the recipe, since a run's declarations may have changed since (a
    comparison refused for a missing value, then the value declared). Only where one of its
    runs has a declaration history, so a bundle without any keeps its bytes."""
    if not declared_runs & {*comparison.baseline_runs, *comparison.candidate_runs, *_control_ids(comparison)}:
        return {}
    relied = (comparison.result or {}).get("declarations") or []
    return {"declarations": [{**d, "run": f"run/{d['run']}"} for d in relied if isinstance(d, dict)]}


def _control_ids(comparison: ComparisonView) -> list[int]:
    return [int(i) for i in comparison.parameters.control]


def _actions(
    store: "Store", investigation_id: int, hypotheses: Sequence[HypothesisView]
) -> tuple[list[JSONDoc], list[int]]:
    """The investigation's actions for the recipe (decisions and verifications with them;
    hypotheses cited by the bundle's hypothesis ref, plans by theirs) and the plans they cite.
    Their status is not here: the bundle derives it (``workbench.bundle.action_status``)."""
    from store.actions import action_records  # SQLAlchemy: loaded with the store, not at import

    refs = {h.id: h.ref for h in hypotheses}
    out: list[JSONDoc] = []
    plan_ids: list[int] = []
    with action_records(store) as s:
        for row in s.actions(investigation_id):
            decisions = s.decisions(int(row.id))  # type: ignore[arg-type]
            checks = s.verifications(int(row.id))  # type: ignore[arg-type]
            plan_ids += [int(v.plan_id) for v in checks if v.plan_id is not None]
            out.append(
                {
                    "ref": f"action/{row.id}",
                    "kind": row.kind,
                    "changes": row.changes,
                    "scope": row.scope,
                    "because": [refs.get(int(h), f"hypothesis/{h}") for h in row.because or []],
                    "evidence": row.evidence,
                    "expect": row.expect,
                    "retry": row.retry,
                    "created_by": row.created_by,
                    "created_at": row.created_at,
                    "decisions": [{"decision": d.decision, "by": d.by, "why": d.why, "at": d.at} for d in decisions],
                    "verifications": [
                        {
                            "plan": None if v.plan_id is None else f"rerun-plan/{v.plan_id}",
                            "observed": v.observed,
                            "by": v.by,
                            "at": v.at,
                        }
                        for v in checks
                    ],
                }
            )
    return out, sorted(set(plan_ids))


def _build(
    frame,
    runs,
    captures,
    comparisons,
    observations,
    hypotheses,
    plans,
    rerun_comparisons,
    samples,
    bisections=(),
    actions=(),
) -> JSONDoc:
    return build_bundle(
        investigation=frame,
        runs=runs,
        captures=captures,
        comparisons=comparisons,
        observations=observations,
        hypotheses=hypotheses,
        rerun_plans=plans,
        rerun_comparisons=rerun_comparisons,
        samples=samples,
        bisections=bisections,
        actions=actions,
    )


def import_bundle(
    store: "Store", path: str | Path, *, by: str | None = None, max_bytes: int | None = None
) -> ImportedInvestigation:
    """Verify the bundle at ``path`` and keep it as a read-only, imported investigation.

    Returns ``{"investigation": id, "bundle": id, "already_imported": bool, "checks": ...}``.
    A bundle that fails verification is refused (exit 3); nothing is written.
    """
    path = Path(path)
    raw = read_bundle_bytes(path, max_bytes=max_bytes or DEFAULT_MAX_BYTES)
    bundle = parse_bundle(raw, source=path)
    report = verify_bundle(bundle, source=path)
    if not report.ok:
        raise WbError(
            f"{path}: not imported: verification failed ({', '.join(report.mismatched)}); run 'wb evidence verify' for "
            f"details",
            exit_code=3,
        )
    checksum = str(obj(bundle["checksum"])["value"])  # verified: the checksum's hex text
    by = by or current_user()
    from store.investigations import BundleKeptMeanwhile  # SQLAlchemy: loaded with the store, not at import

    try:
        try:
            return _copy_into_store(store, path, raw.decode("utf-8"), bundle, checksum, by)
        except BundleKeptMeanwhile:
            # A concurrent import kept this bundle between our check and our insert (the
            # unique checksum decides; ours rolled back): the second look finds it.
            return _copy_into_store(store, path, raw.decode("utf-8"), bundle, checksum, by)
    except (AttributeError, TypeError, ValueError, KeyError) as exc:
        raise BadInput(
            path,
            f"verified, but its records have an unexpected shape ({type(exc).__name__}: {exc}); nothing was imported",
        ) from None


def _copy_into_store(
    store: "Store", path: Path, text: str, bundle: JSONDoc, checksum: str, by: str
) -> ImportedInvestigation:
    from store.investigations import copying_bundle  # SQLAlchemy: loaded with the store, not at import

    with copying_bundle(store) as s:
        existing = s.kept(checksum)
        if existing is not None:
            return {"bundle": existing[0], "investigation": existing[1], "already_imported": True, "checksum": checksum}
        kept_id = s.add(_kept_bundle(path, text, bundle, checksum, by))
        frame = obj(bundle.get("investigation") or {})
        inv_id = s.add(_investigation_row(frame, kept_id))
        remap = Remap()  # every citation of the exporting store's ids goes through it
        _copy_comparisons(s, bundle, inv_id, str(frame.get("created_by") or ""), remap)
        _copy_observations(s, bundle, inv_id, remap)
        _copy_hypotheses(s, bundle, inv_id, remap)
        return {"bundle": kept_id, "investigation": inv_id, "already_imported": False, "checksum": checksum}


def _kept_bundle(path: Path, text: str, bundle: JSONDoc, checksum: str, by: str) -> "ImportedBundle":
    from store.investigations import ImportedBundle  # SQLAlchemy: loaded with the store, not at import

    return ImportedBundle(
        checksum=checksum,
        format_version=str(bundle["format_version"]),  # verified: a "MAJOR.MINOR" text
        tool=tool if isinstance(tool := bundle.get("tool"), dict) else {},
        source_name=path.name,
        content=text,  # the bytes that were verified, not a second read
        verified=True,
        imported_by=by,
    )


def _investigation_row(frame: Mapping[str, object], kept_id: int) -> "Investigation":
    from store.investigations import Investigation  # SQLAlchemy: loaded with the store, not at import

    return Investigation(
        title=str(frame.get("title") or ""),
        lens=str(frame.get("lens") or ""),
        question=str(frame.get("question") or ""),
        guardrails=_listed(frame.get("guardrails") or []),
        intended_change=dict(obj(frame.get("intended_change") or {})),
        baseline_runs=_listed(frame.get("baseline") or []),
        candidate_runs=_listed(frame.get("candidate") or []),
        created_by=str(frame.get("created_by") or ""),
        created_at=str(frame.get("created_at") or ""),
        imported_bundle_id=kept_id,
    )


def _copy_comparisons(s: "BundleCopy", bundle: JSONDoc, inv_id: int, created_by: str, remap: Remap) -> None:
    from store.investigations import InvestigationComparison  # SQLAlchemy: loaded with the store, not at import

    results = {c.get("ref"): c.get("result") for c in map(obj, listed(content(bundle, "results"), "comparisons"))}
    for spec in map(obj, listed(content(bundle, "recipe"), "comparisons")):
        result = remap.document(results.get(spec.get("ref")) or {})
        comparison = InvestigationComparison(
            investigation_id=inv_id,
            baseline_runs=_listed(spec.get("baseline") or []),
            candidate_runs=_listed(spec.get("candidate") or []),
            # Run sets are the bundle's refs ("run/6"), the control's too.
            parameters={
                **dict(obj(spec.get("parameters") or {})),
                **({"control": _listed(spec["control"])} if spec.get("control") else {}),
            },
            engine=dict(obj(spec.get("engine") or {})),
            result=result,
            comparable=bool(result.get("comparable")),
            verdict=verdict_of(result),
            origin_ref=_origin(spec),
            created_by=created_by,
        )
        remap.copied[str(spec.get("ref"))] = s.add(comparison)


def _copy_observations(s: "BundleCopy", bundle: JSONDoc, inv_id: int, remap: Remap) -> None:
    from store.investigations import Observation  # SQLAlchemy: loaded with the store, not at import

    observations = [obj(o) for o in array(bundle.get("observations"))]
    for obs in observations:
        row = Observation(
            investigation_id=inv_id,
            text=str(obs.get("text") or ""),
            evidence=remap.evidence(obs.get("evidence") or []),
            source=remap.source(str(obs.get("source") or "manual")),
            origin_ref=_origin(obs),
            pinned_by=str(obs.get("pinned_by") or ""),
            pinned_at=str(obs.get("pinned_at") or ""),
        )
        remap.copied[str(obs.get("ref"))] = s.add(row)
    for obs in observations:  # a retraction may be listed before or after what it retracts
        if obs.get("retracts"):
            s.retracts(remap.copied[str(obs.get("ref"))], remap.copied.get(str(obs.get("retracts"))))


def _copy_hypotheses(s: "BundleCopy", bundle: JSONDoc, inv_id: int, remap: Remap) -> None:
    from store.investigations import Hypothesis, HypothesisStatus  # SQLAlchemy: loaded with the store

    for hyp in map(obj, array(bundle.get("hypotheses"))):
        hypothesis = Hypothesis(
            investigation_id=inv_id,
            statement=str(hyp.get("statement") or ""),
            test=str(hyp.get("test") or ""),
            test_kind=None if hyp.get("test_kind") is None else str(hyp.get("test_kind")),  # verified: a kind
            evidence_before=dict(obj(hyp["evidence_before"])) if hyp.get("evidence_before") else None,
            origin_ref=_origin(hyp),
            created_by=str(hyp.get("created_by") or ""),
            created_at=str(hyp.get("created_at") or ""),
        )
        hypothesis_id = s.add(hypothesis)
        for step in map(obj, array(hyp.get("history")) or [{"status": hyp.get("status", "open")}]):
            s.add(
                HypothesisStatus(
                    hypothesis_id=hypothesis_id,
                    status=str(step.get("status") or "open"),
                    evidence=remap.evidence(step.get("evidence") or []),
                    note=str(step.get("note") or ""),
                    decided_by=str(step.get("decided_by") or ""),
                    decided_at=str(step.get("decided_at") or ""),
                )
            )


def _listed(value: object) -> list[object]:
    """``list(value)`` of a bundle's array (another iterable is listed as ``list`` would)."""
    if isinstance(value, Iterable):
        return list(value)
    raise TypeError(f"{type(value).__name__!r} object is not iterable")


def _origin(record: Mapping[str, object]) -> str | None:
    """The record's ref in the bundle it came from (``comparison/3``), kept as its origin."""
    ref = record.get("ref")
    return None if ref is None else str(ref)
