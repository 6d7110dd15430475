"""Inspect over summary-only runs (issue 44 item 5): the statistics the files state, no axis for a
side without values, never "-1e-09 ms .. 1e-09 ms" nor "scale 0 to 0 ms"."""

from __future__ import annotations

import json
import math
from pathlib import Path

from store.records import Dimension
from workbench.compare import compare, inspect, lens_with_metric
from workbench.compare.charts import distribution_chart, paired_bars
from workbench.compare.render import render_inspect
from workbench.ingest import read_files

SHAPES = Path(__file__).resolve().parents[1] / "data" / "shapes"


def _runs():
    runs = read_files([SHAPES / "vllm_serve_200_of_200.json", SHAPES / "vllm_statistics_only.json"]).runs
    for i, run in enumerate(runs, 1):
        run.id = i
        for name in ("weights", "hardware", "topology"):
            run.dimensions[name] = Dimension("same", "declared")
    return runs


def test_summary_only_runs_are_drawn_from_the_statistics_their_files_state():
    base, cand = _runs()
    result = inspect([base], [cand], accepts={"request_mix": "t", "model": "t"})
    (ttft,) = [d for d in result.distributions if d.name == "ttft"]
    stated = json.loads((SHAPES / "vllm_statistics_only.json").read_text())
    assert ttft.candidate.source == "file" and ttft.candidate.p99 == stated["p99_ttft_ms"]
    assert ttft.candidate.p50 == stated["median_ttft_ms"] and ttft.candidate.mean == stated["mean_ttft_ms"]
    assert math.isnan(ttft.candidate.p95)  # not stated: unknown, never derived from the p99
    text = render_inspect(result)
    assert "1e-09" not in text and "scale 0 to 0" not in text
    assert "a file's stated figures (no items)" in text


def test_no_axis_for_a_measure_without_values():
    empty = {k: float("nan") for k in ("p5", "p25", "p50", "p75", "p95", "p99", "mean")}
    chart = distribution_chart([("queue", empty, empty)], "ms")
    assert "nothing to draw" in chart and ".." not in chart.splitlines()[0]
    bars = paired_bars([("queue", float("nan"), float("nan"))], "ms")
    assert bars == "queue: not recorded on either side"
    one = dict(empty, p5=0.0, p25=0.0, p50=0.0, p75=0.0, p95=0.0)  # all zero: a real axis, not ±1e-9
    assert "1e-09" not in distribution_chart([("queue", one, empty)], "ms")


def test_tpot_and_itl_findings_speak_of_decode_not_of_ttft_parts():
    base, cand = _runs()
    for family in ("tpot_ms", "itl_ms"):  # the candidate decodes 50 % slower
        cand.meta["summary"][family] = {k: v * 1.5 for k, v in cand.meta["summary"][family].items()}
    for metric in ("tpot_p99", "itl_mean"):
        lens = lens_with_metric([base, cand], "inference", (), metric)
        result = compare([base], [cand], lens=lens, accepts={"request_mix": "t", "model": "t"})
        texts = " ".join(o.text for o in result.observations)
        assert "Decode was not recorded" in texts, texts
        assert "Frontend, queue and prefill" not in texts and result.lens.phase_note.startswith(("TPOT", "ITL"))
