"""The result of a comparison, and its JSON contract ::

    {"lens", "comparable", "refusal", "dimensions", "primary", "phases",
     "observations", "guardrails", "work", "runs", "metrics", "accepted",
     "changes_not_made", "phase_note", "extensions"[, "declarations"]}

When refused, ``primary`` and ``phases`` are null: no delta is computed at all.
``Comparison.from_json`` rebuilds the typed result from that document (fresh, stored in
an investigation or carried by a bundle), so that one renderer draws them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import msgspec

from lenses import builtin_lens
from lenses.base import Lens
from workbench.compare.comparability import Comparability, DimensionRow, SideValue
from workbench.vocabulary import from_jsonable, jsonable
from workbench.compare.results import (
    Acceptance,
    Declaration,
    Effect,
    Guardrail,
    Metric,
    Observation,
    Phase,
    Primary,
    Refusal,
    Runs,
    Work,
)
from workbench.compare.states import DimensionState
from workbench.stats.verdicts import Verdict


def verdict_of(doc: Mapping[str, object]) -> str | None:
    """The verdict a comparison's raw JSON (a bundle's, unchecked) states for its primary
    metric; ``None`` when it gives none or the document has another shape. A typed
    ``Comparison`` says it as ``Comparison.verdict``."""
    primary = doc.get("primary") if isinstance(doc, Mapping) else None
    effect = primary.get("effect") if isinstance(primary, Mapping) else None
    verdict = effect.get("verdict") if isinstance(effect, Mapping) else None
    return verdict if isinstance(verdict, str) else None


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """A comparison through a lens: comparability first, then (when comparable) the delta.

    ``lens`` and ``comparability`` are the engine's own objects (the lens's specs, every
    dimension row); the rest are the typed results of ``workbench.compare.results``.
    """

    lens: Lens
    runs: Runs
    comparability: Comparability
    primary: Primary | None = None
    phases: tuple[Phase, ...] | None = None
    observations: tuple[Observation, ...] = ()
    guardrails: tuple[Guardrail, ...] = ()
    work: Work | None = None  # None: not computed (a refused pair), written as {}
    metrics: tuple[Metric, ...] = ()
    # Dimensions set by `wb declare` that the comparison relied on (with history ids).
    declarations: tuple[Declaration, ...] = ()

    @property
    def comparable(self) -> bool:
        return self.comparability.comparable

    @property
    def refusal(self) -> Refusal | None:
        return self.comparability.refusal

    @property
    def effect(self) -> Effect | None:
        """The primary metric's effect (``None`` for a refused pair)."""
        return self.primary.effect if self.primary is not None else None

    @property
    def verdict(self) -> Verdict | None:
        """The statistics engine's verdict on the primary metric (``None``: none given)."""
        return self.effect.verdict if self.effect is not None else None

    @property
    def regression(self) -> bool:
        """A regression for gating: the primary verdict is REGRESSION or a guardrail broke."""
        return self.verdict == Verdict.REGRESSION or any(g.broken for g in self.guardrails)

    @property
    def accepted(self) -> list[Acceptance]:
        return [
            Acceptance(dimension=r.name, why=r.accepted_why)
            for r in self.comparability.rows
            if r.accepted_why is not None
        ]

    def to_json(self) -> dict[str, object]:
        """The ``wb compare --json`` document (keys in this order; non-finite numbers null)."""

        def many(items: Sequence[msgspec.Struct] | None) -> list[object] | None:
            return None if items is None else [msgspec.to_builtins(i) for i in items]

        doc: dict[str, object] = {
            "lens": self.lens.name,
            "comparable": self.comparable,
            "refusal": msgspec.to_builtins(self.refusal),
            "dimensions": [r.to_json() for r in self.comparability.rows],
            "primary": msgspec.to_builtins(self.primary),
            "phases": many(self.phases),
            "observations": many(self.observations),
            "guardrails": many(self.guardrails),
            "work": msgspec.to_builtins(self.work) if self.work is not None else {},
            "runs": msgspec.to_builtins(self.runs),
            "metrics": many(self.metrics),
            "accepted": many(self.accepted),
            "changes_not_made": list(self.comparability.unrealized_changes),
            "phase_note": self.lens.phase_note,
            "extensions": list(self.lens.extensions),
        }
        if self.declarations:  # absent when none: results recorded before `wb declare` existed still verify
            doc["declarations"] = many(self.declarations)
        return jsonable(doc)

    @classmethod
    def from_json(cls, doc: Mapping[str, object]) -> "Comparison":
        """The comparison a ``--json`` document describes (fresh, stored or bundled).

        The lens is the built-in one of that name with the document's phase note and
        extension sources (an extension file need not exist where the document is read:
        its guardrails and metrics are in the document). Keys a document recorded before
        they existed are absent: they decode to their defaults. ``msgspec.ValidationError``
        names the place when a part has another shape.
        """
        doc = from_jsonable(doc)  # nulls with their reason beside them: the nan or ±inf they were
        try:
            lens = builtin_lens(str(doc.get("lens")))
        except KeyError as exc:  # a plug-in's lens not installed here, or no lens at all
            raise msgspec.ValidationError(f"{exc.args[0]} - at `$.lens`") from None
        lens = replace(
            lens,
            phase_note=str(doc.get("phase_note") or lens.phase_note),
            extensions=tuple(str(e) for e in _list(doc.get("extensions"))),
        )
        rows = [_row(lens, d) for d in _list(doc.get("dimensions")) if isinstance(d, Mapping)]
        refusal = msgspec.convert(doc["refusal"], Refusal) if doc.get("refusal") else None
        check = Comparability(rows, refusal, [str(d) for d in _list(doc.get("changes_not_made"))])

        def typed(key: str, kind: type) -> object:
            return msgspec.convert(doc[key], kind) if doc.get(key) is not None else None

        return cls(
            lens=lens,
            runs=msgspec.convert(doc.get("runs") or {"baseline": [], "candidate": []}, Runs),
            comparability=check,
            primary=typed("primary", Primary),
            phases=typed("phases", tuple[Phase, ...]),
            observations=typed("observations", tuple[Observation, ...]) or (),
            guardrails=typed("guardrails", tuple[Guardrail, ...]) or (),
            work=typed("work", Work) if doc.get("work") else None,
            metrics=typed("metrics", tuple[Metric, ...]) or (),
            declarations=typed("declarations", tuple[Declaration, ...]) or (),
        )


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def _row(lens: Lens, d: Mapping[str, object]) -> DimensionRow:
    """A comparability row from its JSON (the combined source is kept on the baseline side)."""
    name = str(d.get("name"))
    spec = lens.dimension(name)
    accepted = d.get("accepted")
    return DimensionRow(
        name=name,
        title=spec.title if spec is not None else name,
        must_match=bool(d.get("must_match")),
        state=DimensionState(str(d.get("state"))),
        baseline=SideValue(d.get("baseline"), _text(d.get("source"))),
        candidate=SideValue(d.get("candidate"), None),
        note=str(d.get("note") or ""),
        declared_change=bool(d.get("declared_change")),
        accepted_why=_text(accepted.get("why")) if isinstance(accepted, Mapping) else None,
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)
