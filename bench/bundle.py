"""Bundle export and verify with 100,000 embedded samples (a benchmark, not a test).

    .venv/bin/python bench/bundle.py [--samples 100000] [--runs 10]
    .venv/bin/python bench/bundle.py --memory

``--memory``: the peak resident memory of ``wb evidence verify --recompute`` (the CLI, in a
child process: its VmHWM) on each case below, as a ratio to the bundle's size: (peak - the
anchor's) / (size - the anchor's), the anchor being the same case at 20 values a column (the
interpreter and the engines it loads). The cases: the samples of the timing run (floats and
a text column), a 48 MiB bundle of one column of 7.5 M two-character strings (issue 42: 1.7 GB
before), 300 runs of float samples, and 300 runs of short unique strings. Issue 42 asks under
3x the bundle's size, and under 1.5 GB in all for the string column. (A column of distinct short
strings costs more than that: each value is its own Python ``str``, ~50 bytes of header for a
few characters; equal values are one shared object.)

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
import subprocess
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


def _bundle_of(samples: dict, path: Path) -> int:
    refs = list(samples)
    half = max(1, len(refs) // 2)
    bundle = build_bundle(
        investigation={"ref": "investigation/1", "lens": "inference", "question": "bench"},
        runs=[{"ref": r, "label": r, "lens": "inference"} for r in refs],
        captures=[],
        comparisons=[
            {
                "ref": "comparison/1",
                "baseline": refs[:half],
                "candidate": refs[half:] or refs,
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
    write_bundle(bundle, path)
    return path.stat().st_size


# The child: wb evidence verify --recompute in-process, then its peak RSS (KiB): VmHWM, the high
# water mark of this process image (ru_maxrss would carry the parent's across fork and exec on Linux).
CHILD = """
import sys
from workbench.cli import main
try:
    main(["evidence", "verify", sys.argv[1], "--recompute", "--max-size", "1GB", "--json"])
except SystemExit:
    pass
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(hwm.split()[1], file=sys.stderr)
"""


def peak_rss(path: Path) -> int:
    """Peak RSS in bytes of ``wb evidence verify --recompute PATH``, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    return int(done.stderr.strip().splitlines()[-1]) * 1024


def _two_letters(rng: np.random.Generator, n: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return np.char.add(letters[rng.integers(0, 26, n)], letters[rng.integers(0, 26, n)])


def memory() -> None:
    rng = np.random.default_rng(2)
    # name -> the case's samples at a number of values per column (the anchor: the same runs and
    # columns with 20 values each, so the interpreter and every engine the case loads are in it)
    cases = {
        "floats + a text column (the timing run)": lambda n: make_samples(n * 10, 10),
        "one column of 7.5 M two-character strings": lambda n: {"run/1": {"samples": {"tag": _two_letters(rng, n)}}},
        "300 runs of 2,000 float samples": lambda n: {
            f"run/{r}": {"samples": {"ttft_ms": rng.gamma(4.0, 25.0, n)}} for r in range(300)
        },
        "300 runs of 2,000 unique short strings": lambda n: {
            f"run/{r}": {"samples": {"request_id": np.array([f"r{r}-{i}" for i in range(n)], dtype=object)}}
            for r in range(300)
        },
    }
    sizes = {"floats + a text column (the timing run)": 10_000, "one column of 7.5 M two-character strings": 7_500_000}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.json"
        for name, make in cases.items():
            small = _bundle_of(make(20), path)
            anchor = peak_rss(path)
            size = _bundle_of(make(sizes.get(name, 2000)), path)
            peak = peak_rss(path)
            print(
                f"{name}: bundle {size / 2**20:.1f} MiB, peak RSS {peak / 2**20:.0f} MiB "
                f"(anchor: {anchor / 2**20:.0f} MiB at 20 values a column); "
                f"ratio (peak - anchor) / size {(peak - anchor) / (size - small):.2f}"
            )


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--memory", action="store_true", help="peak RSS of verify --recompute, as a ratio to bundle size")
    args = ap.parse_args()
    if args.memory:
        memory()
        return
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
