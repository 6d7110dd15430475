"""The typed comparison result: ``Comparison.from_json`` rebuilds what ``to_json`` wrote,
byte for byte, from fresh, stored and bundled documents, including documents recorded
before a field existed; the renderer draws a decoded comparison as it draws a fresh one."""

from __future__ import annotations

import json

import msgspec
import pytest

from factories import inference_run, training_run
from tests.golden.cases import GOLDEN_DIR
from workbench.compare import compare
from workbench.compare.effects import run_effect
from workbench.compare.model import Comparison, verdict_of
from workbench.compare.render import render_comparison
from workbench.compare.results import Effect, Guardrail, Primary
from workbench.stats.verdicts import Flag, Gate, Verdict


def _comparisons(value):
    """Every comparison document inside a golden (a compare, an inspect, a bundle, an investigation)."""
    if isinstance(value, dict):
        if "dimensions" in value and "comparable" in value and "lens" in value:
            yield value
            return
        for item in value.values():
            yield from _comparisons(item)
    elif isinstance(value, list):
        for item in value:
            yield from _comparisons(item)


GOLDEN_COMPARISONS = [
    pytest.param(doc, id=f"{path.stem}-{i}")
    for path in sorted(GOLDEN_DIR.glob("*.json"))
    for i, doc in enumerate(_comparisons(json.loads(path.read_text(encoding="utf-8"))))
]


def test_the_goldens_hold_comparisons():
    assert len(GOLDEN_COMPARISONS) >= 15


@pytest.mark.parametrize("doc", GOLDEN_COMPARISONS)
def test_round_trip_is_lossless(doc):
    doc = {k: v for k, v in doc.items() if k != "way_out"}  # the CLI's addition, not the result's
    again = Comparison.from_json(doc).to_json()
    assert json.dumps(again, ensure_ascii=False) == json.dumps(doc, ensure_ascii=False)


@pytest.mark.parametrize("make", [inference_run, training_run])
def test_fresh_and_decoded_render_alike(make):
    base = [make(f"b{i}", seed=i, run_id=i) for i in range(1, 4)]
    cand = [make(f"c{i}", seed=50 + i, run_id=50 + i) for i in range(1, 4)]
    fresh = compare(base, cand)
    decoded = Comparison.from_json(json.loads(json.dumps(fresh.to_json())))
    assert render_comparison(decoded) == render_comparison(fresh)
    assert decoded.verdict == fresh.verdict and isinstance(decoded.effect, Effect)


def test_typed_parts():
    doc = next(
        d for d in (p.values[0] for p in GOLDEN_COMPARISONS) if d.get("primary") and d["primary"]["effect"].get("aa")
    )
    c = Comparison.from_json(doc)
    assert isinstance(c.primary, Primary) and all(isinstance(g, Guardrail) for g in c.guardrails)
    effect = c.primary.effect
    assert effect.verdict in Verdict and isinstance(effect.verdict, Verdict)
    assert effect.gate in Gate and all(isinstance(f, Flag) for f in effect.flags)
    assert effect.interval(0.95, "primary").low is not None
    assert c.verdict == verdict_of(doc) == effect.verdict


def test_documents_recorded_before_a_field_existed_decode():
    doc = next(p.values[0] for p in GOLDEN_COMPARISONS if p.values[0].get("primary"))
    old = {k: v for k, v in doc.items() if k not in ("declarations", "phase_note", "extensions", "accepted", "metrics")}
    old["primary"] = {
        **old["primary"],
        "effect": {k: v for k, v in old["primary"]["effect"].items() if k != "control_note"},
    }
    c = Comparison.from_json(old)
    assert c.declarations == () and c.metrics == ()
    assert c.lens.phase_note  # the lens's own note where the document has none
    assert render_comparison(c)


def test_a_wrong_shape_names_the_place():
    doc = next(p.values[0] for p in GOLDEN_COMPARISONS if p.values[0].get("primary"))
    bad = {**doc, "primary": {**doc["primary"], "effect": {**doc["primary"]["effect"], "verdict": "MAYBE"}}}
    with pytest.raises(msgspec.ValidationError, match=r"\$\.effect\.verdict"):
        Comparison.from_json(bad)


def test_run_effect_is_typed():
    effect = run_effect([100.0, 101.0, 99.0, 100.5], [120.0, 121.0, 119.0, 122.0])
    assert effect.verdict == Verdict.REGRESSION and effect.runs.baseline == 4
    assert Effect.from_json(effect.to_json()) == effect
    none = run_effect([100.0], [120.0])
    assert none.verdict is None and none.note.startswith("one run a side")
    assert list(none.to_json()) == ["verdict", "runs", "note"]  # the keys a missing effect has, in order


def test_every_golden_effect_validates_against_the_published_schema():
    """docs/schema/comparison-effect.json is Effect's schema: every effect in the goldens decodes."""
    from tests.golden.schemas import SCHEMA_DIR

    schema = json.loads((SCHEMA_DIR / "comparison-effect.json").read_text(encoding="utf-8"))
    assert "verdict" in schema["$defs"]["Effect"]["required"]
    effects = [
        e
        for p in GOLDEN_COMPARISONS
        if p.values[0].get("primary")
        for e in [p.values[0]["primary"]["effect"], *(ph["effect"] for ph in p.values[0]["phases"] or [])]
    ]
    assert effects and all(Effect.from_json(e).to_json() == e for e in effects)


def test_a_lens_not_installed_here_is_named():
    doc = next(p.values[0] for p in GOLDEN_COMPARISONS if p.values[0].get("primary"))
    with pytest.raises(msgspec.ValidationError, match=r"unknown lens 'gone'.*\$\.lens"):
        Comparison.from_json({**doc, "lens": "gone"})
