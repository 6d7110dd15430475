"""A small, deterministic stand-in for the compare engine, plus store builders.

``fake_compare`` follows the JSON contract of ``wb compare --json`` (issue 4) closely
enough for investigations and bundles, which only store, export and recompare it.
It computes from the samples, so editing a recorded result is detectable by recompute.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from store.api import CaptureInfo
from store.records import Dimension, RunRecord, Work


class FakeComparison:
    def __init__(self, doc):
        self.doc = doc

    def to_json(self):
        return self.doc


def fake_compare(baseline_runs, candidate_runs, lens=None, changes=None, accepts=None, guardrails=()):
    def side(runs):
        per_run = [float(np.nanmean(r.samples["ttft_ms"])) for r in runs]
        return float(np.mean(per_run)), per_run

    b, b_runs = side(baseline_runs)
    c, c_runs = side(candidate_runs)
    verdict = None
    if len(b_runs) > 1 and len(c_runs) > 1:
        verdict = "REGRESSION" if c > b * 1.02 else "IMPROVEMENT" if c < b * 0.98 else "EQUIVALENT"
    doc = {
        "lens": lens,
        "comparable": True,
        "refusal": None,
        "dimensions": [
            {"name": k, "state": "changed", "baseline": v[0], "candidate": v[1], "source": "declared"}
            for k, v in (changes or {}).items()
        ],
        "primary": {
            "metric": "ttft_mean",
            "unit": "ms",
            "baseline": b,
            "candidate": c,
            "delta": c - b,
            "delta_pct": (c - b) / b * 100,
            "effect": {"verdict": verdict, "per_run": [b_runs, c_runs]},
        },
        "phases": None,
        "observations": [
            {
                "text": f"TTFT mean grew from {b:.1f} ms to {c:.1f} ms.",
                "evidence": {"metric": "ttft_mean", "baseline": b, "candidate": c},
            }
        ],
        "guardrails": [],
        "work": {"accepts": dict(accepts or {})},
    }
    return FakeComparison(doc)


def make_run(label: str, mean: float, n: int = 50, seed: int = 0, lens: str = "inference") -> RunRecord:
    rng = np.random.default_rng(seed)
    r = RunRecord(
        lens=lens,
        label=label,
        dimensions={
            "model": Dimension("Llama 3.1 8B", "declared"),
            "engine": Dimension("v0.8.3" if "cand" in label else "v0.8.2"),
        },
        window={"kind": "steady", "warmup_excluded": 2},
        work=Work("tokens", 128.0 * n),
        quality={"error_rate": 0.0},
        meta={"recorded_at_ns": 1796008233577080157},
    )
    r.samples["ttft_ms"] = rng.normal(mean, 5.0, n)
    r.samples["ttft_ms"][3] = np.nan  # a missing value stays unknown
    r.samples["request_id"] = np.array([f"req-{i}" for i in range(n)])
    return r


def populate(store, tmp_path: Path, n_per_side: int = 3) -> tuple[list[int], list[int], dict[str, Path]]:
    """Baseline runs near 110 ms, candidates near 230 ms, each from its own capture file."""
    caps, runs, files = [], [], {}
    for i in range(2 * n_per_side):
        cand = i >= n_per_side
        label = f"{'cand' if cand else 'base'}-{i % n_per_side}"
        path = tmp_path / f"{label}.json"
        path.write_text(f'{{"capture": "{label}"}}')
        files[label] = path
        data = path.read_bytes()
        caps.append(
            CaptureInfo(
                path=path,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
                format="native",
                importer="native",
                importer_version="1",
            )
        )
        run = make_run(label, 230.0 if cand else 110.0, seed=i)
        run.sources = [path]
        runs.append(run)
    ids = store.add_import(caps, runs)
    return ids[:n_per_side], ids[n_per_side:], files
