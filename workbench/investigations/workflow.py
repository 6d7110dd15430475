"""The headless investigation workflow: frame, compare, pin observations, hypothesize.

Every function takes an open ``Store`` and returns plain dicts (what ``--json``
prints). Rules kept here rather than in the CLI so the TUI gets them too:

- an observation is never edited: :func:`retract_observation` pins a retraction;
- hypotheses and observations stay apart; nothing turns one into the other;
- ``supported`` and ``refuted`` need evidence (a rerun plan or a comparison);
- an imported investigation is read-only.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.bundle.canonical import bundle_value, nfc
from workbench.errors import NotFound, UsageError, WbError

if TYPE_CHECKING:
    from store.api import Store

from store.records import LENSES
from workbench.bundle.format import OBSERVATION_LABEL

HYPOTHESIS_STATUSES = ("open", "supported", "refuted", "undetermined")
DECIDED = ("supported", "refuted")


def current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "unknown"


def _text(value: str, what: str) -> str:
    value = nfc(str(value)).strip()
    if not value:
        raise UsageError(f"{what} must not be empty")
    return value


def parse_id(ref: str | int, kind: str) -> int:
    """``12``, ``"12"`` or ``"investigation/12"`` -> 12."""
    text = str(ref).strip()
    prefix = f"{kind}/"
    if text.startswith(prefix):
        text = text[len(prefix):]
    if not text.isdigit():
        raise UsageError(f"{kind} reference {str(ref)!r} is not an id")
    return int(text)


def resolve_runs(store: "Store", refs: Sequence[str | int]) -> list[int]:
    """Run ids for ids or labels, as a user-facing error when one does not resolve."""
    from store.errors import StoreError

    try:
        return store.resolve_runs(list(refs))
    except StoreError as exc:
        raise NotFound(str(exc)) from None


# -- frame ---------------------------------------------------------------------


def create_investigation(
    store: "Store",
    *,
    lens: str,
    question: str,
    guardrails: Sequence[str] = (),
    intended_change: Mapping[str, Sequence[Any]] | None = None,
    baseline: Sequence[str | int] = (),
    candidate: Sequence[str | int] = (),
    title: str = "",
    by: str | None = None,
) -> dict[str, Any]:
    from store.investigations import Investigation

    if lens not in LENSES:
        raise UsageError(f"unknown lens {lens!r} (choose {', '.join(LENSES)})")
    row = Investigation(
        title=nfc(title).strip(),
        lens=lens,
        question=_text(question, "the decision question"),
        guardrails=[nfc(g) for g in guardrails],
        intended_change=bundle_value({k: list(v) for k, v in (intended_change or {}).items()}),
        baseline_runs=resolve_runs(store, baseline),
        candidate_runs=resolve_runs(store, candidate),
        created_by=by or current_user(),
    )
    with store.session() as s:
        s.add(row)
        s.flush()
        inv_id = int(row.id)  # type: ignore[arg-type]
    return show_investigation(store, inv_id)


def _investigation_row(session: Any, inv: str | int, *, writable: bool = False) -> Any:
    from store.investigations import Investigation

    inv_id = parse_id(inv, "investigation")
    row = session.get(Investigation, inv_id)
    if row is None:
        raise NotFound(f"no investigation {inv_id} (see 'wb investigate list')")
    if writable and row.imported_bundle_id is not None:
        raise WbError(f"investigation {inv_id} was imported from a bundle and is read-only", exit_code=3)
    return row


def _frame(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "ref": f"investigation/{row.id}",
        "title": row.title,
        "lens": row.lens,
        "question": row.question,
        "guardrails": list(row.guardrails or []),
        "intended_change": dict(row.intended_change or {}),
        "baseline_runs": list(row.baseline_runs or []),
        "candidate_runs": list(row.candidate_runs or []),
        "created_by": row.created_by,
        "created_at": row.created_at,
        "imported": row.imported_bundle_id is not None,
        "imported_bundle_id": row.imported_bundle_id,
    }


def list_investigations(store: "Store") -> list[dict[str, Any]]:
    from sqlalchemy import func
    from sqlmodel import select

    from store.investigations import Hypothesis, Investigation, InvestigationComparison, Observation

    with store.session() as s:
        rows = s.exec(select(Investigation).order_by(Investigation.id)).all()
        out = []
        for row in rows:
            counts = {
                name: int(s.exec(select(func.count()).select_from(t).where(t.investigation_id == row.id)).one())
                for name, t in (("comparisons", InvestigationComparison), ("observations", Observation), ("hypotheses", Hypothesis))
            }
            out.append({**_frame(row), **counts})
    return out


def show_investigation(store: "Store", inv: str | int) -> dict[str, Any]:
    """The frame with its comparisons, observations (retractions kept) and hypotheses."""
    from sqlmodel import select

    from store.investigations import Hypothesis, HypothesisStatus, InvestigationComparison, Observation

    with store.session() as s:
        row = _investigation_row(s, inv)
        comparisons = s.exec(
            select(InvestigationComparison).where(InvestigationComparison.investigation_id == row.id).order_by(InvestigationComparison.id)
        ).all()
        observations = s.exec(select(Observation).where(Observation.investigation_id == row.id).order_by(Observation.id)).all()
        hypotheses = s.exec(select(Hypothesis).where(Hypothesis.investigation_id == row.id).order_by(Hypothesis.id)).all()
        history: dict[int, list[Any]] = {h.id: [] for h in hypotheses}
        if hypotheses:
            for st in s.exec(
                select(HypothesisStatus).where(HypothesisStatus.hypothesis_id.in_(list(history))).order_by(HypothesisStatus.id)  # type: ignore[attr-defined]
            ).all():
                history[st.hypothesis_id].append(st)
        return {
            **_frame(row),
            "comparisons": [comparison_view(c) for c in comparisons],
            "observations": _observation_views(observations),
            "hypotheses": [hypothesis_view(h, history[h.id]) for h in hypotheses],
        }


def comparison_view(row: Any, *, with_result: bool = True) -> dict[str, Any]:
    view = {
        "id": row.id,
        "ref": f"comparison/{row.id}",
        "baseline_runs": list(row.baseline_runs or []),
        "candidate_runs": list(row.candidate_runs or []),
        "parameters": dict(row.parameters or {}),
        "engine": dict(row.engine or {}),
        "comparable": row.comparable,
        "verdict": row.verdict,
        "created_by": row.created_by,
        "created_at": row.created_at,
    }
    if with_result:
        view["result"] = dict(row.result or {})
    return view


def _observation_views(rows: Sequence[Any]) -> list[dict[str, Any]]:
    retracted_by = {r.retracts_id: r.id for r in rows if r.retracts_id is not None}
    return [
        {
            "id": r.id,
            "ref": f"observation/{r.id}",
            "label": OBSERVATION_LABEL,
            "kind": "retraction" if r.retracts_id is not None else "observation",
            "text": r.text,
            "evidence": list(r.evidence or []),
            "source": r.source,
            "retracts": None if r.retracts_id is None else f"observation/{r.retracts_id}",
            "retracted_by": None if r.id not in retracted_by else f"observation/{retracted_by[r.id]}",
            "pinned_by": r.pinned_by,
            "pinned_at": r.pinned_at,
        }
        for r in rows
    ]


def hypothesis_view(row: Any, history: Sequence[Any]) -> dict[str, Any]:
    steps = [
        {"status": h.status, "evidence": list(h.evidence or []), "note": h.note, "decided_by": h.decided_by, "decided_at": h.decided_at}
        for h in history
    ]
    links: dict[str, list[Any]] = {"rerun_plans": [], "comparisons": [], "rerun_comparisons": []}
    for step in steps:
        for ev in step["evidence"]:
            key = {"rerun_plan": "rerun_plans", "comparison": "comparisons", "rerun_comparison": "rerun_comparisons"}.get(ev.get("kind"))
            if key and ev.get("id") not in links[key]:
                links[key].append(ev.get("id"))
    return {
        "id": row.id,
        "ref": f"hypothesis/{row.id}",
        "statement": row.statement,
        "test": row.test,
        "status": steps[-1]["status"] if steps else "open",
        "links": links,
        "history": steps,
        "created_by": row.created_by,
        "created_at": row.created_at,
    }


# -- compare -------------------------------------------------------------------


def engine_identity() -> dict[str, str]:
    from workbench import __version__

    return {"name": "workbench.compare", "version": __version__}


def default_compare_engine() -> Callable[..., Any]:
    try:
        from workbench.compare import compare
    except ImportError as exc:
        raise WbError(f"the compare engine is not available ({exc})") from None
    return compare


def add_comparison(
    store: "Store",
    inv: str | int,
    baseline: Sequence[str | int],
    candidate: Sequence[str | int],
    *,
    lens: str | None = None,
    changes: Mapping[str, Sequence[Any]] | None = None,
    accepts: Mapping[str, str] | None = None,
    engine: Callable[..., Any] | None = None,
    by: str | None = None,
) -> dict[str, Any]:
    """Compare run sets with the compare engine and store its JSON with the parameters.

    ``changes`` defaults to the investigation's intended change. A refused comparison
    is stored too: a refusal is a result.
    """
    from store.investigations import InvestigationComparison

    with store.session() as s:
        frame = _frame(_investigation_row(s, inv, writable=True))
    if not baseline or not candidate:
        raise UsageError("name at least one baseline and one candidate run")
    base_ids = resolve_runs(store, baseline)
    cand_ids = resolve_runs(store, candidate)
    lens = lens or frame["lens"]
    changes = {k: list(v) for k, v in (changes if changes is not None else frame["intended_change"]).items()}
    accepts = {k: _text(v, f"the reason for accepting {k}") for k, v in (accepts or {}).items()}
    engine = engine or default_compare_engine()
    result = engine(
        store.load_runs(base_ids),
        store.load_runs(cand_ids),
        lens=lens,
        changes={k: tuple(v) for k, v in changes.items()},
        accepts=dict(accepts),
    )
    doc = bundle_value(result.to_json() if hasattr(result, "to_json") else result)
    from workbench.bundle.export import verdict_of

    row = InvestigationComparison(
        investigation_id=frame["id"],
        baseline_runs=base_ids,
        candidate_runs=cand_ids,
        parameters=bundle_value({"lens": lens, "changes": changes, "accepts": accepts}),
        engine=engine_identity(),
        result=doc,
        comparable=bool(doc.get("comparable")),
        verdict=verdict_of(doc),
        created_by=by or current_user(),
    )
    with store.session() as s:
        s.add(row)
        s.flush()
        inv_row = _investigation_row(s, frame["id"], writable=True)
        if not inv_row.baseline_runs and not inv_row.candidate_runs:
            # The first comparison names the run sets the frame left open.
            inv_row.baseline_runs, inv_row.candidate_runs = base_ids, cand_ids
            s.add(inv_row)
        return comparison_view(row)


def get_comparison(store: "Store", comparison: str | int) -> dict[str, Any]:
    from store.investigations import InvestigationComparison

    cid = parse_id(comparison, "comparison")
    with store.session() as s:
        row = s.get(InvestigationComparison, cid)
        if row is None:
            raise NotFound(f"no stored comparison {cid}")
        return {**comparison_view(row), "investigation_id": row.investigation_id}


# -- observations --------------------------------------------------------------


def parse_evidence(items: Iterable[str], store: "Store | None" = None) -> list[dict[str, Any]]:
    """``KIND=VALUE`` items (run=12, metric=ttft_p95, window=steady, value=110ms ...).

    Runs are resolved to ids when a store is given, so a cited run exists.
    """
    out = []
    for item in items:
        kind, sep, value = str(item).partition("=")
        kind, value = nfc(kind).strip(), nfc(value).strip()
        if not sep or not kind or not value:
            raise UsageError(f"evidence {item!r} is not KIND=VALUE (e.g. run=12, metric=ttft_p95, window=steady, value='110 ms')")
        entry: dict[str, Any] = {"kind": kind, "value": value}
        if kind == "run" and store is not None:
            entry = {"kind": "run", "id": resolve_runs(store, [value])[0]}
        elif kind == "comparison":
            entry = {"kind": "comparison", "id": parse_id(value, "comparison")}
        out.append(entry)
    return out


def pin_observation(
    store: "Store",
    inv: str | int,
    text: str,
    evidence: Sequence[Mapping[str, Any]],
    *,
    source: str = "manual",
    by: str | None = None,
    retracts: int | None = None,
) -> dict[str, Any]:
    from store.investigations import Observation

    if not evidence and retracts is None:
        raise UsageError("an observation cites its evidence (--evidence run=ID, metric=..., window=..., value=...)")
    with store.session() as s:
        inv_row = _investigation_row(s, inv, writable=True)
        row = Observation(
            investigation_id=inv_row.id,
            text=_text(text, "the observation text"),
            evidence=bundle_value(list(evidence)),
            source=source,
            retracts_id=retracts,
            pinned_by=by or current_user(),
        )
        s.add(row)
        s.flush()
        return _observation_views([row])[0]


def observations_from_comparison(store: "Store", inv: str | int, comparison: str | int, *, by: str | None = None) -> list[dict[str, Any]]:
    """Pin each observation the compare engine derived, citing the stored comparison."""
    comp = get_comparison(store, comparison)
    inv_id = parse_id(inv, "investigation")
    if comp["investigation_id"] != inv_id:
        raise UsageError(f"comparison {comp['id']} belongs to investigation {comp['investigation_id']}, not {inv_id}")
    from sqlmodel import select

    from store.investigations import Observation

    with store.session() as s:
        already = s.exec(
            select(Observation.id).where(Observation.investigation_id == inv_id, Observation.source == f"comparison:{comp['id']}")
        ).all()
    if already:
        raise WbError(f"the observations of comparison {comp['id']} are already pinned (observations {', '.join(map(str, already))})")
    derived = comp["result"].get("observations") or []
    if not derived:
        why = "it was refused" if not comp["comparable"] else "the engine derived none"
        raise WbError(f"comparison {comp['id']} has no observations to pin ({why})")
    pinned = []
    for obs in derived:
        ev = obs.get("evidence")
        evidence = [{"kind": "comparison", "id": comp["id"]}, *(ev if isinstance(ev, list) else [ev] if ev else [])]
        pinned.append(pin_observation(store, inv_id, obs.get("text", ""), evidence, source=f"comparison:{comp['id']}", by=by))
    return pinned


def retract_observation(store: "Store", observation: str | int, reason: str, *, by: str | None = None) -> dict[str, Any]:
    """Pin a retraction of ``observation``; the original stays as it was."""
    from store.investigations import Observation

    oid = parse_id(observation, "observation")
    with store.session() as s:
        row = s.get(Observation, oid)
        if row is None:
            raise NotFound(f"no observation {oid}")
        if row.retracts_id is not None:
            raise UsageError(f"observation {oid} is itself a retraction")
        inv_id = row.investigation_id
    return pin_observation(store, inv_id, f"Retracted: {_text(reason, 'the reason')}", [], source="retraction", by=by, retracts=oid)


# -- hypotheses ----------------------------------------------------------------


def add_hypothesis(store: "Store", inv: str | int, statement: str, test: str, *, by: str | None = None) -> dict[str, Any]:
    from store.investigations import Hypothesis, HypothesisStatus

    with store.session() as s:
        inv_row = _investigation_row(s, inv, writable=True)
        row = Hypothesis(
            investigation_id=inv_row.id,
            statement=_text(statement, "the hypothesis"),
            test=_text(test, "the test that would decide it (--test)"),
            created_by=by or current_user(),
        )
        s.add(row)
        s.flush()
        first = HypothesisStatus(hypothesis_id=row.id, status="open", decided_by=row.created_by)
        s.add(first)
        s.flush()
        return hypothesis_view(row, [first])


def parse_hypothesis_evidence(items: Iterable[str]) -> list[dict[str, Any]]:
    """``plan:3`` / ``plan:NAME`` / ``3`` (a rerun plan), ``comparison:5``, ``rerun-comparison:2``."""
    kinds = {"plan": "rerun_plan", "rerun-plan": "rerun_plan", "comparison": "comparison", "rerun-comparison": "rerun_comparison"}
    out = []
    for item in items:
        kind, sep, value = str(item).strip().partition(":")
        if not sep:
            kind, value = "plan", kind
        kind, value = kind.strip(), value.strip()
        if kind not in kinds or not value or (not value.isdigit() and kind != "plan" and kind != "rerun-plan"):
            raise UsageError(f"evidence {item!r}: use plan:ID|NAME, comparison:ID or rerun-comparison:ID")
        out.append({"kind": kinds[kind], "id": int(value)} if value.isdigit() else {"kind": kinds[kind], "name": nfc(value)})
    return out


def _check_links(store: "Store", evidence: Sequence[Mapping[str, Any]], investigation_id: int) -> None:
    """A linked comparison must exist in the same investigation; rerun plans are checked
    when their tables exist."""
    from store.investigations import InvestigationComparison

    with store.session() as s:
        for ev in evidence:
            if ev["kind"] == "comparison":
                row = s.get(InvestigationComparison, ev["id"])
                if row is None:
                    raise NotFound(f"no stored comparison {ev['id']}")
                if row.investigation_id != investigation_id:
                    raise UsageError(
                        f"comparison {ev['id']} belongs to investigation {row.investigation_id}, "
                        f"not to this hypothesis's investigation {investigation_id}"
                    )
            if ev["kind"] in ("rerun_plan", "rerun_comparison"):
                table = _rerun_table(ev["kind"])
                if "id" not in ev:  # a plan named by its name
                    row = None
                    if table is not None and hasattr(table, "name"):
                        from sqlmodel import select

                        row = s.exec(select(table).where(table.name == ev["name"])).first()
                    if row is None:
                        raise NotFound(f"no rerun plan named {ev['name']!r} (see 'wb rerun')")
                    ev["id"] = int(row.id)
                    continue
                if table is not None and s.get(table, ev["id"]) is None:
                    raise NotFound(f"no {ev['kind'].replace('_', ' ')} {ev['id']} (see 'wb rerun')")


def _rerun_table(kind: str) -> Any:
    """The rerun helper's table for plans / comparisons, if that module exists."""
    try:
        import store.rerun as rerun
    except ImportError:
        return None
    want = {"rerun_plan": ("RerunPlan", "Plan"), "rerun_comparison": ("RerunComparison", "Comparison")}[kind]
    for name in want:
        table = getattr(rerun, name, None)
        if table is not None and hasattr(table, "__tablename__"):
            return table
    return None


