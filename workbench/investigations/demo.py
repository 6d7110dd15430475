"""The three seed investigations for ``wb demo``: a finished example of every stage up to Share.

Each is framed (lens, decision question, guardrails, intended change), compared with
the compare engine on the demo runs (captures ``baseline-N`` against ``candidate-N``,
with the ``baseline-extra-N`` runs, the baseline again, as the A/A control),
has the engine's observations pinned, and one hypothesis with the test that would
decide it, left ``open``: a demo must not pretend a rerun happened.
Synthetic demonstrations, illustrative values, not measurements.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.investigations import workflow as wf

if TYPE_CHECKING:
    from store.api import Store

DEMO_BY = "wb demo"


class Demo(TypedDict):
    """A seed investigation: its frame, the change under test and the hypothesis to open."""

    lens: str
    title: str
    question: str
    guardrails: list[str]
    change: dict[str, list[str]]
    hypothesis: str
    test: str
    test_kind: str  # the kind of evidence the test is (workbench.bundle.decisive.DECIDED_BY)


DEMOS: list[Demo] = [
    {
        "lens": "inference",
        "title": "demo: engine upgrade v0.8.2 -> v0.8.3",
        "question": "Can we ship engine v0.8.3 without hurting time to first token (p95)?",
        "guardrails": ["error_rate max_increase 0"],
        "change": {"engine_revision": ["v0.8.2", "v0.8.3"]},
        "hypothesis": "The v0.8.3 scheduler keeps requests queued longer at the same load (admission, not model work).",
        "test": "Interleaved A/B/A′ reruns (10 rounds) at a fixed request rate, reading queue p95 per run; "
        "supported if queue time rises on B beyond the A/A noise floor while prefill and decode hold.",
        "test_kind": "rerun",
    },
    {
        "lens": "training",
        "title": "demo: framework upgrade PyTorch 2.3 -> 2.4-rc",
        "question": "Can we move training to PyTorch 2.4-rc without slowing the mean step time?",
        "guardrails": ["eval_loss within 0.02"],
        "change": {"framework": ["PyTorch 2.3.1", "PyTorch 2.4.0-rc1"]},
        "hypothesis": "A straggling rank makes the others wait in the collectives.",
        "test": "A controlled interleaved rerun with per-rank collective timings (NCCL flight recorder) and an "
        "A/A control; supported if one rank enters the collectives late on B and not on A.",
        "test_kind": "rerun",
    },
    {
        "lens": "fleet",
        "title": "demo: two observation windows of pool-h100-a",
        "question": "Did queue wait in pool-h100-a get worse between window A and window B, and is capacity the limit?",
        "guardrails": [],
        "change": {},
        "hypothesis": "Gang blocking: the idle GPUs were too few to start any waiting 16-GPU job.",
        "test": "Replay window B's queue with the recorded eligibility history; supported if no waiting job could "
        "start on the idle GPUs at any time in the window.",
        "test_kind": "comparison",
    },
]

_SIDE = re.compile(r"^(baseline|candidate|baseline-extra)-(\d+)\.json(\.gz)?$")


def demo_run_sets(store: "Store", lens: str) -> tuple[list[int], list[int], list[int]]:
    """The demo runs of ``lens``, by capture file name: ``baseline-N``, ``candidate-N``
    and the ``baseline-extra-N`` A′ runs (the baseline again: the A/A control)."""
    sides: dict[str, list[int]] = {"baseline": [], "candidate": [], "baseline-extra": []}
    for run in store.list_runs(lens=lens):
        for capture in store.run_captures(run.id):
            match = _SIDE.match(capture.name)
            if match:
                sides[match.group(1)].append(run.id)
                break
    return sorted(sides["baseline"]), sorted(sides["candidate"]), sorted(sides["baseline-extra"])


def create_demo_investigations(store: "Store", *, engine: Callable[..., Any] | None = None) -> list[int]:
    """Create the three seed investigations (idempotent: existing demo ones are kept).

    Returns the investigation ids, new or existing; a lens whose demo runs are not in
    the store is skipped.
    """
    existing = {inv.title: inv.id for inv in wf.investigation_summaries(store) if inv.created_by == DEMO_BY}
    ids = []
    for demo in DEMOS:
        if demo["title"] in existing:
            ids.append(existing[demo["title"]])
            continue
        baseline, candidate, control = demo_run_sets(store, demo["lens"])
        if not baseline or not candidate:
            continue
        inv = wf.new_investigation(
            store,
            lens=demo["lens"],
            question=demo["question"],
            title=demo["title"],
            guardrails=demo["guardrails"],
            intended_change=demo["change"],
            baseline=baseline,
            candidate=candidate,
            by=DEMO_BY,
        ).to_json()
        comp = wf.store_comparison(
            store, inv["id"], baseline, candidate, engine=engine, by=DEMO_BY, control=control
        ).to_json()
        if comp["result"].get("observations"):
            wf.observations_from_comparison(store, inv["id"], comp["id"], by=DEMO_BY)
        wf.new_hypothesis(
            store, inv["id"], demo["hypothesis"], demo["test"], by=DEMO_BY, test_kind=demo["test_kind"]
        ).to_json()
        ids.append(inv["id"])
    return ids
