"""Guardrails as data (issue 27 item 5): the lens guardrail grammar at ``investigate new``,
applied at Compare and at Verify, an unknown value withholding IMPROVEMENT."""

from __future__ import annotations

import json

import pytest

from lenses import get_lens
from lenses.extensions import parse_guardrail
from tests.rerun.helpers import wb
from workbench.investigations.frame import frame_guardrails

from .fakes import BASE_DIMS, arm, fake_bench


@pytest.mark.parametrize(
    ("lens", "text"), [("training", "eval_loss within 0.02"), ("inference", "error_rate max 0.01")]
)
def test_a_guardrail_line_is_the_lens_grammar(lens, text):
    g = parse_guardrail(text, get_lens(lens))
    metric, rule, limit = text.split()
    assert (g.name, g.metric, g.rule, g.limit) == (metric, metric, rule, float(limit))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("evaluation loss within 0.02", "expected METRIC RULE LIMIT"),
        ("eval_loss below 0.02", "unknown rule 'below'"),
        ("eval_loss within lots", "must be a finite number"),
        ("eval_loss within nan", "must be a finite number"),
        ("ttft within 0.02", "'ttft' is not a metric of the training lens (known: eval_loss)"),
    ],
)
def test_free_text_is_refused_with_the_grammar(text, says):
    with pytest.raises(ValueError, match="guardrail") as exc:
        parse_guardrail(text, get_lens("training"))
    assert says in str(exc.value)


def test_investigate_new_refuses_free_text_and_stores_nothing(sqlite_url):
    code, out, err = wb(
        "investigate",
        "new",
        "--lens",
        "training",
        "--question",
        "q",
        "--guardrail",
        "evaluation loss within 0.02",
        store=sqlite_url,
    )
    assert code == 2 and "METRIC RULE LIMIT" in err and "max_increase_pct" in err
    code, out, _ = wb("investigate", "list", "--json", store=sqlite_url)
    assert json.loads(out) == []
    code, out, err = wb(
        "investigate",
        "new",
        "--lens",
        "training",
        "--question",
        "q",
        "--guardrail",
        "eval_loss  within   2e-2",
        "--json",
        store=sqlite_url,
    )
    assert code == 0, err
    assert json.loads(out)["guardrails"] == ["eval_loss within 0.02"]  # one normal form, read again at every stage


def _import(tmp_path, store, name, **quality):
    samples = [
        {"step": i, "rank": 0, "step_ms": 10.0 * (0.8 if name.startswith("c") else 1) + i * 0.01, "samples": 32}
        for i in range(20)
    ]
    doc = {
        "format": "workbench.capture/1",
        "lens": "training",
        "label": name,
        "window": {"kind": "steady"},
        "dimensions": {**BASE_DIMS["training"], "effective_batch": 32},
        "samples": samples,
        "quality": quality,
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    code, out, err = wb("import", str(path), "--json", store=store)
    assert code == 0, err


def test_frame_guardrails_apply_at_compare(tmp_path, sqlite_url):
    for name in ("b1", "b2", "b3", "c1", "c2", "c3"):
        _import(tmp_path, sqlite_url, name)
    code, out, err = wb(
        "investigate",
        "new",
        "--lens",
        "training",
        "--question",
        "q",
        "--guardrail",
        "accuracy_proxy max 1",
        "--json",
        store=sqlite_url,
    )
    assert code == 2 and "not a metric of the training lens" in err
    code, out, err = wb(
        "investigate",
        "new",
        "--lens",
        "training",
        "--question",
        "q",
        "--guardrail",
        "eval_loss within 0.02",
        "--json",
        store=sqlite_url,
    )
    inv = str(json.loads(out)["id"])
    from store import open_store
    from workbench.investigations.comparisons import store_comparison

    view = store_comparison(open_store(sqlite_url), inv, [1, 2, 3], [4, 5, 6])  # what `wb investigate compare` calls
    result = view.to_json()["result"]
    (g,) = [g for g in result["guardrails"] if g["name"] == "eval_loss"]
    assert g["rule"] == "within" and g["state"] == "unknown"
    assert result["primary"]["effect"]["verdict"] == "FASTER_UNRESOLVED"
    assert "guardrail eval_loss cannot be judged" in result["primary"]["effect"]["reason"]
    # The same runs outside the investigation: the lens's default guardrail, not stated, withholds nothing.
    code, out, err = wb("compare", "1", "2", "3", "--vs", "4", "5", "6", "--json", store=sqlite_url)
    assert json.loads(out)["primary"]["effect"]["verdict"] == "IMPROVEMENT"


def test_frame_guardrails_apply_at_verify(tmp_path, sqlite_url):
    """A plan that carries the frame's guardrails (``with_frame_guardrails``) judges them at Verify."""
    from store import open_store
    from store.rerun import save_plan
    from workbench.rerun.plan import build_plan, with_frame_guardrails

    bench = fake_bench(tmp_path)
    dims = {**BASE_DIMS["training"], "effective_batch": 32}
    plan = build_plan(
        {
            "name": "v",
            "lens": "training",
            "rounds": 3,
            "seed": 3,
            "timeout_s": 60,
            "baseline": {"argv": arm(bench, "training", 10.0, 32, **dims)},
            "candidate": {"argv": arm(bench, "training", 8.0, 32, **dims)},
        }
    )
    plan = with_frame_guardrails(plan, 1, frame_guardrails("training", ["eval_loss within 0.02"]))
    assert [(g.name, g.rule, g.source) for g in plan.guardrails] == [("eval_loss", "within", "frame:1")]
    store = open_store(sqlite_url)
    with store.session() as s:
        save_plan(s, plan.name, plan.lens, plan.digest(), plan.to_json(), plan.origin)
    code, out, err = wb("rerun", "run", "v", "--workdir", str(tmp_path / "w"), "--json", store=sqlite_url)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "FASTER_UNRESOLVED" and "guardrail eval_loss cannot be judged" in doc["reason"]
    (g,) = doc["guardrails"]
    assert g["source"] == "frame:1" and g["status"] == "unknown"