def set_hypothesis_status(
    store: "Store",
    hypothesis: str | int,
    status: str,
    *,
    evidence: Sequence[Mapping[str, Any]] = (),
    note: str = "",
    by: str | None = None,
) -> dict[str, Any]:
    from sqlmodel import select

    from store.investigations import Hypothesis, HypothesisStatus

    if status not in HYPOTHESIS_STATUSES:
        raise UsageError(f"status must be one of {', '.join(HYPOTHESIS_STATUSES)}")
    if status in DECIDED and not evidence:
        raise UsageError(f"'{status}' needs the evidence that decided it (--evidence plan:ID or comparison:ID)")
    hid = parse_id(hypothesis, "hypothesis")
    with store.session() as s:
        row = s.get(Hypothesis, hid)
        if row is None:
            raise NotFound(f"no hypothesis {hid}")
        _investigation_row(s, row.investigation_id, writable=True)
    evidence = [dict(ev) for ev in evidence]
    _check_links(store, evidence, row.investigation_id)
    with store.session() as s:
        s.add(HypothesisStatus(hypothesis_id=hid, status=status, evidence=bundle_value(list(evidence)), note=nfc(note), decided_by=by or current_user()))
        s.flush()
        history = s.exec(select(HypothesisStatus).where(HypothesisStatus.hypothesis_id == hid).order_by(HypothesisStatus.id)).all()
        return hypothesis_view(row, history)
