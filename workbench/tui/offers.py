"""What a dialog offers: the values a refusal names, and examples in the lens's own words.

A dialog opened from a refused comparison is filled from it, so a stranger follows the
refusal without copying a value from a report that shows it cut: the Change dialog (``d``)
offers the refused dimension with both sides' values in full, the Accept dialog (``a``) the
dimensions still refused, never one declared as the change. Placeholders are examples of
the investigation's own lens (an inference investigation is never shown a training example).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.compare.parameters import Value
from workbench.compare.states import DIFFERENT
from workbench.investigations.views import ComparisonView


@dataclass(frozen=True)
class LensWords:
    """Examples of one lens, for placeholders."""

    question: str
    guardrail: str  # METRIC RULE LIMIT, one of the lens's guardrail metrics ("" when it has none)
    change: tuple[str, str, str]  # dimension, from, to
    accept: str  # a dimension that must match
    hypothesis: str
    test: str


WORDS = {
    "inference": LensWords(
        "Did the engine upgrade raise p95 TTFT?",
        "error_rate max 0.01",
        ("engine_revision", "v0.8.2", "v0.8.3"),
        "hardware",
        "The new engine's prefill is slower on long prompts",
        "Rerun both engines on the long-prompt mix; 10 interleaved rounds",
    ),
    "training": LensWords(
        "Did the PyTorch upgrade slow the training step?",
        "eval_loss within 0.02",
        ("framework", "torch 2.3.1", "torch 2.4.0"),
        "hardware",
        "A straggling rank delays the all-reduce",
        "Rerun with rank 5 replaced; 10 interleaved rounds",
    ),
    "fleet": LensWords(
        "Did queue waits in the pool grow, and is capacity the limit?",
        "",
        ("scheduler_policy", "fifo", "fair-share"),
        "device_types",
        "Large jobs wait longer since the scheduler policy changed",
        "Queue waits by job size in the weeks before and after, same pool",
    ),
}
# A plug-in lens: examples that name no lens's own metric or dimension.
OTHER = LensWords(
    "Did the change make it slower?",
    "",
    ("dimension", "baseline value", "candidate value"),
    "dimension",
    "The change adds work on every item",
    "An interleaved A/B/A′ rerun; 10 rounds",
)


def words(lens: str) -> LensWords:
    return WORDS.get(lens, OTHER)


@dataclass(frozen=True)
class ChangeOffer:
    dimension: str
    before: str
    after: str


def _text(value: Value) -> str:
    return "" if value is None else str(value)


def change_offer(comp: ComparisonView | None, declared: Mapping[str, Sequence[Value]]) -> ChangeOffer | None:
    """The change the Change dialog offers: the one declared, else the refused dimension
    whose two sides are known and differ (the refusal's own first, then the next that
    blocks), with both values in full; None when there is nothing to offer."""
    if declared:
        name, values = next(iter(declared.items()))
        return ChangeOffer(name, _text(values[0] if values else None), _text(values[1] if len(values) > 1 else None))
    if comp is None:
        return None
    result = comp.comparison()
    if result.comparable:
        return None
    fixed = {s.name for s in result.lens.dimensions if not s.changeable}  # e.g. the window kind
    first = result.refusal.dimension if result.refusal else None
    rows = sorted(result.comparability.rows, key=lambda r: r.name != first)  # the refusal's own first
    for row in rows:
        b, c = row.baseline.value, row.candidate.value
        scalar = all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in (b, c))
        if row.blocks and row.state == DIFFERENT and scalar and row.name not in fixed:
            return ChangeOffer(row.name, _text(b), _text(c))
    return None


def accept_offer(comp: ComparisonView | None, declared: Mapping[str, Sequence[Value]]) -> list[str]:
    """The dimensions the Accept dialog offers: those that still block the comparison shown,
    never one declared as the change (a declared change is not a difference to accept)."""
    if comp is None:
        return []
    result = comp.comparison()
    if result.comparable:
        return []
    blocking = [r.name for r in result.comparability.rows if r.blocks] or [
        result.refusal.dimension if result.refusal else ""
    ]
    return [name for name in blocking if name and name not in declared]
