"""Whether a trace recorded the kernels its launch calls ran (``kernel_coverage``).

A CUDA-graph replay is one ``cudaGraphLaunch`` call; unless graph-level tracing was on,
CUPTI records none of the kernels it ran, and the GPU looks idle while it was busy. The
same holds for any launch call whose kernel is missing. Every measure built on GPU idle
time is then wrong in a known direction: idle is overstated, compute understated, and an
idle gap ended by the next recorded kernel reads as the host submitting late. So when
launch calls in the kept steps have no kernel in the trace, the breakdown is said to be
incomplete and the findings that read idle time (host submission, input stall) are
withheld (``undecided``). A cut-off last step is the window policy's business (it is
excluded before this check).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.training.step_findings import Figures, Finding, _finding
from workbench.training.rank_summary import RankSummary

CHECK = "kernel_coverage"
WITHHELD = ("host_submission", "input_stall")  # the findings that read GPU idle time


def kernel_coverage(ranks: Sequence[RankSummary], kept: Sequence[float]) -> Finding:
    """Launch calls in the kept steps with no kernel in the trace, on any rank."""
    totals = {k: sum(r.launches.get(k, 0.0) for r in ranks) for k in ("launches", "graph_launches", "kernels")}
    if totals["launches"] == 0:
        return _finding(CHECK, "undecided", "no kernel launch calls in the trace: kernel coverage cannot be checked")
    in_kept = 0
    for r in ranks:
        sel = np.isin(r.windows.numbers, list(kept)) if kept else np.ones(len(r.unmatched), dtype=bool)
        in_kept += int(r.unmatched[sel].sum())
    evidence: Figures = {
        "launch_calls": int(totals["launches"]),
        "graph_launches": int(totals["graph_launches"]),
        "kernels_recorded": int(totals["kernels"]),
        "launches_without_kernel": in_kept,
    }
    where = "in the kept steps" if kept else "in the trace"
    if in_kept == 0:
        return _finding(
            CHECK,
            "not_found",
            f"every kernel and graph launch call {where} has its kernel in the trace",
            evidence,
        )
    graphs = f", {int(totals['graph_launches'])} of all launches CUDA-graph replays" if totals["graph_launches"] else ""
    return _finding(
        CHECK,
        "found",
        f"the breakdown is incomplete: {in_kept} launch calls {where} have no kernel in the trace "
        f"({int(totals['launches'])} launch calls against {int(totals['kernels'])} recorded kernels{graphs}); "
        "idle time is overstated and compute understated, so host submission and input stall are withheld",
        evidence,
        "CUPTI records a CUDA graph's kernels only with graph tracing on (nsys --cuda-graph-trace=node; Kineto "
        "records the graph launch alone); profile with graphs off (enforce_eager) to see them",
    )


def withheld(finding: Finding, coverage: Finding) -> Finding:
    """``finding`` made undecided because ``coverage`` found kernels missing from the trace
    (one undecided already keeps its own reason)."""
    if finding.status == "undecided":
        return finding
    return _finding(
        finding.check,
        "undecided",
        "withheld: the trace under-records kernels (see kernel coverage), so the GPU's idle time is not known",
        {"launches_without_kernel": coverage.evidence.get("launches_without_kernel")},
        f"see {CHECK}",
    )
