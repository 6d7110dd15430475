"""Load sweeps: one run per level, matched-level comparison, saturation, goodput, curve.

Real files: the inference-perf KubeCon demo (vllm v0.11 against v0.9 with the V0 engine).
Synthetic: a vLLM bench sweep whose knee and goodput are computed by hand below.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from workbench.errors import UsageError
from workbench.importers import expand_paths
from workbench.importers.base import ImportOptions
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF
from workbench.importers.vllm_bench import IMPORTER as VLLM

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
DEMO = DATA / "real" / "inference-perf-kubecon-na-2025"
# The demo's weights are a hub model without a pinned revision: unknown, so accepted with a reason.
UNPINNED = {"weights": "one deployment of the hub model: the weights were loaded once"}


def _ids(runs, start=1):
    for i, run in enumerate(runs):
        run.id = start + i
    return runs


@pytest.fixture(scope="module")
def demo():
    runs = _ids(list(INFERENCE_PERF.read(expand_paths([DEMO]), ImportOptions())))
    out: dict[str, list] = {}
    for run in runs:
        out.setdefault(run.meta["sweep"]["label"], []).append(run)
    return out


# ----------------------------------------------------------------------------- real sweeps


def test_real_sweeps_matched_levels_and_saturation(demo) -> None:
    from workbench.compare.sweep import compare_sweeps

    doc = compare_sweeps(
        demo["vllm"], demo["vllm+v0_engine"], changes={"engine_revision": None}, accepts=UNPINNED
    ).to_json()
    assert doc["matching"]["axis"] == "rate" and doc["matching"]["tolerance"] == 0.05
    # Stage rates are calibrated per run: only 1, ~120 and ~155 req/s match within 5 %.
    pairs = [(m["baseline"]["load"], m["candidate"]["load"]) for m in doc["matched"]]
    assert pairs == [("1 req/s", "1 req/s"), ("122.59 req/s", "118.56 req/s"), ("152.98 req/s", "157.74 req/s")]
    assert doc["unmatched"]["baseline"] == ["31.4 req/s", "61.79 req/s", "92.19 req/s", "183.38 req/s"]
    assert doc["unmatched"]["candidate"] == ["40.19 req/s", "79.37 req/s", "196.93 req/s", "236.12 req/s"]
    # Saturation: the last level whose achieved/requested stays >= 0.95.
    sb, sc = doc["baseline"]["saturation"], doc["candidate"]["saturation"]
    assert sb["value"] == pytest.approx(92.22409851829183) and sb["first_unsustained"] == "122.59 req/s"
    assert sc["value"] == pytest.approx(79.3734874129713) and sc["first_unsustained"] == "118.56 req/s"
    assert sb["peak_achieved"] == pytest.approx(106.54759673128557)
    texts = [o["text"] for o in doc["observations"]]
    assert texts[0].startswith("Candidate saturates at 79.4 req/s against 92.2 (−14 %)")
    assert any(t.startswith("TPOT p95 is higher at every matched load, also at 1 req/s") for t in texts)
    # Every metric the files hold, per matched level, with where it came from.
    low = {row["name"]: row for row in doc["matched"][0]["metrics"]}
    assert low["ttft_p95"]["baseline"] == pytest.approx(36.23536097584292)
    assert low["tpot_p95"]["candidate"] == pytest.approx(3.904062186642153)
    assert low["e2e_p95"]["source"] == {"baseline": "file", "candidate": "file"}
    assert low["request_throughput"]["baseline"] > 0 and low["error_rate"]["baseline"] == 0.0
    assert low["ttft_p95"]["effect"]["verdict"] is None and "one run" in low["ttft_p95"]["effect"]["note"]
    assert "no uncertainty" in doc["uncertainty"]
    assert doc["matched"][0]["comparable"]
    states = {d["name"]: d["state"] for d in doc["dimensions"]}
    assert states["engine_revision"] == "changed" and states["model"] == "same"
    # The sweep summaries are never a level.
    assert doc["baseline"]["summary_not_compared"] and len(doc["baseline"]["levels"]) == 7
    json.dumps(doc, allow_nan=False)


def test_curve_is_80_columns_with_both_sides(demo) -> None:
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_render import render_sweep_comparison

    result = compare_sweeps(demo["vllm"], demo["vllm+batch_size"], accepts=UNPINNED)
    text = render_sweep_comparison(result)
    chart = text[text.index("Curve") :]
    assert "o baseline" in chart and "x candidate" in chart and "(log)" in chart  # plotext's, drawn now
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Saturation" in text and "Curve" in text


def test_cli_compares_sweeps_by_label_and_id(tmp_path, capsys) -> None:
    from workbench.cli import main

    store = f"sqlite:///{tmp_path / 'wb.sqlite'}"

    def wb(*args):
        try:
            main(["--store", store, *args])
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        out = capsys.readouterr()
        return code, out.out, out.err

    code, _, err = wb("import", str(DEMO))
    assert code == 0, err
    code, out, err = wb("compare", "vllm", "--vs", "vllm+v0_engine", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "sweep comparison" and len(doc["matched"]) == 3
    code, out, _ = wb("compare", doc["baseline"]["sweep"], "--vs", doc["candidate"]["sweep"], "--slo", "ttft_p95=500ms")
    assert code == 0 and "Saturation" in out
    code, out, _ = wb("compare", "vllm", "--vs", "vllm+v0_engine", "--slo", "ttft_p95=500ms", "--json")
    sat = json.loads(out)["candidate"]["saturation"]
    # Under the SLO the V0 engine holds TTFT p95 <= 500 ms up to 40.19 req/s (79.37 gives 3.7 s).
    assert sat["value"] == pytest.approx(40.19019361113376) and sat["first_unsustained"] == "79.37 req/s"
    code, _, err = wb("compare", "vllm", "--vs", "vllm+v0_engine", "--slo", "speed=5")
    assert code == 2 and "--slo" in err


def test_metric_option_changes_the_primary(demo) -> None:
    from lenses import get_lens
    from workbench.compare import compare

    lens = get_lens("inference").with_metric("tpot_p95")
    result = compare(
        [demo["vllm"][0]], [demo["vllm+v0_engine"][0]], lens, changes={"engine_revision": None}, accepts=UNPINNED
    ).to_json()
    assert result["primary"]["metric"] == "tpot_p95"
    assert result["primary"]["baseline"] == pytest.approx(3.5152501797090583)
    with pytest.raises(ValueError):
        get_lens("inference").with_metric("speed")


def test_summary_only_metric_is_never_derived() -> None:
    """A file with p99 only has no p95: unknown, never computed from the p99."""
    from lenses import get_lens

    (run, *_rest) = VLLM.read([DATA / "vllm_bench_summaries.jsonl"], ImportOptions())
    lens = get_lens("inference")
    assert math.isnan(lens.metric_value(run, "ttft_p95")[0])
    assert lens.metric_value(run, "ttft_p50") == (run.meta["summary"]["ttft_ms"]["median"], "file")
    assert lens.metric_value(run, "request_throughput")[1] == "file"


# ----------------------------------------------------------------------------- synthetic knee and goodput

DURATION = 10.0
N = 20
# The synthetic files say nothing of weights, hardware or topology.
ACCEPT = {k: "synthetic files, same setup by construction" for k in ("weights", "hardware", "topology")}


def _level(rate: float, achieved: float, meeting: int, failed: int = 0, slow_tpot: int = 0) -> dict:
    """N requests over DURATION s: ``meeting`` meet TTFT <= 500 ms and TPOT <= 50 ms; of
    the others, ``slow_tpot`` have a fast TTFT but TPOT 80 ms, the rest TTFT 900 ms;
    ``failed`` (the last ones) are errors."""
    ttfts, lats, outs, errors = [], [], [], []
    for i in range(N):
        if i >= N - failed:
            ttfts.append(0.0), lats.append(0.0), outs.append(0), errors.append("timeout")
            continue
        out = 11
        if i < meeting:
            ttft, tpot = 0.2, 0.030
        elif i < meeting + slow_tpot:
            ttft, tpot = 0.3, 0.080
        else:
            ttft, tpot = 0.9, 0.030
        ttfts.append(ttft), outs.append(out), errors.append("")
        lats.append(ttft + tpot * (out - 1))
    return {
        "date": "20260101-000000",
        "backend": "vllm",
        "model_id": "org/model",
        "num_prompts": N,
        "request_rate": rate,
        "burstiness": 1.0,
        "max_concurrency": None,
        "duration": DURATION,
        "completed": N - failed,
        "request_throughput": achieved,
        "input_lens": [100] * N,
        "output_lens": outs,
        "ttfts": ttfts,
        "latencies": lats,
        "errors": errors,
        "itls": [[0.01] * 10 for _ in range(N)],
    }


@pytest.fixture()
def synthetic(tmp_path):
    base = [_level(1, 1.0, 20), _level(2, 1.98, 15, slow_tpot=3), _level(4, 3.9, 10), _level(8, 5.0, 3, failed=2)]
    cand = [_level(1, 1.0, 20), _level(2, 2.0, 12), _level(4, 3.0, 4), _level(8, 3.1, 0, failed=5)]
    pb, pc = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    pb.write_text("\n".join(json.dumps(o) for o in base))
    pc.write_text("\n".join(json.dumps(dict(o, model_id="org/model", label="cand")) for o in cand))
    b = _ids(list(VLLM.read([pb], ImportOptions())), 1)
    c = _ids(list(VLLM.read([pc], ImportOptions())), 100)
    return b, c


def test_synthetic_levels_are_one_sweep(synthetic) -> None:
    b, c = synthetic
    assert len({r.meta["sweep"]["id"] for r in b}) == 1 and len({r.meta["sweep"]["id"] for r in c}) == 1
    assert [r.meta["load"]["requested_rate"] for r in b] == [1, 2, 4, 8]
    assert [r.meta["sweep"]["level"] for r in b] == [0, 1, 2, 3]


def test_synthetic_knee_and_goodput_match_hand_computed_values(synthetic) -> None:
    from workbench.compare.sweep import compare_sweeps

    b, c = synthetic
    doc = compare_sweeps(b, c, slo={"ttft_p95": 500.0, "tpot_p95": 50.0}).to_json()
    # Knee by ratio would be: baseline 4 req/s -> 3.9 (0.975 >= 0.95), 8 -> 5.0 (0.625): 3.9;
    # candidate 4 -> 3.0 (0.75): 2.0. With the SLO given, the SLO rule is used instead:
    # baseline level 2 req/s has 2 of 20 requests at TTFT 900 ms, so TTFT p95 = 900 ms: it breaks at 2 -> 1.0.
    assert doc["baseline"]["saturation"]["value"] == pytest.approx(1.0)
    assert doc["baseline"]["saturation"]["first_unsustained"] == "2 req/s"
    # Goodput = requests meeting both targets / 10 s.
    good_b = [lv["goodput"]["value"] for lv in doc["baseline"]["levels"]]
    assert good_b == pytest.approx([2.0, 1.5, 1.0, 0.3])
    good_c = [lv["goodput"]["value"] for lv in doc["candidate"]["levels"]]
    assert good_c == pytest.approx([2.0, 1.2, 0.4, 0.0])
    assert doc["baseline"]["levels"][3]["goodput"]["attainment"] == pytest.approx(3 / 20)
    assert doc["baseline"]["max_goodput"] == pytest.approx(2.0)
    # Without an SLO: the achieved/requested rule.
    plain = compare_sweeps(b, c, accepts=ACCEPT).to_json()
    assert all(m["comparable"] for m in plain["matched"])
    assert plain["baseline"]["saturation"]["value"] == pytest.approx(3.9)
    assert plain["candidate"]["saturation"]["value"] == pytest.approx(2.0)
    assert plain["observations"][0]["text"].startswith("Candidate saturates at 2 req/s against 3.9 (−49 %)")
    assert [len(plain["matched"]), plain["unmatched"]] == [4, {"baseline": [], "candidate": []}]
    # Per-request rows: TTFT p95 computed from the requests, failures excluded.
    top = {row["name"]: row for row in plain["matched"][3]["metrics"]}
    assert top["ttft_p95"]["source"]["baseline"] == "requests"
    assert top["error_rate"]["baseline"] == pytest.approx(2 / 20)
    assert top["itl_p95"]["source"]["baseline"] == "pooled gaps"


def test_rate_tolerance_and_concurrency_matching() -> None:
    from store.run_meta import Load
    from workbench.compare.sweep import Level, match_levels

    base = [Level(Load(requested_rate=r)) for r in (10.0, 20.0, 40.0)]
    cand = [Level(Load(requested_rate=r)) for r in (10.4, 21.5, 39.0)]
    pairs, ub, uc = match_levels(base, cand, "rate", 0.05)
    assert [(b.requested_rate, c.requested_rate) for b, c in pairs] == [(10.0, 10.4), (40.0, 39.0)]
    assert [lv.requested_rate for lv in ub] == [20.0] and [lv.requested_rate for lv in uc] == [21.5]
    conc_b = [Level(Load(concurrency=c)) for c in (1.0, 8.0, 32.0)]
    conc_c = [Level(Load(concurrency=c)) for c in (1.0, 9.0, 32.0)]
    pairs, ub, uc = match_levels(conc_b, conc_c, "concurrency", 0.05)
    assert [(b.concurrency, c.concurrency) for b, c in pairs] == [(1.0, 1.0), (32.0, 32.0)]  # exact only
    assert [lv.concurrency for lv in ub] == [8.0]


def test_slo_parsing() -> None:
    from workbench.compare.sweep import parse_slo

    assert parse_slo("ttft_p95=500ms,tpot_p95=0.05s") == {"ttft_p95": 500.0, "tpot_p95": 50.0}
    for bad in ("ttft_p95", "request_throughput=5", "ttft_p95=fast"):
        with pytest.raises(UsageError):
            parse_slo(bad)


def test_concurrency_sweep_needs_an_slo_for_saturation(tmp_path) -> None:
    from workbench.compare.sweep import compare_sweeps

    objs = [dict(_level(float("inf"), 1.0 * c, 20), request_rate="inf", max_concurrency=c) for c in (1, 4, 16)]
    path = tmp_path / "conc.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in objs))
    runs = _ids(list(VLLM.read([path], ImportOptions())))
    assert runs[0].meta["sweep"]["axis"] == "concurrency"
    other = _ids(list(VLLM.read([path], ImportOptions(label="again"))), 50)
    doc = compare_sweeps(runs, other).to_json()
    assert len(doc["matched"]) == 3 and doc["baseline"]["saturation"]["state"] == "unknown"
    assert "--slo" in doc["baseline"]["saturation"]["note"]


def test_batch_size_variant_saturates_later(demo) -> None:
    from workbench.compare.sweep import compare_sweeps

    doc = compare_sweeps(demo["vllm"], demo["vllm+batch_size"], accepts=UNPINNED).to_json()
    assert doc["candidate"]["saturation"]["value"] == pytest.approx(111.92445601750451)
    assert doc["observations"][0]["text"].startswith("Candidate saturates at 112 req/s against 92.2 (+21 %)")
    # engine_config differs (max_num_seqs 128 -> 192): reported, not hidden.
    assert {d["name"]: d["state"] for d in doc["dimensions"]}["engine_config"] == "different"


def test_repeated_sweeps_give_run_level_effects_per_level(tmp_path) -> None:
    from workbench.compare.sweep import compare_sweeps

    def sweep(name: str, slow: float):
        paths = []
        for rep in range(3):
            for rate in (1.0, 2.0):
                obj = _level(rate, rate, 20 - int(slow * rate) - rep)
                path = tmp_path / f"{name}-{rep}-{rate:g}.json"
                path.write_text(json.dumps(obj))
                paths.append(path)
        return list(VLLM.read(paths, ImportOptions(label=name)))

    b, c = _ids(sweep("a", 1.0), 1), _ids(sweep("b", 3.0), 100)
    assert len({r.meta["sweep"]["id"] for r in b}) == 1
    doc = compare_sweeps(b, c, accepts=ACCEPT).to_json()
    assert [len(m["baseline"]["runs"]) for m in doc["matched"]] == [3, 3]
    effect = doc["matched"][0]["metrics"][1]["effect"]  # ttft_p95
    assert effect["runs"] == {"baseline": 3, "candidate": 3} and "one run" not in str(effect.get("note", ""))
    assert "run-level intervals" in doc["uncertainty"]


def test_genai_perf_raw_experiments_are_one_sweep(tmp_path) -> None:
    from workbench.importers.aiperf import IMPORTER as AIPERF

    raw = json.loads((DATA / "genai_perf_profile_export.json").read_text())
    exp = raw["experiments"][0]
    raw["experiments"] = [dict(exp, experiment={"mode": "concurrency", "value": v}) for v in (1, 4, 16)]
    path = tmp_path / "profile_export.json"
    path.write_text(json.dumps(raw))
    runs = list(AIPERF.read([path], ImportOptions()))
    assert [r.meta["load"]["concurrency"] for r in runs] == [1, 4, 16]
    assert len({r.meta["sweep"]["id"] for r in runs}) == 1 and runs[0].meta["sweep"]["axis"] == "concurrency"
    assert all(r.window["duration_s"] > 0 for r in runs)


def test_fail_on_for_sweeps() -> None:
    from workbench.cli.commands._sweep_compare import sweep_exit_code

    level = {"comparable": True, "primary": {"effect": {"verdict": "REGRESSION"}}, "guardrails": []}
    assert sweep_exit_code({"matched": [level]}, "regression") == 4
    assert sweep_exit_code({"matched": [level]}, None) == 0
    assert sweep_exit_code({"matched": [dict(level, comparable=False)]}, "refused") == 3
    assert sweep_exit_code({"matched": []}, "any") == 3  # nothing matched: nothing compared
    quiet = {"comparable": True, "primary": {"effect": {"verdict": None}}, "guardrails": [{"state": "held"}]}
    assert sweep_exit_code({"matched": [quiet]}, "any") == 0


def test_synthetic_report_shows_goodput_per_level(synthetic) -> None:
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_render import render_sweep_comparison

    b, c = synthetic
    text = render_sweep_comparison(compare_sweeps(b, c, slo={"ttft_p95": 500.0, "tpot_p95": 50.0}, accepts=ACCEPT))
    assert "Goodput per level" in text and "2 req/s (100 % met)" in text and "0.3 req/s (15 % met)" in text
    assert "best level: baseline 2" in text and "candidate 2 req/s" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_saturation_json_keeps_its_key_order_in_every_state() -> None:
    """The typed saturation writes the keys in the order ``--json`` always had: a level
    that does not state what the rule needs puts the note before the value."""
    from workbench.compare.sweep import saturation
    from workbench.compare.sweep_result import Goodput, LevelFigures

    def level(load: str, rate: float | None, achieved: float, ttft: float) -> LevelFigures:
        return LevelFigures(
            load=load,
            requested_rate=rate,
            concurrency=None,
            achieved_rate=achieved,
            runs=[1],
            metrics={"ttft_p95": ttft},
            sources={},
            goodput=Goodput(value=math.nan),
        )

    unread = saturation([level("1 req/s", 1, 1.0, 10), level("2 req/s", 2, 2.0, math.nan)], "rate", {"ttft_p95": 500.0})
    assert list(unread.to_json()) == ["unit", "peak_achieved", "rule", "note", "value", "state"]
    assert unread.to_json()["value"] == 1.0 and "2 req/s" in unread.to_json()["note"]
    broke = saturation([level("1 req/s", 1, 1.0, 10), level("2 req/s", 2, 1.0, 1)], "rate", {})
    assert list(broke.to_json()) == ["unit", "peak_achieved", "rule", "value", "state", "first_unsustained"]
    beyond = saturation([level("1 req/s", 1, 1.0, 10)], "rate", {})
    assert list(beyond.to_json()) == ["unit", "peak_achieved", "rule", "value", "state", "note"]
    conc = saturation([level("concurrency 1", None, 1.0, 10)], "concurrency", {})
    # an unknown value is null with its reason beside it (the strict encoder)
    assert (
        list(conc.to_json()) == ["unit", "peak_achieved", "value", "value_null_reason", "state", "note"]
        and conc.to_json()["value"] is None
    )


def test_sweep_json_decodes_into_its_type(demo, synthetic) -> None:
    """The --json document has the shape docs/schema/sweep-comparison.json states
    (unknown figures null, evidence of each kind), for real and synthetic sweeps."""
    import msgspec

    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_result import SweepComparison

    b, c = synthetic
    for result in (
        compare_sweeps(demo["vllm"], demo["vllm+v0_engine"], changes={"engine_revision": None}, accepts=UNPINNED),
        compare_sweeps(b, c, slo={"ttft_p95": 500.0, "tpot_p95": 50.0}, accepts=ACCEPT),
    ):
        doc = json.loads(json.dumps(result.to_json(), allow_nan=False))
        decoded = msgspec.convert(doc, SweepComparison)
        assert decoded.primary_metric == "ttft_p95" and len(decoded.matched) == len(result.matched)
        assert decoded.baseline.saturation.state == result.baseline.saturation.state


def test_the_curve_is_drawn_at_render_time_by_the_one_plot_library(demo, monkeypatch) -> None:
    """The result keeps the curve's points (each side's levels), never a picture: the report
    draws it with ``plots.sweep_curve`` (plotext) when it is printed."""
    from workbench.compare import plots
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_render import render_sweep_comparison
    from workbench.compare.sweep_result import SweepComparison

    result = compare_sweeps(demo["vllm"], demo["vllm+batch_size"], accepts=UNPINNED)
    assert "chart" not in result.to_json() and "chart" not in SweepComparison.__struct_fields__
    monkeypatch.setattr(plots, "sweep_curve", lambda comparison, *args, **kwargs: "the one plot library")
    assert "Curve\nthe one plot library\n" in render_sweep_comparison(result)


def test_a_sweep_document_with_the_old_chart_still_decodes(demo) -> None:
    """Documents written before the curve left the result (``--json``, a server's answer) carry
    a ``chart`` string: it is read past, and the report draws the curve from the levels."""
    from workbench.compare.sweep import compare_sweeps
    from workbench.compare.sweep_render import render_sweep_comparison
    from workbench.compare.sweep_result import SweepComparison

    doc = compare_sweeps(demo["vllm"], demo["vllm+batch_size"], accepts=UNPINNED).to_json()
    old = {**doc, "chart": "ttft_p95 (ms) (log scale)\n  5000 |  x\n       +-----"}
    decoded = SweepComparison.from_json(json.loads(json.dumps(old)))
    assert decoded.to_json() == doc
    assert "5000 |  x" not in render_sweep_comparison(decoded)


def test_a_sweep_is_known_by_the_content_of_its_files_not_their_folder(tmp_path):
    from workbench.formats.load_sweep import sweep_id

    for folder in ("a", "b", "c"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "stage_0.json").write_text('{"rate": 1}' if folder != "c" else '{"rate": 2}')
    ids = {f: sweep_id("inference-perf", "x", [tmp_path / f / "stage_0.json"]) for f in ("a", "b", "c")}
    assert ids["a"] == ids["b"]  # the same file in another folder (another checkout)
    assert ids["c"] != ids["a"]  # other content
    # PATH:LINE names one result of a file; the line still counts.
    assert sweep_id("t", "x", [f"{tmp_path / 'a' / 'stage_0.json'}:1"]) != sweep_id(
        "t", "x", [f"{tmp_path / 'a' / 'stage_0.json'}:2"]
    )
    assert sweep_id("t", "x", [f"{tmp_path / 'a' / 'stage_0.json'}:1"]) == sweep_id(
        "t", "x", [f"{tmp_path / 'b' / 'stage_0.json'}:1"]
    )
