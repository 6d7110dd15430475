"""`wb compare` and `wb inspect` on the demo pairs print what they printed when the
goldens were recorded (tests/data/golden/, from `wb demo`'s store): speed work on the
statistics and the store must not move a digit.

A change that is meant to alter the output re-records them:
``WB_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/compare/test_golden.py``, then
read the diff of tests/data/golden/ before committing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from store import open_store

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
REGEN = bool(os.environ.get("WB_REGEN_GOLDEN"))

# name -> (lens, baseline ids, candidate ids, changes): the ids `wb demo` gives its runs.
PAIRS = {
    "inf": ("inference", [1, 2, 3, 4, 5], [11, 12, 13, 14, 15], {"engine_revision": ("v0.8.2", "v0.8.3")}),
    "train": ("training", [16, 17, 18, 19, 20], [26, 27, 28, 29, 30], {"framework": None}),
    "fleet": ("fleet", [31, 32, 33, 34, 35], [41, 42, 43, 44, 45], {}),
    "refused": ("inference", [1, 2, 3, 4, 5], [46], {"engine_revision": ("v0.8.2", "v0.8.3")}),
}


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    from workbench.demo import load_demo

    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('golden') / 'demo.sqlite'}")
    load_demo(store)
    cache: dict[int, object] = {}

    def runs(ids):
        for i in ids:
            if i not in cache:
                cache[i] = store.load_run(i)
        return [cache[i] for i in ids]

    return runs


def _plain(doc):
    """The document as `--json` prints it, without the numpy version (an environment fact)."""
    from workbench.cli.context import _default

    text = json.dumps(doc, allow_nan=False, default=_default)
    return _strip(json.loads(text))


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "numpy_version"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _check(name: str, doc, text: str) -> None:
    jpath, tpath = GOLDEN / f"{name}.json", GOLDEN / f"{name}.txt"
    if REGEN:
        jpath.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
        tpath.write_text(text)
        return
    assert _plain(doc) == _strip(json.loads(jpath.read_text())), f"{name}: --json output changed"
    assert text == tpath.read_text(), f"{name}: text output changed"


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_compare_matches_golden(demo_runs, pair):
    from workbench.compare import compare
    from workbench.compare.render import render_comparison

    lens, base, cand, changes = PAIRS[pair]
    result = compare(demo_runs(base), demo_runs(cand), lens=lens, changes=changes)
    _check(f"compare-{pair}", result.to_json(), render_comparison(result) + "\n")


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_inspect_matches_golden(demo_runs, pair):
    from workbench.compare import inspect
    from workbench.compare.render import render_inspect

    lens, base, cand, changes = PAIRS[pair]
    result = inspect(demo_runs(base), demo_runs(cand), lens=lens, changes=changes)
    _check(f"inspect-{pair}", result.to_json(), render_inspect(result) + "\n")
