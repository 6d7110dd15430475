"""What a report shows, read once from a bundle document into frozen records.

Both sources give a bundle document: a bundle file (verified first, ``gather``) or an
investigation exported in memory from the store. So one reader serves both and the page
shows exactly what a bundle carries: the frame, each comparison typed by
``Comparison.from_json`` (the one decoder of a comparison document), observations apart
from hypotheses, the rerun comparisons that verified something (``RerunReport.from_json``),
actions with their derived status, and the captures' provenance. A part of another shape
is bad input naming the part, never a half-drawn page.

Strings here are the bundle's own (untrusted): the renderers escape them, never this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import msgspec

from workbench.bundle.format import OBSERVATION_LABEL, UNSIGNED_NOTE, Check
from workbench.bundle.reader import array, content, listed, obj
from workbench.compare.model import Comparison
from workbench.compare.inspect_data import RankMoved
from workbench.compare.sweep_result import SweepComparison
from workbench.errors import BadInput
from workbench.investigations.evidence_text import evidence_text
from workbench.rerun.comparison import RerunReport
from workbench.vocabulary import JSONDoc

Origin = Literal["bundle", "store"]


@dataclass(frozen=True)
class Recheck:
    """Where the report came from and how anyone rechecks it (shown first and last)."""

    origin: Origin
    source: str  # the bundle's path, or "investigation N"
    checksum: str | None  # the bundle's checksum (an investigation drawn from the store has none to recheck)
    valid: bool | None  # None: not verified (drawn from the store)
    recomputed: bool  # the results were re-derived from embedded samples (--recompute)
    checks: tuple[Check, ...]
    commands: tuple[str, ...]
    note: str = UNSIGNED_NOTE

    @property
    def statement(self) -> str:
        """One sentence for the top of the page."""
        if self.origin == "store":
            return (
                f"Drawn from {self.source} in a wb store, not from a bundle: nothing on this page has been "
                "rechecked. Export a bundle to share it as evidence (commands below)."
            )
        if self.recomputed:
            return (
                "VERIFIED: every digest matches the checksum and the results recompute within tolerance from the "
                "embedded samples (wb evidence verify --recompute)."
            )
        return (
            "VERIFIED (integrity only): every digest matches the checksum; the results were not recomputed "
            "(the bundle embeds no samples)."
        )


@dataclass(frozen=True)
class RunRow:
    ref: str
    id: int | None
    label: str
    lens: str
    sample_count: int | None
    captures: tuple[str, ...]


@dataclass(frozen=True)
class CaptureRow:
    name: str
    sha256: str
    size: int | None
    format: str
    importer: str


@dataclass(frozen=True)
class Frame:
    ref: str
    title: str
    lens: str
    question: str
    guardrails: tuple[str, ...]
    intended_change: tuple[tuple[str, str, str], ...]  # (dimension, from, to)
    baseline: tuple[str, ...]  # run labels
    candidate: tuple[str, ...]
    created_by: str
    created_at: str


@dataclass(frozen=True)
class RankLine:
    """One measure's offset from the median rank, per rank, averaged over a side's runs (ms)."""

    measure: str
    ranks: tuple[int, ...]
    baseline: tuple[float, ...]  # nan: unknown on that side
    candidate: tuple[float, ...]


@dataclass(frozen=True)
class Stragglers:
    """Multi-rank runs: where each rank sits against its run's median rank, and the ranks
    that moved most. Descriptive: a rank's steps are not independent samples."""

    shared: int  # ranks on both sides
    moved: tuple[RankMoved, ...]
    lines: tuple[RankLine, ...]


@dataclass(frozen=True)
class ComparisonSection:
    ref: str
    comparison: Comparison
    baseline: tuple[str, ...]
    candidate: tuple[str, ...]
    control: tuple[str, ...]
    changes: tuple[tuple[str, str, str], ...]
    stragglers: Stragglers | None = None
    detail_note: str = ""  # why a view that needs the runs' rows is absent


