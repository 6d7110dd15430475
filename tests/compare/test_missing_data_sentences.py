"""Observations stay true when data is missing (property test over every lens).

For every lens, any subset of missing phases, metrics and dimensions (on either side or
both, as an absent column or an all-NaN one): no observation says "unknown", "None" or
"nan"; a rule cites only known values; every phase not known on both sides, and an
unknown primary metric, gets its sentence; "none of its recorded phases moved" needs a
recorded phase.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from factories import fleet_run, inference_run, training_run
from lenses import builtin_lens
from workbench.compare import compare

BAD_WORDS = ("unknown to", "to unknown", "None", "nan", "NaN", "inf ", "(unknown", "unknown)")

LENS_SETUP = {
    "inference": {
        "columns": ("queue_ms", "prefill_ms", "decode_ms", "ttft_ms", "ok", "e2e_ms"),
        "dims": ("model", "weights", "hardware", "topology", "request_mix", "precision", "engine_revision"),
    },
    "training": {
        "columns": ("input_ms", "compute_ms", "communication_ms", "checkpoint_ms", "step_ms", "samples"),
        "dims": ("model", "objective", "hardware", "topology", "optimizer", "framework"),
    },
    "fleet": {
        "columns": ("eligible", "start", "gpus", "end"),
        "dims": ("pool", "device_types", "scheduler_policy", "workload_mix"),
    },
}


def make(lens: str, side: str, i: int, shift: dict[str, float], dropped_dims: tuple[str, ...]):
    dims = {d: None for d in dropped_dims}
    run_id = (1 if side == "baseline" else 100) + i
    if lens == "inference":
        return inference_run(
            f"{side}{i}",
            seed=run_id,
            n=60,
            run_id=run_id,
            queue=40 * shift.get("queue", 1.0),
            prefill=70 * shift.get("prefill", 1.0),
            decode=90 * shift.get("decode", 1.0),
            **dims,
        )
    if lens == "training":
        return training_run(
            f"{side}{i}",
            seed=run_id,
            steps=12,
            run_id=run_id,
            comm=115 * shift.get("comm", 1.0),
            compute=260 * shift.get("compute", 1.0),
            eval_loss=2.14,
            **dims,
        )
    waits = tuple(14.0 * shift.get("wait", 1.0) + 0.1 * k + i for k in range(10))
    return fleet_run(
        f"{side}{i}",
        waits=() if shift.get("none_started") else waits,
        waiting_gangs=(16,) * int(shift.get("waiting", 0)),
        run_id=run_id,
        **dims,
    )


def drop(run, column: str, how: str) -> None:
    cols = run.tables["samples"]
    if column not in cols:
        return
    if how == "absent":
        del cols[column]
    else:
        cols[column] = np.full(len(cols[column]), np.nan)


def scenario(lens: str):
    setup = LENS_SETUP[lens]
    sides = st.sampled_from(("baseline", "candidate", "both"))
    shifts = {
        "inference": st.fixed_dictionaries(
            {
                "queue": st.sampled_from((1.0, 4.0)),
                "prefill": st.sampled_from((1.0, 1.7)),
                "decode": st.sampled_from((1.0, 1.5)),
            }
        ),
        "training": st.fixed_dictionaries(
            {"comm": st.sampled_from((1.0, 2.3)), "compute": st.sampled_from((1.0, 1.2))}
        ),
        "fleet": st.fixed_dictionaries(
            {"wait": st.sampled_from((1.0, 6.0)), "waiting": st.sampled_from((0, 3, 6)), "none_started": st.booleans()}
        ),
    }[lens]
    return st.fixed_dictionaries(
        {
            "n_base": st.integers(1, 3),
            "n_cand": st.integers(1, 3),
            "shift": shifts,
            "columns": st.dictionaries(
                st.sampled_from(setup["columns"]),
                st.tuples(sides, st.sampled_from(("absent", "nan"))),
                max_size=len(setup["columns"]),
            ),
            "dims": st.dictionaries(st.sampled_from(setup["dims"]), sides, max_size=3),
            "quality": st.sampled_from(("kept", "baseline", "candidate", "both")),
            "fleet_pool": st.sampled_from(("kept", "no_target", "no_capacity")),
        }
    )


def build(lens: str, case: dict):
    runs = {"baseline": [], "candidate": []}
    for side, n in (("baseline", case["n_base"]), ("candidate", case["n_cand"])):
        shift = {} if side == "baseline" else case["shift"]
        dims = tuple(d for d, where in case["dims"].items() if where in (side, "both"))
        for i in range(n):
            run = make(lens, side, i, shift, dims)
            for column, (where, how) in case["columns"].items():
                if where in (side, "both"):
                    drop(run, column, how)
            if case["quality"] in (side, "both"):
                run.quality.clear()
            pool = run.meta.get("pool")
            if pool is not None and case["fleet_pool"] == "no_target":
                pool["wait_target_s"] = None
            elif pool is not None and case["fleet_pool"] == "no_capacity":
                pool["capacity_gpus"] = None
            runs[side].append(run)
    return runs["baseline"], runs["candidate"]


def unknown_values(value, path="values"):
    """Paths of None/NaN values inside cited evidence values."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from unknown_values(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from unknown_values(v, f"{path}[{i}]")
    elif value is None or (isinstance(value, float) and not math.isfinite(value)):
        yield path


