"""Sentences no stronger than the data (issue 27 item 7), on constructed cases: one run a
side says no noise estimate exists; one window a side carries the same caveat; histogram
percentiles carry their bucket bounds; the eligibility caveat only where eligibility
history is missing."""

from __future__ import annotations

import json

import numpy as np

from factories import INFERENCE_DIMS, dims, fleet_run, inference_run, training_run
from store.records import RunRecord, Work
from workbench.compare import compare
from workbench.compare.render import render_comparison

ONE_RUN_NO_NOISE = "one run a side: no noise estimate exists"


def texts(result) -> list[str]:
    return [o.text for o in result.observations]


# -- one run a side ----------------------------------------------------------------------


def test_one_run_a_side_never_says_no_change_beyond_noise():
    result = compare([inference_run("b", run_id=1)], [inference_run("c", queue=160, run_id=2)])
    said = " ".join(texts(result))
    assert "no change beyond noise" not in said and "took the same time" not in said
    stayed = next(t for t in texts(result) if "changed by less than 2 %" in t)
    assert stayed.startswith("Prefill (") and "decode (" in stayed and ONE_RUN_NO_NOISE in stayed
    assert "no change beyond noise" not in render_comparison(result)


def test_several_runs_a_side_keep_the_noise_judgement():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 6)]
    cand = [inference_run(f"c{i}", seed=50 + i, queue=160, run_id=50 + i) for i in range(1, 6)]
    said = texts(compare(base, cand))
    assert any(
        t.endswith("took the same time in the baseline and candidate runs (no change beyond noise).") for t in said
    )
    assert not any(ONE_RUN_NO_NOISE in t for t in said)


def test_one_run_a_side_training_stayed_sentence_carries_the_caveat():
    """Nothing moved: the "stayed at" sentence still says it describes one run a side."""
    result = compare([training_run("b", run_id=1)], [training_run("c", seed=3, run_id=2)])
    (phases,) = [t for t in texts(result) if "stayed at" in t]
    assert "grew" not in phases and phases.endswith(
        f"({ONE_RUN_NO_NOISE}, so whether this is beyond noise cannot be said)"
    )


def test_one_run_primary_outside_the_phases_is_not_called_beyond_noise():
    base, cand = training_run("b", run_id=1), training_run("c", seed=3, run_id=2)
    cand.samples["step_ms"] = cand.samples["step_ms"] + 80.0
    (said,) = [t for t in texts(compare([base], [cand])) if "none of its recorded phases" in t]
    assert "by more than 2 % in these runs" in said and "beyond noise" not in said and "one run a side" in said


# -- fleet: one window a side ---------------------------------------------------------------


def _fleet_pair(n: int, *, eligibility=True):
    base = [
        fleet_run(f"A{i}", waits=tuple(14.2 + 0.3 * i + 0.1 * k for k in range(20)), run_id=i, eligibility=eligibility)
        for i in range(1, n + 1)
    ]
    cand = [
        fleet_run(
            f"B{i}",
            waits=tuple(85.6 + 0.5 * i + 0.2 * k for k in range(20)),
            running_gangs=(16, 16, 16, 8),
            waiting_gangs=(16,) * 3,
            run_id=10 + i,
            eligibility=eligibility,
        )
        for i in range(1, n + 1)
    ]
    return base, cand


def test_one_window_a_side_changes_carry_the_one_run_caveat():
    said = texts(compare(*_fleet_pair(1)))
    wait = next(t for t in said if t.startswith("Mean queue wait"))
    assert wait.startswith("Mean queue wait grew from") and "one window a side" in wait and "no uncertainty" in wait
    attainment = next(t for t in said if t.startswith("Service attainment"))
    assert "one window a side" in attainment


def test_windows_that_do_not_resolve_a_change_say_so():
    base, cand = _fleet_pair(2)
    said = texts(compare(base, cand))
    wait = next(t for t in said if t.startswith("Mean queue wait"))
    assert "do not resolve beyond noise" in wait and "grew" not in wait  # two windows a side: no verdict (too few)


def test_eligibility_caveat_only_where_eligibility_history_is_missing():
    recorded = [t for t in texts(compare(*_fleet_pair(3))) if "sat unallocated" in t]
    assert recorded and not any("eligibility" in t for t in recorded)
    base, cand = _fleet_pair(3, eligibility=False)
    missing = [t for t in texts(compare(base, cand, accepts={"eligibility_history": "test"})) if "sat unallocated" in t]
    assert missing and all(
        t.endswith("Without eligibility history, idle capacity cannot be assumed usable.") for t in missing
    )