@dataclass(frozen=True)
class ObservationRow:
    ref: str
    kind: str  # observation or retraction
    label: str
    text: str
    evidence: str
    source: str
    retracts: str
    retracted_by: str
    pinned_by: str
    pinned_at: str


@dataclass(frozen=True)
class Decision:
    status: str
    evidence: str
    note: str
    by: str
    at: str


@dataclass(frozen=True)
class HypothesisRow:
    ref: str
    statement: str
    test: str
    status: str
    decisions: tuple[Decision, ...]

    @property
    def deciding(self) -> Decision | None:
        """The latest decision, when it is more than the opening (the evidence that decided it)."""
        last = self.decisions[-1] if self.decisions else None
        return last if last is not None and (last.status != "open" or last.evidence != "-") else None


@dataclass(frozen=True)
class RerunSection:
    ref: str
    plan: str  # the plan's name, as the bundle carries it
    report: RerunReport | None
    note: str = ""  # why there is no typed report


@dataclass(frozen=True)
class ActionRow:
    ref: str
    kind: str
    changes: str
    scope: str
    because: str
    expect: str
    status: str
    why: str
    decisions: tuple[Decision, ...]
    verifications: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    frame: Frame
    recheck: Recheck
    tool: str
    created_at: str
    comparisons: tuple[ComparisonSection, ...]
    observations: tuple[ObservationRow, ...]
    hypotheses: tuple[HypothesisRow, ...]
    reruns: tuple[RerunSection, ...]
    actions: tuple[ActionRow, ...]
    runs: tuple[RunRow, ...]
    captures: tuple[CaptureRow, ...]
    synthetic: bool  # every run says it is a synthetic demonstration (the demo captures)
    sweep: SweepComparison | None = None
    sweep_note: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def title(self) -> str:
        return self.frame.title or self.frame.question or self.frame.ref

    def with_details(self, **changes: object) -> "Report":
        return replace(self, **changes)  # type: ignore[arg-type]


def _text(value: object, default: str = "") -> str:
    return default if value is None else str(value)


def _strings(value: object) -> tuple[str, ...]:
    return tuple(_text(v) for v in array(value))


def _changes(value: object) -> tuple[tuple[str, str, str], ...]:
    out = []
    for dim, pair in obj(value or {}).items():
        pair = array(pair) if pair is not None else []
        out.append((str(dim), _text(pair[0], "?") if pair else "?", _text(pair[1], "?") if len(pair) > 1 else "?"))
    return tuple(out)


class _Labels:
    """A run's label by its bundle ref (``run/16``) or by the id its comparison result names (16)."""

    def __init__(self, runs: Sequence[RunRow]) -> None:
        self.by_ref = {r.ref: r.label for r in runs}
        self.by_id = {r.id: r.label for r in runs if r.id is not None}

    def __call__(self, ref: object) -> str:
        label = self.by_ref.get(ref) if isinstance(ref, str) else self.by_id.get(ref) if isinstance(ref, int) else None
        return f"{ref} {label}" if label else str(ref)


def _runs(bundle: JSONDoc) -> tuple[RunRow, ...]:
    rows = []
    for item in array(bundle.get("runs")):
        run = obj(item)
        rid, count = run.get("id"), run.get("sample_count")
        rows.append(
            RunRow(
                ref=_text(run.get("ref")),
                id=rid if isinstance(rid, int) else None,
                label=_text(run.get("label")),
                lens=_text(run.get("lens")),
                sample_count=count if isinstance(count, int) else None,
                captures=_strings(run.get("captures")),
            )
        )
    return tuple(rows)


def _synthetic(bundle: JSONDoc) -> bool:
    def says(run: Mapping[str, object]) -> bool:
        extra = obj(obj(run.get("meta") or {}).get("extra") or {})
        return obj(extra.get("demo") or {}).get("synthetic") is True

    runs = [obj(r) for r in array(bundle.get("runs"))]
    return bool(runs) and all(says(r) for r in runs)