def check(lens_name: str, case: dict) -> None:
    base, cand = build(lens_name, case)
    lens = builtin_lens(lens_name)
    accepts = {d.name: "property test: accepted" for d in lens.dimensions if d.must_match}
    result = compare(base, cand, lens=lens_name, accepts=accepts)
    doc = result.to_json()
    assert doc["comparable"], doc["refusal"]
    texts = [o["text"] for o in doc["observations"]]
    for o in doc["observations"]:
        assert not any(w in o["text"] for w in BAD_WORDS), o["text"]
        assert o["text"].strip() and o["kind"] == "observation, not cause"
        assert not list(unknown_values(o["evidence"].get("values"))), (o["text"], o["evidence"]["values"])
    said = " ".join(texts)
    if lens_name != "fleet":
        for p in doc["phases"] or []:
            stat = p.get("statistic", "mean")
            if p[f"baseline_{stat}"] is None or p[f"candidate_{stat}"] is None:
                assert any(p["name"] in (o["evidence"]["values"].get("missing") or []) for o in doc["observations"]), (
                    p["name"],
                    texts,
                )
        if doc["primary"]["baseline"] is None or doc["primary"]["candidate"] is None:
            assert f"{doc['primary']['title'].capitalize()} was not recorded" in said, texts
        recorded = [
            p
            for p in doc["phases"] or []
            if p["in_primary"]
            and p[f"baseline_{p.get('statistic', 'mean')}"] is not None
            and p[f"candidate_{p.get('statistic', 'mean')}"] is not None
        ]
        if "none of its recorded phases moved" in said:
            assert recorded, texts
    else:
        for side in ("baseline", "candidate"):
            if doc["primary"][side] is None:
                assert f"{side} window" in said, texts


SETTINGS = settings(max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@SETTINGS
@given(case=scenario("inference"))
def test_inference_sentences_are_true_with_missing_data(case):
    check("inference", case)


@SETTINGS
@given(case=scenario("training"))
def test_training_sentences_are_true_with_missing_data(case):
    check("training", case)


@SETTINGS
@given(case=scenario("fleet"))
def test_fleet_sentences_are_true_with_missing_data(case):
    check("fleet", case)


def test_no_phase_recorded_says_the_change_cannot_be_located():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 4)]
    cand = [inference_run(f"c{i}", seed=50 + i, queue=160, run_id=50 + i) for i in range(1, 4)]
    for r in [*base, *cand]:
        for col in ("queue_ms", "prefill_ms", "decode_ms"):
            del r.tables["samples"][col]
    texts = [o["text"] for o in compare(base, cand).to_json()["observations"]]
    assert (
        "Frontend, queue and prefill were not recorded: the change in time to first token, p95 cannot be located."
        in texts
    )
    assert not any("none of its recorded phases" in t for t in texts)


def test_a_phase_missing_on_one_side_is_said_once():
    base = [inference_run(f"b{i}", seed=i, run_id=i) for i in range(1, 4)]
    cand = [inference_run(f"c{i}", seed=50 + i, run_id=50 + i) for i in range(1, 4)]
    for r in base:
        del r.tables["samples"]["queue_ms"]
    texts = [o["text"] for o in compare(base, cand).to_json()["observations"]]
    assert "Queue was not recorded in the baseline runs: its change cannot be given." in texts
    assert not any("Queue went from" in t for t in texts)


PHASE_COLUMNS = {
    "inference": ("queue_ms", "prefill_ms", "decode_ms"),
    "training": ("input_ms", "compute_ms", "communication_ms", "checkpoint_ms"),
}


def _every_phase_pattern(lens: str):
    import itertools

    for pattern in itertools.product(("kept", "baseline", "candidate", "both"), repeat=len(PHASE_COLUMNS[lens])):
        yield {c: (where, "absent") for c, where in zip(PHASE_COLUMNS[lens], pattern) if where != "kept"}


def test_every_subset_of_missing_phases_on_either_side():
    """Exhaustive over which phases are missing where (one run a side, the primary moved)."""
    shifts = {"inference": {"queue": 4.0}, "training": {"comm": 2.3}}
    for lens in ("inference", "training"):
        for columns in _every_phase_pattern(lens):
            case = {
                "n_base": 1,
                "n_cand": 1,
                "shift": shifts[lens],
                "columns": columns,
                "dims": {},
                "quality": "kept",
                "fleet_pool": "kept",
            }
            check(lens, case)


def test_the_headline_never_reads_unknown_to_unknown():
    from workbench.numbers import change

    assert change(None, float("nan"), "ms") == "not recorded on either side"
    assert change(None, 230.0, "ms") == "unknown → 230 ms"
    assert change(110.0, 230.0, "ms") == "110 ms → 230 ms, +120 ms (+109 %)"
