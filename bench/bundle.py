"""Bundle export and verify with 100,000 embedded samples (a benchmark, not a test).

    .venv/bin/python bench/bundle.py [--samples 100000] [--runs 10]

Prints, in one run, side by side:
- ours: build + write, read (strict parse), verify (checksum + part digests), verify --recompute
  is left out (it times the compare engine, not bundles);
- anchor 1, "canonicalize everything": the same samples as JSON number arrays through
  ``rfc8785.dumps`` + SHA-256 (what a bundle costs if every float is formatted like
  ECMAScript), and the bytes it would take;
- anchor 2, the floor: ``json.dumps`` + ``hashlib.sha256`` of the same document (not
  canonical, so not a valid checksum; the least any JSON bundle can cost).
Ratios are ours / anchor. One run each; the machine's load shows in the numbers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workbench.bundle.export import build_bundle, write_bundle
from workbench.bundle.reader import read_bundle_file
from workbench.bundle.verify import verify_bundle

COLUMNS = ("ttft_ms", "queue_ms", "prefill_ms", "decode_ms", "prompt_tokens", "output_tokens")


def make_samples(total: int, runs: int, seed: int = 1) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    per = total // runs
    out = {}
    for r in range(runs):
        cols = {c: rng.gamma(4.0, 25.0, per) for c in COLUMNS}
        cols["ttft_ms"][::97] = np.nan  # missing values stay unknown
        cols["request_id"] = np.array([f"r{r}-{i}" for i in range(per)])
        out[f"run/{r + 1}"] = {"samples": cols}
    return out


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    samples = make_samples(args.samples, args.runs)
    refs = list(samples)
    half = len(refs) // 2

    def build():
        return build_bundle(
            investigation={"ref": "investigation/1", "lens": "inference", "question": "bench"},
            runs=[{"ref": r, "label": r} for r in refs],
            captures=[],
            comparisons=[
                {
                    "ref": "comparison/1",
                    "baseline": refs[:half],
                    "candidate": refs[half:],
                    "parameters": {"lens": "inference"},
                    "engine": {},
                    "result": {"comparable": True},
                }
            ],
            observations=[],
            hypotheses=[],
            samples=samples,
            tool={"name": "wb", "version": "bench"},
        )

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bundle.json"
        bundle, t_build = timed(build)
        _, t_write = timed(lambda: write_bundle(bundle, path))
        size = path.stat().st_size
        doc, t_read = timed(lambda: read_bundle_file(path))
        report, t_verify = timed(lambda: verify_bundle(doc, source=path))
        assert report.ok, report.mismatched

    # Anchor 1: every float as a JSON number, canonicalized by rfc8785.
    import rfc8785

    as_numbers = {
        ref: {
            c: [None if np.isnan(v) else float(v) for v in col] if col.dtype.kind == "f" else col.tolist()
            for c, col in t["samples"].items()
        }
        for ref, t in samples.items()
    }
    canon, t_jcs = timed(lambda: rfc8785.dumps(as_numbers))
    _, t_jcs_hash = timed(lambda: hashlib.sha256(canon).hexdigest())
    t_jcs += t_jcs_hash
    # Anchor 2: json.dumps + sha256 of our own document (the floor).
    _, t_floor = timed(lambda: hashlib.sha256(json.dumps(bundle).encode()).hexdigest())

    n = args.samples
    print(
        f"bundle with {n:,} embedded samples ({len(COLUMNS)} numeric + 1 text column, {args.runs} runs): "
        f"{size / 1e6:.1f} MB"
    )
    print(f"  export (build + digests + checksum)   {t_build * 1e3:8.1f} ms")
    print(f"  write                                 {t_write * 1e3:8.1f} ms")
    print(f"  strict read (parse + checks)          {t_read * 1e3:8.1f} ms")
    print(f"  verify (checksum + part digests)      {t_verify * 1e3:8.1f} ms")
    print(
        f"anchor: rfc8785 over the samples as JSON numbers: {t_jcs * 1e3:8.1f} ms, {len(canon) / 1e6:.1f} MB canonical"
    )
    print(f"anchor: json.dumps + sha256 (not canonical)     : {t_floor * 1e3:8.1f} ms")
    print(f"ratio export / rfc8785-of-numbers : {t_build / t_jcs:6.2f}")
    print(f"ratio verify / rfc8785-of-numbers : {t_verify / t_jcs:6.2f}")
    print(f"ratio verify / json.dumps floor   : {t_verify / t_floor:6.2f}")


if __name__ == "__main__":
    main()
