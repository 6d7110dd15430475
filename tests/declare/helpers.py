"""Running ``wb`` in-process for the declare tests, and small stores to run it on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.foundation.helpers import inference_capture, write_json


def wb(capsys, *args: str, expect: int | None = 0):
    """(exit code, stdout, stderr) of ``wb ARGS``; asserts the code unless expect is None."""
    from workbench.cli import main

    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    if expect is not None:
        assert code == expect, (args, code, out.err)
    return code, out.out, out.err


def wbj(capsys, *args: str, expect: int | None = 0):
    _code, out, _err = wb(capsys, *args, "--json", expect=expect)
    return json.loads(out)


def inference_pair(root: Path, *, drop: tuple[str, ...] = ("model",)) -> list[Path]:
    """Two native inference captures (different content) whose files lack ``drop``."""
    paths = []
    for i, label in enumerate(("before", "after")):
        doc = inference_capture(n=6, label=label)
        doc["dimensions"].update({"weights": "bf16 safetensors", "topology": "single GPU"})
        doc["samples"] = [{**s, "ttft_ms": s["ttft_ms"] + 7 * i} for s in doc["samples"]]
        for name in drop:
            doc["dimensions"].pop(name, None)
        paths.append(write_json(root / f"{i + 1}-{label}.json", doc))
    return paths