def _captures(bundle: JSONDoc) -> tuple[CaptureRow, ...]:
    rows = []
    for item in array(bundle.get("subject")):
        entry = obj(item)
        notes = obj(entry.get("annotations") or {})
        size = entry.get("size")
        rows.append(
            CaptureRow(
                name=_text(entry.get("name")),
                sha256=_text(obj(entry.get("digest") or {}).get("sha256")),
                size=size if isinstance(size, int) else None,
                format=_text(notes.get("format")),
                importer=" ".join(_text(notes.get(k)) for k in ("importer", "importer_version") if notes.get(k)),
            )
        )
    return tuple(rows)


def _frame(bundle: JSONDoc, label: _Labels) -> Frame:
    inv = obj(bundle.get("investigation"))
    return Frame(
        ref=_text(inv.get("ref")),
        title=_text(inv.get("title")),
        lens=_text(inv.get("lens")),
        question=_text(inv.get("question")),
        guardrails=_strings(inv.get("guardrails")),
        intended_change=_changes(inv.get("intended_change")),
        baseline=tuple(label(r) for r in array(inv.get("baseline"))),
        candidate=tuple(label(r) for r in array(inv.get("candidate"))),
        created_by=_text(inv.get("created_by")),
        created_at=_text(inv.get("created_at")),
    )


def _comparisons(bundle: JSONDoc, label: _Labels) -> tuple[ComparisonSection, ...]:
    recipe = {obj(c).get("ref"): obj(c) for c in listed(content(bundle, "recipe"), "comparisons")}
    out = []
    for i, item in enumerate(listed(content(bundle, "results"), "comparisons")):
        entry = obj(item)
        ref = _text(entry.get("ref"))
        try:
            comparison = Comparison.from_json(obj(entry.get("result")))
        except msgspec.ValidationError as exc:
            raise ValueError(f"results.comparisons[{i}] {ref}: {exc}") from None
        asked = recipe.get(ref) or {}
        params = obj(asked.get("parameters") or {})
        out.append(
            ComparisonSection(
                ref=ref,
                comparison=comparison,
                baseline=tuple(label(r) for r in comparison.runs.get("baseline")),
                candidate=tuple(label(r) for r in comparison.runs.get("candidate")),
                control=tuple(label(r) for r in comparison.runs.get("control")),
                changes=_changes(params.get("changes")),
            )
        )
    return tuple(out)


def _observations(bundle: JSONDoc) -> tuple[ObservationRow, ...]:
    rows = []
    for item in array(bundle.get("observations")):
        o = obj(item)
        rows.append(
            ObservationRow(
                ref=_text(o.get("ref")),
                kind=_text(o.get("kind"), "observation"),
                label=_text(o.get("label"), OBSERVATION_LABEL),
                text=_text(o.get("text")),
                evidence=evidence_text(o.get("evidence"), limit=400),
                source=_text(o.get("source")),
                retracts=_text(o.get("retracts")),
                retracted_by=_text(o.get("retracted_by")),
                pinned_by=_text(o.get("pinned_by")),
                pinned_at=_text(o.get("pinned_at")),
            )
        )
    return tuple(rows)


def _decision(step: Mapping[str, object], by: str = "decided_by", at: str = "decided_at") -> Decision:
    return Decision(
        status=_text(step.get("status") or step.get("decision")),
        evidence=evidence_text(step.get("evidence"), limit=400),
        note=_text(step.get("note") or step.get("why")),
        by=_text(step.get(by)),
        at=_text(step.get(at)),
    )


