"""The golden cases: what ``wb`` prints with ``--json`` for the demo and real captures.

Each case runs ``wb`` in this process on a store built once per session, and returns the
document with its volatile fields normalised (:func:`normalise`). The goldens live in
``tests/data/golden/<case>.json``; ``tests/golden/test_golden.py`` checks them and
``python -m tests.golden.regen`` rewrites them (after a change that is meant to alter an
output: review the diff of ``tests/data/golden/`` before committing it).

Normalised, and nothing else:

- timestamps the store or the bundle writer stamps at run time (keys in ``TIME_KEYS``);
- absolute paths of the temporary store and of the repository (``<TMP>``, ``<REPO>``);
- the package version (``wb``'s and the compare engine's, ``<VERSION>``);
- a bundle's digests and checksum are recomputed over the normalised bundle, after
  checking that the bundle as written verifies (`wb evidence verify`, with `--recompute`
  when it embeds samples); embedded samples are kept as their digest only.

The goldens are compared by structure, floats within a tolerance (tests/golden/structural.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
GOLDEN_DIR = DATA / "golden"
DEMO = REPO / "captures" / "demo"

# Keys whose values are wall-clock stamps of this session (store rows, bundle writer).
TIME_KEYS = frozenset({"created_at", "imported_at", "pinned_at", "decided_at", "at", "updated_at"})
VERSION_KEYS = frozenset({"version"})


def wb(store: str, *args: str) -> tuple[int, str, str]:
    """``wb --store STORE args...`` in this process: (exit code, stdout, stderr)."""
    from tests.rerun.helpers import wb as run_wb

    return run_wb(*args, store=store)


def wb_json(store: str, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
    code, out, err = wb(store, *args, "--json")
    if code not in ok:
        raise AssertionError(f"wb {' '.join(args)} exited {code}: {err.strip()}")
    return {"exit": code, "document": json.loads(out)}


@dataclass
class Stores:
    """The stores and scratch folder of one session (built lazily, once)."""

    tmp: Path
    _urls: dict[str, str] = field(default_factory=dict)
    imported: dict[str, list[int]] = field(default_factory=dict)  # REAL_IMPORTS group -> run ids
    demo_load: Any = None  # what `wb demo --json` said when it loaded the demo store

    def demo(self) -> str:
        if "demo" not in self._urls:
            url = f"sqlite:///{self.tmp / 'demo.sqlite'}"
            self.demo_load = wb_json(url, "demo")
            self._urls["demo"] = url
        return self._urls["demo"]

    def real(self) -> str:
        """A store with real captures from tests/data, one import per group (run ids recorded)."""
        if "real" not in self._urls:
            url = f"sqlite:///{self.tmp / 'real.sqlite'}"
            for name, paths in REAL_IMPORTS.items():
                doc = wb_json(url, "import", *[str(DATA / p) for p in paths])["document"]
                self.imported[name] = list(doc["runs"])
            self._urls["real"] = url
        return self._urls["real"]


# Single-run captures first, so their run ids do not move when an importer splits a file differently.
REAL_IMPORTS = {
    "trace_control": ["training/trace_diff/control/control.json.gz"],
    "trace_test": ["training/trace_diff/test/test.json.gz"],
    "vllm": ["inference/real/inference-perf-kubecon-na-2025/vllm"],
    "vllm_v0": ["inference/real/inference-perf-kubecon-na-2025/vllm+v0_engine"],
}


def _ids(ids: range | list[int]) -> list[str]:
    return [str(i) for i in ids]


# Demo run ids, as `wb demo` imports them (docs/investigations.md lists the same).
INF_A, INF_A2, INF_B = range(1, 6), range(6, 11), range(11, 16)
TR_A, TR_A2, TR_B = range(16, 21), range(21, 26), range(26, 31)
FL_A, FL_A2, FL_B = range(31, 36), range(36, 41), range(41, 46)
OTHER_GPU = 46


def _pair(a, b, control=None) -> list[str]:
    args = [*_ids(a), "--vs", *_ids(b)]
    for c in control or ():
        args += ["--control", str(c)]
    return args


def _demo_compare(kind: str, a, b, control=None, *extra: str, ok=(0,)) -> Callable[[Stores], Any]:
    return lambda s: wb_json(s.demo(), kind, *_pair(a, b, control), *extra, ok=ok)


def _bundle(inv: int, *extra: str) -> Callable[[Stores], Any]:
    def run(s: Stores) -> Any:
        path = s.tmp / f"bundle-{inv}{'-samples' if extra else ''}.json"
        code, _, err = wb(s.demo(), "bundle", "export", str(inv), "-o", str(path), *extra)
        if code:
            raise AssertionError(f"bundle export {inv} exited {code}: {err.strip()}")
        checks = ("evidence", "verify", str(path), *(("--recompute",) if extra else ()))
        code, _, err = wb(s.demo(), *checks)
        if code:  # the bundle as written rechecks: its digests follow from its content
            raise AssertionError(f"wb {' '.join(checks)} exited {code}: {err.strip()}")
        return resealed_bundle(json.loads(path.read_text(encoding="utf-8")))

    return run


def _real(kind: str, a: str, b: str, *extra: str, ok=(0,)) -> Callable[[Stores], Any]:
    def run(s: Stores) -> Any:
        url = s.real()
        return wb_json(url, kind, *_ids(s.imported[a]), "--vs", *_ids(s.imported[b]), *extra, ok=ok)

    return run


def _diagnose(*paths: str) -> Callable[[Stores], Any]:
    return lambda s: wb_json(s.demo(), "diagnose", *[str(DATA / "failures" / p) for p in paths])


# Rerun and bisection documents: what the machine and the clock put in them is masked.
RERUN_VOLATILE = frozenset({"started_at", "ended_at", "wall_s", "host", "digest"})


def _masked(value: Any, keys: frozenset[str] = RERUN_VOLATILE) -> Any:
    if isinstance(value, dict):
        return {k: ("<MASKED>" if k in keys and v is not None else _masked(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, keys) for v in value]
    return value


def _rerun(name: str, baseline: str, candidate: list[str], **top: Any) -> Callable[[Stores], Any]:
    """A plan over the deterministic fake bench (tests/rerun/helpers.py), run, then reported."""

    def run(s: Stores) -> Any:
        from tests.rerun.helpers import fake_bench, write_plan

        url = f"sqlite:///{s.tmp / f'rerun-{name}.sqlite'}"  # one store per case: run ids do not depend on the order
        bench = fake_bench(s.tmp)
        cand = [str(bench) if c == "BENCH" else c for c in candidate]
        plan = write_plan(s.tmp / f"{name}.toml", baseline=[str(bench), baseline], candidate=cand, name=name, **top)
        wb_json(url, "rerun", "plan", "--from-file", str(plan))
        wb_json(url, "rerun", "run", name, "--workdir", str(s.tmp / "rerun-work"))
        return _masked(wb_json(url, "rerun", "report", name))

    return run


def _rerun_plan(s: Stores) -> Any:
    """``wb rerun plan --json`` for a plan file with every kind of field (the machine's environment masked)."""
    from tests.rerun.helpers import fake_bench, write_plan

    url = f"sqlite:///{s.tmp / 'rerun-plan.sqlite'}"
    bench = fake_bench(s.tmp)
    plan = write_plan(
        s.tmp / "full.toml",
        baseline=[str(bench), "10"],
        candidate=[str(bench), "11"],
        artifacts=[str(bench)],
        name="full",
        rounds=4,
        stopping="sequential",
        spending="pocock",
        order="abba",
        description="golden plan",
        warmup={"runs": 1, "steps": "auto"},
        guardrails=[{"metric": "step_ms", "rule": "max", "limit": 50, "name": "cap"}],
    )
    return _masked(wb_json(url, "rerun", "plan", "--from-file", str(plan)), RERUN_VOLATILE | {"environment"})


def _bisect_list(s: Stores) -> Any:
    from tests.bisect.test_bisect import BENCH

    url = f"sqlite:///{s.tmp / 'bisect.sqlite'}"
    versions = s.tmp / "versions.txt"
    versions.write_text("1.0\n1.1\n1.2\n1.3\n")
    bench = s.tmp / "bisect-bench.sh"
    bench.write_text(BENCH.replace("F=$(cat speed.txt)", 'F=$(case "$1" in 1.0|1.1) echo 1.0;; *) echo 1.05;; esac)'))
    wb_json(
        url,
        "bisect",
        "start",
        "--candidates",
        str(versions),
        "--bench",
        f"sh {bench} {{version}}",
        "--name",
        "golden",
        "--max-rounds",
        "12",
        "--workdir",
        str(s.tmp / "bisect-work"),
    )
    return _masked(wb_json(url, "bisect", "report", "golden"))


CHANGE_ENGINE = ("--change", "engine_revision=v0.8.2:v0.8.3")
CHANGE_FRAMEWORK = ("--change", "framework=PyTorch 2.3.1:PyTorch 2.4.0-rc1")

# The two traces differ in hardware and rank count and say nothing of the model or batch.
ACCEPT_TRACE_DIFF = ("--accept", "model,objective,topology,effective_batch,hardware,rank_count", "--why", "golden test")

CASES: dict[str, Callable[[Stores], Any]] = {
    "demo_load": lambda s: (s.demo(), s.demo_load)[1],
    "demo_runs": lambda s: wb_json(s.demo(), "runs"),
    "demo_compare_inference": _demo_compare("compare", INF_A, INF_B, INF_A2, *CHANGE_ENGINE),
    "demo_compare_inference_no_control": _demo_compare("compare", INF_A, INF_B, None, *CHANGE_ENGINE),
    "demo_compare_training": _demo_compare("compare", TR_A, TR_B, TR_A2, *CHANGE_FRAMEWORK),
    "demo_compare_fleet": _demo_compare("compare", FL_A, FL_B, FL_A2),
    "demo_compare_refused": _demo_compare("compare", INF_A, [OTHER_GPU], None, *CHANGE_ENGINE),
    "demo_compare_accepted": _demo_compare(
        "compare", INF_A, [OTHER_GPU], None, *CHANGE_ENGINE, "--accept", "hardware", "--why", "golden test"
    ),
    "demo_inspect_inference": _demo_compare("inspect", INF_A, INF_B, INF_A2, *CHANGE_ENGINE),
    "demo_inspect_training": _demo_compare("inspect", TR_A, TR_B, TR_A2, *CHANGE_FRAMEWORK),
    "demo_inspect_fleet": _demo_compare("inspect", FL_A, FL_B, FL_A2),
    "demo_investigate_list": lambda s: wb_json(s.demo(), "investigate", "list"),
    "demo_investigate_show_1": lambda s: wb_json(s.demo(), "investigate", "show", "1"),
    "demo_investigate_show_2": lambda s: wb_json(s.demo(), "investigate", "show", "2"),
    "demo_investigate_show_3": lambda s: wb_json(s.demo(), "investigate", "show", "3"),
    "demo_bundle_1": _bundle(1),
    "demo_bundle_2_samples": _bundle(2, "--embed-samples"),
    "demo_bundle_3": _bundle(3),
    "real_compare_inference_perf": _real("compare", "vllm", "vllm_v0", ok=(0,)),
    "real_inspect_inference_perf": _real("inspect", "vllm", "vllm_v0", ok=(0, 3)),
    "real_compare_trace_diff_refused": _real(
        "compare", "trace_control", "trace_test", "--accept", "hardware,rank_count", "--why", "golden test"
    ),
    "real_compare_trace_diff": _real("compare", "trace_control", "trace_test", *ACCEPT_TRACE_DIFF),
    "real_inspect_trace_diff": _real("inspect", "trace_control", "trace_test", *ACCEPT_TRACE_DIFF),
    "diagnose_xid79": _diagnose("incident-xid79"),
    "diagnose_tie": _diagnose("incident-tie"),
    "diagnose_cuda_oom": _diagnose("incident-cuda-oom"),
    "diagnose_nvrx_gpu_error": _diagnose("nvrx-fr_traces/gpu_error_1st"),
    "diagnose_nvrx_lock_gil": _diagnose("nvrx-fr_traces/lock_gil_1st"),
    "diagnose_gpud": _diagnose("gpud"),
    "rerun_report_fixed": _rerun(
        "fixed", "10", ["BENCH", "11"], guardrails=[{"metric": "step_ms", "rule": "max_increase_pct", "limit": 5.0}]
    ),
    "rerun_report_sequential": _rerun("seq", "10", ["BENCH", "10.4"], rounds=8, stopping="sequential"),
    "rerun_report_failing": _rerun("failing", "10", ["sh", "-c", "echo boom >&2; exit 3"]),
    "bisect_report_list": _bisect_list,
    "rerun_plan_full": _rerun_plan,
}


def resealed_bundle(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle as written must verify; then its volatile fields are normalised and its
    digests and checksum recomputed over what remains."""
    from workbench.bundle.export import reseal_digests
    from workbench.bundle.verify import verify_bundle

    report = verify_bundle(bundle)
    if not report.ok:
        raise AssertionError(f"the exported bundle does not verify: {report}")
    sealed = reseal_digests(normalise(bundle))
    if isinstance(sealed.get("samples"), dict):  # kept by its digest: columns are big, the digest proves them
        sealed["samples"] = {**sealed["samples"], "content": "<SEE DIGEST>"}
    return sealed


def normalise(value: Any, key: str | None = None) -> Any:
    """``value`` with session stamps, temporary/repository paths and the version replaced."""
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, str):
        if key in TIME_KEYS:
            return "<TIME>"
        if key in VERSION_KEYS and value == _version():
            return "<VERSION>"
        return _paths(value)
    return value


_SUBSTITUTIONS: list[tuple[str, str]] = []


def set_paths(tmp: Path) -> None:
    """Where this session's temporary files are (replaced by ``<TMP>``), before ``<REPO>``."""
    _SUBSTITUTIONS[:] = [(str(tmp), "<TMP>"), (str(REPO), "<REPO>")]


def _paths(text: str) -> str:
    for real, placeholder in _SUBSTITUTIONS:
        text = text.replace(real, placeholder)
    return text


def _version() -> str:
    from workbench import __version__

    return __version__


def render(document: Any) -> str:
    """The golden file's text: the normalised document, stable layout."""
    return json.dumps(normalise(document), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def produce(stores: Stores, name: str) -> str:
    set_paths(stores.tmp)
    os.environ.pop("WB_LENS_EXTENSIONS", None)  # a user's extensions would add metrics
    return render(CASES[name](stores))
