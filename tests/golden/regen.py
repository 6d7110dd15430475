"""Rewrite the golden outputs: ``.venv/bin/python -m tests.golden.regen [CASE...]``.

Run it after a change that is meant to alter a ``--json`` output or a bundle, then review
``git diff tests/data/golden/ docs/schema/`` and commit the goldens with the change that
explains them. A golden is rewritten only where it differs by structure (tests/golden/structural.py):
one whose floats moved only in their last bits, as on another CPU, is left as it is. It also rewrites the JSON Schemas
in docs/schema/ (tests/golden/schemas.py).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.golden.cases import CASES, GOLDEN_DIR, Stores, golden_path, produce
from tests.golden.schemas import write as write_schemas
from tests.golden.structural import differences, rederived_digests


def _differs(path: Path, name: str, text: str) -> bool:
    expected, actual = json.loads(path.read_text(encoding="utf-8")), json.loads(text)
    rederived = rederived_digests(actual) if name.startswith("demo_bundle") else frozenset()
    return any(True for _ in differences(expected, actual, rederived=rederived))


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(sorted(CASES))}", file=sys.stderr)
        return 2
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    if not names:  # a full regeneration drops goldens of removed cases
        for stale in GOLDEN_DIR.glob("*.json"):
            if stale.stem not in CASES:
                stale.unlink()
    with tempfile.TemporaryDirectory(prefix="wb-golden-") as tmp:
        stores = Stores(Path(tmp))
        for name in names or sorted(CASES):
            text = produce(stores, name)
            path = golden_path(name)
            changed = not path.is_file() or _differs(path, name, text)
            if changed:  # a golden that only moved in the last bits of a float stays as it is
                path.write_text(text, encoding="utf-8")
            print(f"{'changed' if changed else 'same   '} {path.relative_to(GOLDEN_DIR.parents[2])}", file=sys.stderr)
    for path in write_schemas():
        print(f"changed {path.relative_to(GOLDEN_DIR.parents[2])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
