"""Small builders for native captures used across foundation tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def inference_capture(n: int = 5, **overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "workbench.capture/1",
        "lens": "inference",
        "label": "engine v0.8.3, run 1",
        "recorded_at": "2026-11-29T10:00:00Z",
        "dimensions": {
            "model": "Llama 3.1 8B",
            "hardware": "1x H100 SXM5 80GB",
            "request_mix": "512 prompt / 128 output tokens",
        },
        "window": {"kind": "steady", "warmup_excluded": 2},
        "work": {"unit": "tokens", "amount": 128 * n},
        "quality": {"error_rate": 0.0},
        "samples": [
            {
                "id": f"r-{i:04d}",
                "prompt_tokens": 512,
                "output_tokens": 128,
                "queue_ms": 40.0 + i,
                "prefill_ms": 69.0,
                "decode_ms": 90.0,
                "ttft_ms": 110.0 + i,
                "ok": True,
            }
            for i in range(n)
        ],
    }
    doc.update(overrides)
    return doc


def write_json(path: Path, doc: Any, *, gz: bool = False) -> Path:
    text = json.dumps(doc)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path