def test_partial_eligibility_history_is_said_as_partial():
    base, cand = _fleet_pair(1)
    cand[0].samples["eligible"][:3] = np.nan  # three running jobs without an eligible time
    blocking = [
        t for t in texts(compare(base, cand, accepts={"eligibility_history": "test"})) if "sat unallocated" in t
    ]
    assert blocking and "covers only some jobs" in blocking[0]


# -- histogram percentiles ---------------------------------------------------------------------


def scrape_run(label: str, p95: float, bounds: tuple[float, float | None], run_id: int) -> RunRecord:
    """A summary-only run as the Prometheus importer writes a scrape pair: an interpolated
    p95 and the bucket that bounds it."""
    return RunRecord(
        lens="inference",
        label=label,
        dimensions=dims(INFERENCE_DIMS),
        window={"kind": "steady"},
        work=Work("tokens", 1000.0),
        meta={"summary": {"ttft_ms": {"count": 80, "p95": p95, "p95_bounds": list(bounds)}}},
        id=run_id,
    )


def test_same_bucket_is_within_the_histogram_resolution_everywhere():
    result = compare([scrape_run("b", 73.3, (60, 80), 1)], [scrape_run("c", 73.3, (60, 80), 2)])
    p = result.primary
    assert "±0" not in p.text
    assert (
        p.text == "73.3 ms → 73.3 ms (interpolated; both in the histogram bucket [60, 80] ms): within the histogram's "
        "resolution"
    )
    text = render_comparison(result)
    assert "[60, 80] ms" in text and "±0 ms" not in text
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["primary"]["bucketed"] == {
        "baseline_low": 60.0,
        "baseline_high": 80.0,
        "candidate_low": 60.0,
        "candidate_high": 80.0,
        "delta_low": -20.0,
        "delta_high": 20.0,
        "within_resolution": True,
    }
    (said,) = [t for t in texts(result) if "histogram" in t]
    assert "both in [60, 80] ms" in said and "within the histogram's resolution" in said


def test_a_change_inside_the_bucket_width_is_within_resolution_not_a_change():
    result = compare([scrape_run("b", 64.0, (60, 80), 1)], [scrape_run("c", 78.0, (60, 80), 2)])
    assert result.primary.text.endswith("within the histogram's resolution")
    assert not any("grew" in t or "added latency" in t for t in texts(result))


def test_disjoint_buckets_bound_the_change():
    result = compare([scrape_run("b", 73.3, (60, 80), 1)], [scrape_run("c", 150.0, (120, 160), 2)])
    p = result.primary
    assert "histogram buckets [60, 80] ms → [120, 160] ms" in p.text
    assert p.text.endswith("a change between +40 ms and +100 ms")
    assert p.bucketed.within_resolution is False


def test_the_inf_bucket_is_a_lower_bound():
    result = compare([scrape_run("b", 73.3, (60, 80), 1)], [scrape_run("c", 400.0, (320, None), 2)])
    assert "at least 320 ms" in result.primary.text and result.primary.bucketed.candidate_high is None
    assert result.primary.text.endswith("a change of at least +240 ms")


def test_an_interpolated_verdict_inside_the_buckets_is_withheld():
    """Five runs a side whose interpolated p95s differ while every bucket is [60, 80] ms."""
    base = [scrape_run(f"b{i}", 64.0 + 0.1 * i, (60, 80), i) for i in range(1, 6)]
    cand = [scrape_run(f"c{i}", 76.0 + 0.1 * i, (60, 80), 10 + i) for i in range(1, 6)]
    result = compare(base, cand)
    effect = result.primary.effect
    assert effect.verdict is None and "within the histogram's resolution" in effect.note


def test_exact_percentiles_carry_no_bucket_bounds():
    result = compare([inference_run("b", run_id=1)], [inference_run("c", run_id=2)])
    assert "bucketed" not in result.to_json()["primary"]


def test_a_real_scrape_pair_shows_its_bucket_in_the_headline(sqlite_url):
    """The seed's example: vLLM scrapes whose TTFT p95 the buckets place in [60, 80] ms."""
    from store import open_store
    from tests.conftest import REPO
    from workbench.importers.base import ImportOptions
    from workbench.ingest import import_files

    inf = REPO / "tests" / "data" / "inference"
    st = open_store(sqlite_url)
    (run_id,) = import_files(
        st, [inf / "vllm_before.prom", inf / "vllm_after.prom"], ImportOptions(params={"scrape_pair": True})
    ).run_ids
    run = st.load_run(run_id)
    other = st.load_run(run_id)
    other.id = run_id + 1
    result = compare([run], [other], accepts={d: "test" for d in ("weights", "hardware", "topology", "request_mix")})
    assert result.comparable
    assert "both in the histogram bucket [60, 80] ms): within the histogram's resolution" in result.primary.text
