"""The typed result of a load-sweep comparison (``wb compare SWEEP --vs SWEEP``): frozen
``msgspec.Struct`` records whose encoding is the ``--json`` contract.

Field order is the JSON's key order (the document's bytes stay what they were). A key the
JSON leaves out when it does not apply is ``UNSET`` (never encoded), never ``None``
(encoded as null: unknown). Non-finite floats may sit in a fresh result and are
written as null by :meth:`SweepComparison.to_json`: unknown, never zero.

A sweep comparison is printed, never stored or bundled, so there is no ``from_json``.
The parts that come from the ordinary comparison of a matched level are its typed parts
(``Refusal``, ``Primary``, ``Guardrail``, ``Effect`` from ``workbench.compare.results``);
the comparability rows are carried as their JSON (``DimensionRow.to_json``).
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from workbench.compare.results import Effect, Guardrail, Primary, Refusal
from workbench.vocabulary import NonFinite, Record, RunRef, record_json

# A figure that may be unknown: NaN in a fresh result, null in the JSON (never zero).
Unknowable = float | None


class Matching(Record, frozen=True, kw_only=True):
    """How levels were paired: ``rate`` (within ``tolerance``), ``concurrency``, ``strategy``."""

    axis: str
    tolerance: float | None
    rule: str


class Goodput(Record, frozen=True, kw_only=True):
    """Requests per second meeting every per-request target (DistServe), or why unknown."""

    value: Unknowable
    attainment: float | UnsetType = UNSET  # share of the level's requests meeting every target
    unit: str | UnsetType = UNSET
    note: str | UnsetType = UNSET


class Saturation(Record, frozen=True, kw_only=True):
    """The highest achieved rate a side sustains under ``rule``, or why unknown."""

    unit: str
    peak_achieved: Unknowable
    rule: str | UnsetType = UNSET
    value: Unknowable
    state: str  # "reached", "not reached" (a lower bound), "unknown"
    first_unsustained: str | UnsetType = UNSET  # the load where the rule broke
    note: str | UnsetType = UNSET

    def to_json(self, *, nonfinite: NonFinite | None = None) -> dict[str, object]:
        doc = record_json(self)
        if self.rule is not UNSET and self.state == "unknown" and self.note is not UNSET:
            # A level that does not state what the rule needs: the note was written
            # before the value and the state (the document's key order is kept).
            doc = {
                "unit": doc["unit"],
                "peak_achieved": doc["peak_achieved"],
                "rule": doc["rule"],
                "note": doc["note"],
                "value": doc["value"],
                "state": doc["state"],
            }
        return doc


class LevelFigures(Record, frozen=True, kw_only=True):
    """One level of a side: its load, its runs, every serving metric and its goodput."""

    load: str
    requested_rate: float | None
    concurrency: float | None
    achieved_rate: Unknowable
    runs: list[RunRef | None]  # None: a run with no id nor label
    metrics: dict[str, Unknowable]  # the mean over the level's runs of each run's value
    sources: dict[str, str]  # where each figure came from ("file", "requests", ...)
    goodput: Goodput


class Side(Record, frozen=True, kw_only=True):
    """One sweep: what it is, its levels in load order, its saturation and best goodput."""

    sweep: str | None
    label: str | None
    tool: str | None
    axis: str | None
    runs: list[RunRef | None]  # None: a run with no id nor label
    levels: list[LevelFigures]
    saturation: Saturation
    max_goodput: Unknowable
    summary_not_compared: bool  # the sweep has a summary over every load: metadata, never a level


class LevelRef(Record, frozen=True, kw_only=True):
    load: str
    runs: list[RunRef | None]  # None: a run with no id nor label
    achieved_rate: Unknowable


class SourcePair(Record, frozen=True, kw_only=True):
    baseline: str
    candidate: str


class ValuePair(Record, frozen=True, kw_only=True):
    baseline: float
    candidate: float


class MetricRow(Record, frozen=True, kw_only=True):
    """One serving metric at one matched level, both sides and the change."""

    name: str
    title: str
    unit: str
    lower_is_better: bool
    baseline: Unknowable
    candidate: Unknowable
    delta: Unknowable
    delta_pct: Unknowable
    source: SourcePair
    effect: Effect  # workbench.compare.effects.run_effect over the level's runs
    note: str | UnsetType = UNSET


class MatchedLevel(Record, frozen=True, kw_only=True):
    """A pair of levels at matched load, compared as an ordinary comparison."""

    baseline: LevelRef
    candidate: LevelRef
    comparable: bool
    refusal: Refusal | None
    primary: Primary | None | UnsetType = UNSET  # only when comparable
    guardrails: list[Guardrail] | UnsetType = UNSET
    metrics: list[MetricRow] | UnsetType = UNSET


class Unmatched(Record, frozen=True, kw_only=True):
    """Each side's levels with no partner (their load texts): on the curve only."""

    baseline: list[str]
    candidate: list[str]


class SweepEvidence(Record, frozen=True, kw_only=True):
    """What an observation rests on: a metric at each matched load (``metric``,
    ``levels``), both sides' saturation, or the unmatched loads (``baseline``,
    ``candidate``)."""

    metric: str | UnsetType = UNSET
    levels: dict[str, ValuePair] | UnsetType = UNSET  # load text -> both sides' values
    baseline: Saturation | list[str] | UnsetType = UNSET
    candidate: Saturation | list[str] | UnsetType = UNSET


class SweepObservation(Record, frozen=True, kw_only=True):
    text: str
    evidence: SweepEvidence
    kind: str  # "observation, not cause"


class SweepComparison(Record, frozen=True, kw_only=True):
    """Two load sweeps compared at matched load (``workbench.compare.sweep``)."""

    kind: str
    lens: str
    primary_metric: str
    matching: Matching
    slo: dict[str, float]  # metric -> target in ms
    baseline: Side
    candidate: Side
    dimensions: (
        list[dict[str, Any]] | None
    )  # the first matched level's comparability rows: their JSON (any dimension value)
    matched: list[MatchedLevel]
    unmatched: Unmatched
    uncertainty: str
    observations: list[SweepObservation]

    def to_json(self, *, nonfinite: NonFinite | None = None) -> dict[str, object]:
        """The ``--json`` document (nan and ±inf as null)."""
        doc = record_json(self)
        for name, side in (("baseline", self.baseline), ("candidate", self.candidate)):
            doc[name]["saturation"] = side.saturation.to_json()
        for obs, out in zip(self.observations, doc["observations"]):
            b, c = obs.evidence.baseline, obs.evidence.candidate
            if isinstance(b, Saturation) and isinstance(c, Saturation):
                out["evidence"] = {"baseline": b.to_json(), "candidate": c.to_json()}
        return doc
