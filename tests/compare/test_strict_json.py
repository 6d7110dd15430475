"""Every ``--json`` is strict JSON (issue 27 item 8): ``show``, ``runs``, ``compare``,
``inspect``, ``diagnose``, ``rerun report`` and ``bisect report`` on every real capture
in tests/data/ and ../shared/real-captures/, parsed with a parser that refuses NaN and
±Infinity. A value that was not finite is ``null`` with the reason beside it.

One store for the module: each capture is imported once (identical files once), then
each command runs on what came in; pairs are consecutive runs of one lens.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from tests.conftest import REAL_CAPTURES, REPO
from tests.rerun.helpers import fake_bench, wb, write_plan
from workbench.vocabulary import NULL_REASON, jsonable

DATA = REPO / "tests" / "data"
ROOTS = (DATA, REAL_CAPTURES)
NOT_CAPTURES = {".md", ".txt_", ".py", ".yaml", ".log"}  # notes, generators, manifests; logs go to diagnose
PROM_PAIRS = (
    ("inference/vllm_before.prom", "inference/vllm_after.prom"),
    ("inference/vllm_old_before.prom", "inference/vllm_old_after.prom"),
)


def _constant(name: str):
    raise AssertionError(f"not strict JSON: {name}")


def strict(text: str):
    return json.loads(text, parse_constant=_constant)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _captures() -> list[list[str]]:
    """What to import, one import each: inference-perf result folders whole, a scrape
    pair together, sacct files with a time zone, every other file alone; a file met
    twice (tests/data copies the shared captures) once."""
    seen: set[str] = set()
    groups: list[list[str]] = []
    for root in ROOTS:
        if not root.is_dir():
            continue
        for results in sorted(root.rglob("results")):
            groups.append([str(results)])
            seen.update(_digest(f) for f in results.iterdir())
        for pair in PROM_PAIRS:
            if all((root / p).is_file() for p in pair):
                groups.append([str(root / p) for p in pair] + ["--scrape-pair"])
                seen.update(_digest(root / p) for p in pair)
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).parts
            if rel[0] in ("golden", "failures", "LICENSES") or path.suffix in NOT_CAPTURES or "LICENSE" in path.name:
                continue
            if "expected" in path.name or _digest(path) in seen:
                continue
            seen.add(_digest(path))
            groups.append([str(path), *(["--tz", "UTC"] if rel[0] == "fleet" else [])])
    return groups


def _incidents() -> list[Path]:
    """Each incident folder under failures/."""
    return [
        p for root in ROOTS if (root / "failures").is_dir() for p in sorted((root / "failures").iterdir()) if p.is_dir()
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("strict-json")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(var, str(tmp / var.lower()))
        mp.delenv("WB_STORE", raising=False)
        url = f"sqlite:///{tmp / 'wb.sqlite'}"
        imported, refused = [], []
        for group in _captures():
            code, out, err = wb("import", *group, "--json", store=url)
            if code == 0:
                imported += strict(out)["runs"]
            else:  # a file wb refuses says so in one line (tested elsewhere); nothing to run on
                assert code == 2 and len(err.strip().splitlines()) == 1, (group, code, err)
                refused.append(group[0])
        assert len(imported) >= 20, (imported, refused)
        yield url, tmp


def test_show_and_runs_are_strict(store):
    url, _ = store
    code, out, err = wb("runs", "--json", store=url)
    assert code == 0, err
    runs = strict(out)
    reasons = 0
    for run in runs:
        code, out, err = wb("show", str(run["id"]), "--json", store=url)
        assert code == 0, (run, err)
        strict(out)
        reasons += out.count(f'{NULL_REASON}"')
    # the Kineto traces carry NaN shares (wb show used to crash on them): null, with the reason
    assert reasons > 0


def _pairs(runs: list[dict]) -> list[tuple[int, int]]:
    by_lens: dict[str, list[int]] = {}
    for r in runs:
        by_lens.setdefault(r["lens"], []).append(r["id"])
    return [(ids[i], ids[i + 1]) for ids in by_lens.values() for i in range(len(ids) - 1)]


def _comparable_args(url: str, a: int, b: int) -> list[str]:
    """``A --vs B`` plus what it takes to get past a refusal (accepting each blocking
    dimension), so that the delta and its NaN-prone figures are encoded too."""
    accepted: list[str] = []
    for _ in range(4):
        args = [
            str(a),
            "--vs",
            str(b),
            *(["--accept", ",".join(accepted), "--why", "strict JSON test"] if accepted else []),
        ]
        code, out, err = wb("compare", *args, "--json", store=url)
        assert code == 0, (a, b, err)
        doc = strict(out)
        if doc["comparable"] or not doc.get("refusal"):
            return args
        refusal = doc["refusal"]
        blocking = [refusal.get("dimension"), *(refusal.get("also") or [])]
        new = [d for d in blocking if d and d not in accepted]
        if not new:
            return args
        accepted += new
    return args


def test_compare_and_inspect_are_strict(store):
    url, _ = store
    runs = strict(wb("runs", "--json", store=url)[1])
    pairs = _pairs(runs)
    assert pairs
    comparable = 0
    for a, b in pairs:
        args = _comparable_args(url, a, b)
        for command in ("compare", "inspect"):
            code, out, err = wb(command, *args, "--json", store=url)
            assert code == 0, (command, args, err)
            doc = strict(out)
        comparable += bool(doc.get("comparison", doc).get("comparable", True))
    assert comparable > 0


def test_diagnose_is_strict(store):
    url, _ = store
    incidents = _incidents()
    assert incidents
    for incident in incidents:
        paths = [incident]
        code, out, err = wb("diagnose", str(incident), "--json", store=url)
        if code == 2 and "one job's dumps at a time" in err:  # a folder of jobs (nvrx-fr_traces): each job alone
            paths = [d for d in sorted(incident.iterdir()) if d.is_dir() and d.name != "reference_outputs"]
        for path in paths:
            code, out, err = wb("diagnose", str(path), "--json", store=url)
            assert code in (0, 1), (path, err)
            assert strict(out)


def test_rerun_and_bisect_reports_are_strict(store):
    url, tmp = store
    bench = fake_bench(tmp)
    plan = write_plan(tmp / "strict.toml", baseline=[str(bench), "10"], candidate=[str(bench), "9"], name="strict")
    for args in (
        ("rerun", "plan", "--from-file", str(plan)),
        ("rerun", "run", "strict", "--workdir", str(tmp / "work")),
    ):
        code, _, err = wb(*args, "--json", store=url)
        assert code == 0, err
    code, out, err = wb("rerun", "report", "strict", "--json", store=url)
    assert code == 0, err
    assert strict(out)["verdict"]

    from tests.bisect.test_bisect import BENCH

    (tmp / "versions.txt").write_text("1.0\n1.1\n1.2\n1.3\n")
    script = tmp / "bisect-bench.sh"
    script.write_text(BENCH.replace("F=$(cat speed.txt)", 'F=$(case "$1" in 1.0|1.1) echo 1.0;; *) echo 1.05;; esac)'))
    code, _, err = wb(
        "bisect",
        "start",
        "--candidates",
        str(tmp / "versions.txt"),
        "--bench",
        f"sh {script} {{version}}",
        "--name",
        "strict",
        "--max-rounds",
        "12",
        "--workdir",
        str(tmp / "bisect-work"),
        "--json",
        store=url,
    )
    assert code == 0, err
    code, out, err = wb("bisect", "report", "strict", "--json", store=url)
    assert code == 0, err
    strict(out)


def test_the_encoder_puts_the_reason_beside_a_null():
    doc = jsonable({"a": math.nan, "b": [1.0, math.inf, -math.inf], "c": {"d": 2.0}, "e": (math.nan,)})
    text = json.dumps(doc, allow_nan=False)
    assert strict(text) == {
        "a": None,
        f"a{NULL_REASON}": "not a number (NaN): unknown",
        "b": [1.0, None, None],
        f"b{NULL_REASON}": {"1": "+infinity: not a finite number", "2": "-infinity: not a finite number"},
        "c": {"d": 2.0},
        "e": [None],
        f"e{NULL_REASON}": {"0": "not a number (NaN): unknown"},
    }


def test_decoding_restores_what_the_reason_says():
    """A document decoded and encoded again is the same document (stored and bundled comparisons)."""
    from workbench.vocabulary import from_jsonable

    doc = jsonable({"a": math.nan, "b": [1.0, math.inf, None], "c": {"d": -math.inf}, "n": None})
    back = from_jsonable(doc)
    assert math.isnan(back["a"]) and back["b"][1] == math.inf and back["b"][2] is None and back["c"]["d"] == -math.inf
    assert back["n"] is None and not any(k.endswith(NULL_REASON) for k in back)
    assert jsonable(back) == doc