def _hypotheses(bundle: JSONDoc) -> tuple[HypothesisRow, ...]:
    rows = []
    for item in array(bundle.get("hypotheses")):
        h = obj(item)
        rows.append(
            HypothesisRow(
                ref=_text(h.get("ref")),
                statement=_text(h.get("statement")),
                test=_text(h.get("test")),
                status=_text(h.get("status"), "open"),
                decisions=tuple(_decision(obj(s)) for s in array(h.get("history"))),
            )
        )
    return tuple(rows)


def _reruns(bundle: JSONDoc) -> tuple[RerunSection, ...]:
    plans = {}
    for item in listed(content(bundle, "recipe"), "rerun_plans"):
        record = obj(obj(item).get("record") or {})
        if isinstance(record.get("id"), int):
            plans[record["id"]] = _text(record.get("name"))
    out = []
    for item in listed(content(bundle, "results"), "rerun_comparisons"):
        entry = obj(item)
        record = obj(entry.get("record") or {})
        body = record.get("body")
        plan = plans.get(record.get("plan_id"), "") if isinstance(record.get("plan_id"), int) else ""
        if not isinstance(body, dict):
            note = _text(record.get("unavailable"), "the bundle carries no body for it")
            out.append(RerunSection(_text(entry.get("ref")), plan, None, note))
            continue
        try:
            typed = RerunReport.from_json(body)
        except msgspec.ValidationError as exc:  # a rerun comparison of an older or newer shape: named, not drawn
            out.append(RerunSection(_text(entry.get("ref")), plan, None, f"not the shape this wb reads: {exc}"))
            continue
        out.append(RerunSection(_text(entry.get("ref")), plan or typed.plan.name, typed))
    return tuple(out)


def _actions(bundle: JSONDoc) -> tuple[ActionRow, ...]:
    status = {
        obj(s).get("action"): obj(s) for s in listed(content(bundle, "results"), "actions") if isinstance(s, dict)
    }
    rows = []
    for item in listed(content(bundle, "recipe"), "actions"):
        a = obj(item)
        ref = _text(a.get("ref"))
        state = status.get(ref) or {}
        expect = obj(a.get("expect") or {})
        retry = obj(a.get("retry") or {})
        changes = ", ".join(f"{d} {b} → {c}" for d, b, c in _changes(a.get("changes")))
        if not changes and retry:
            changes = f"retry after {_text(retry.get('failure_class'), 'a failure')}"
        rows.append(
            ActionRow(
                ref=ref,
                kind=_text(a.get("kind")),
                changes=changes,
                scope=_text(a.get("scope")),
                because=", ".join(_strings(a.get("because"))),
                expect=" ".join(_text(expect.get(k)) for k in ("metric", "direction") if expect.get(k)),
                status=_text(state.get("status"), "unknown"),
                why=_text(state.get("why") or state.get("reason")),
                decisions=tuple(_decision(obj(d), by="by", at="at") for d in array(a.get("decisions"))),
                verifications=tuple(
                    f"{_text(v.get('plan'), 'job files')} by {_text(v.get('by'))} at {_text(v.get('at'))}"
                    for v in (obj(x) for x in array(a.get("verifications")))
                ),
            )
        )
    return tuple(rows)


def read_report(bundle: JSONDoc, recheck: Recheck) -> Report:
    """The report of a bundle document; :class:`BadInput` naming the part when one has another shape."""
    try:
        runs = _runs(bundle)
        label = _Labels(runs)
        tool = obj(bundle.get("tool") or {})
        return Report(
            frame=_frame(bundle, label),
            recheck=recheck,
            tool=" ".join(_text(tool.get(k)) for k in ("name", "version") if tool.get(k)),
            created_at=_text(bundle.get("created_at")),
            comparisons=_comparisons(bundle, label),
            observations=_observations(bundle),
            hypotheses=_hypotheses(bundle),
            reruns=_reruns(bundle),
            actions=_actions(bundle),
            runs=runs,
            captures=_captures(bundle),
            synthetic=_synthetic(bundle),
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise BadInput(recheck.source, f"cannot report: {exc}") from None
