#!/usr/bin/env python3
"""A stand-in serving benchmark that speaks the rerun harness protocol: for trying
``wb action`` on the demo's inference investigation without a GPU or a server.

It runs nothing. It writes the demo's inference capture (``captures/demo/inference/
baseline-1.json``: synthetic, illustrative values) with ``engine_config.max_num_seqs``
set to ``--max-num-seqs`` and every request's queue time scaled to a mean of about
``--queue-ms`` (the knob: the effect the demo's benchmark is told to show, with a little
per-run and per-request variation), TTFT following. The capture goes to
``$WB_CAPTURE_OUT`` (or ``--out``). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

DEMO_CAPTURE = Path(__file__).resolve().parent.parent / "demo" / "inference" / "baseline-1.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-num-seqs", type=int, required=True)
    ap.add_argument("--queue-ms", type=float, required=True, help="mean queue time to write (the stand-in's effect)")
    ap.add_argument("--engine-revision", default="v0.8.3")
    ap.add_argument("--out", default=os.environ.get("WB_CAPTURE_OUT"))
    args = ap.parse_args(argv)
    if not args.out:
        ap.error("no output path: set WB_CAPTURE_OUT or give --out")
    doc = json.loads(DEMO_CAPTURE.read_text())
    doc["label"] = f"stand-in max_num_seqs {args.max_num_seqs}"
    doc["dimensions"]["engine_revision"] = args.engine_revision
    doc["dimensions"]["engine_config"] = {"max_num_seqs": args.max_num_seqs}
    doc.pop("demo", None)
    slot = int(os.environ.get("WB_RERUN_SLOT", "0"))
    per_run = 1 + ((slot * 7919) % 13 - 6) / 400  # a little run-to-run variation, deterministic per slot
    for i, sample in enumerate(doc["samples"]):
        sample["queue_ms"] = round(args.queue_ms * per_run * (1 + (i % 7 - 3) / 100), 4)
        sample["ttft_ms"] = round(sample["queue_ms"] + sample["prefill_ms"], 4)
    Path(args.out).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
