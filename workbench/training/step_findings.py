"""Training findings from the per-step, per-rank samples: each says what is known and what is not.

Every finding is an observation about where time went, never a cause: a data-loader
wait that coincides with GPU idle time shows the GPU waited, not why the loader was
slow. Each finding has a ``status``: ``found``, ``not_found`` or ``undecided`` (the
trace cannot say), a one-line ``summary``, its ``evidence`` figures and a ``caveat``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from workbench.numbers import percent
from workbench.training import ranks as rk
from workbench.vocabulary import FindingStatus, NonFinite, Record

OBSERVATION = "observation, not cause"
# A share of step time below which a phase is not worth a finding.
SHARE_THRESHOLD = 0.05


# A finding's figures, by name (which names depends on the check); NaN: unknown.
Figures = dict[str, float | int | None]


class Finding(Record, frozen=True, kw_only=True, omit_defaults=True):
    """One check's result; ``to_json()`` is its entry in a training run's
    ``meta["diagnostics"]``, key for key (figures as they are: the store's JSON writer encodes them)."""

    json_nonfinite: ClassVar[NonFinite] = "keep"

    check: str
    status: FindingStatus
    summary: str
    evidence: Figures
    caveat: str
    hypothesis: str = ""  # what to test before calling the observation a cause (absent: none)


def _finding(
    check: str,
    status: FindingStatus,
    summary: str,
    evidence: Figures | None = None,
    caveat: str = "",
    hypothesis: str = "",
) -> Finding:
    return Finding(
        check=check, status=status, summary=summary, evidence=evidence or {}, caveat=caveat, hypothesis=hypothesis
    )


def _steps_text(steps: list[float], limit: int = 8) -> str:
    shown = ", ".join(str(int(s)) if float(s).is_integer() else str(s) for s in steps[:limit])
    return shown + (f" and {len(steps) - limit} more" if len(steps) > limit else "")


def _share(part: np.ndarray, whole: np.ndarray) -> float:
    ok = ~np.isnan(part) & ~np.isnan(whole)
    total = float(whole[ok].sum())
    return float(part[ok].sum()) / total if total > 0 else float("nan")


def _per(samples: dict[str, np.ndarray]) -> tuple[str, str]:
    """How a mean reads: per step, or over the whole trace when it has no steps (one
    window, step NaN): a whole-trace total is never called a step's."""
    if len(samples["step"]) and bool(np.all(np.isnan(samples["step"]))):
        return "over the whole trace (no steps)", "of the trace's time"
    return "per step", "of step time"


def _of_worst_rank(samples: dict[str, np.ndarray], rank: int | None) -> str:
    """ "; worst rank N" where there are ranks to tell apart, else nothing."""
    ranks = np.unique(samples["rank"][~np.isnan(samples["rank"])])
    return f"; worst rank {rank}" if rank is not None and len(ranks) > 1 else ""


def _worst_rank(samples: dict[str, np.ndarray], column: str) -> tuple[int | None, float]:
    ranks = samples["rank"]
    values = samples[column]
    best: tuple[int | None, float] = (None, float("nan"))
    for r in np.unique(ranks[~np.isnan(ranks)]):
        mean = float(np.nanmean(values[ranks == r])) if np.any(~np.isnan(values[ranks == r])) else float("nan")
        if best[0] is None or (not np.isnan(mean) and (np.isnan(best[1]) or mean > best[1])):
            best = (int(r), mean)
    return best


def input_stall(samples: dict[str, np.ndarray]) -> Finding:
    x = samples["input_ms"]
    if len(x) == 0 or np.all(np.isnan(x)):
        return _finding(
            "input_stall",
            "undecided",
            "no data-loader annotations in the trace: input stall cannot be measured",
            caveat="PyTorch marks the wait as enumerate(DataLoader)#...__next__; without it, input time is unknown, "
            "not zero",
        )
    share = _share(x, samples["step_ms"])
    rank, mean = _worst_rank(samples, "input_ms")
    evidence: Figures = {
        "input_ms_mean": float(np.nanmean(x)),
        "share_of_step": share,
        "worst_rank": rank,
        "worst_rank_input_ms_mean": mean,
        "host_wait_ms_mean": float(np.nanmean(samples["input_wait_ms"])),
    }
    status = "found" if share >= SHARE_THRESHOLD else "not_found"
    per, of = _per(samples)
    return _finding(
        "input_stall",
        status,
        f"GPU idle while the host waited on the data loader: {evidence['input_ms_mean']:.2f} ms {per} "
        f"({percent(share, 1)} {of}{_of_worst_rank(samples, rank)}) ({OBSERVATION})",
        evidence,
        "exposed wait only: loader time hidden behind GPU work is in input_wait_ms, not here",
    )


def host_submission(samples: dict[str, np.ndarray]) -> Finding:
    x = samples["host_submission_ms"]
    unresolved = samples["idle_unresolved_ms"]
    idle = samples["idle_ms"]
    if len(x) == 0 or np.all(np.isnan(x)):
        return _finding(
            "host_submission",
            "undecided",
            "no host runtime events (or no GPU activity): idle gaps cannot be matched to their launches",
            caveat="matching needs correlation ids on both the kernel and its launch call",
        )
    share = _share(x, samples["step_ms"])
    evidence: Figures = {
        "host_submission_ms_mean": float(np.nanmean(x)),
        "share_of_step": share,
        "idle_ms_mean": float(np.nanmean(idle)),
        "unresolved_idle_ms_mean": float(np.nanmean(unresolved)),
    }
    status = "found" if share >= SHARE_THRESHOLD else "not_found"
    per, of = _per(samples)
    return _finding(
        "host_submission",
        status,
        f"GPU idle until a late launch call: {evidence['host_submission_ms_mean']:.2f} ms {per} "
        f"({percent(share, 1)} {of}; {evidence['unresolved_idle_ms_mean']:.2f} ms of idle "
        f"{'per step' if per == 'per step' else 'in it'} left unresolved) ({OBSERVATION})",
        evidence,
        "a gap counts when the launching runtime call began after the GPU went idle; gaps whose kernel "
        "has no matching launch (no correlation id, or the call is not in the trace) are unresolved, not guessed",
    )


def exposed_communication(samples: dict[str, np.ndarray]) -> Finding:
    exposed = samples["communication_ms"]
    overlapped = samples["communication_overlapped_ms"]
    if len(exposed) == 0 or np.all(np.isnan(exposed)):
        return _finding("exposed_communication", "undecided", "no GPU activity in the trace: communication is unknown")
    share = _share(exposed, samples["step_ms"])
    total = np.nansum(exposed) + np.nansum(overlapped)
    hidden = float(np.nansum(overlapped) / total) if total > 0 else float("nan")
    evidence: Figures = {
        "communication_ms_mean": float(np.nanmean(exposed)),
        "overlapped_ms_mean": float(np.nanmean(overlapped)),
        "share_of_step": share,
        "share_of_communication_hidden": hidden,
    }
    status = "found" if share >= SHARE_THRESHOLD else "not_found"
    hidden_text = (
        "no communication kernels" if total == 0 else f"{percent(hidden, 1)} of communication overlapped with compute"
    )
    per, of = _per(samples)
    return _finding(
        "exposed_communication",
        status,
        f"exposed communication {evidence['communication_ms_mean']:.2f} ms {per} ({percent(share, 1)} {of}; "
        f"{hidden_text}) ({OBSERVATION})",
        evidence,
        "exposed = a collective kernel running with no compute kernel alongside; time a collective spends waiting "
        "for a late peer is exposed communication here",
    )


def straggler(
    samples: dict[str, np.ndarray], collectives: dict[tuple[float, float], int], clock_aligned: bool
) -> tuple[Finding, dict[str, np.ndarray]]:
    """The rank the others wait for, per step, from exposed communication (clock-free) and start skew.

    In a synchronous job every rank's collective waits for the last rank to arrive, so
    the straggler is the rank with the least exposed communication and the others show
    the difference as extra waiting. That comparison needs the same collectives on
    every rank (``collectives``: (step, rank) -> collective kernel count); otherwise the
    step is undecided. Start skew compares host clocks, which are not aligned across
    hosts unless the trace says so.
    """
    ranks = np.unique(samples["rank"][~np.isnan(samples["rank"])])
    steps = np.unique(samples["step"][~np.isnan(samples["step"])])
    empty = {k: np.zeros(0) for k in ("step", "start_skew_ms", "comm_spread_ms", "straggler_rank")}
    clock_caveat = "step start skew compares host clocks" + (
        "" if clock_aligned else ", which are not aligned across hosts unless the trace says so (this one does not)"
    )
    if len(ranks) < 2 or len(steps) == 0:
        return _finding(
            "straggler",
            "undecided",
            "fewer than two ranks (or no steps) in the job: stragglers cannot be compared",
            caveat=clock_caveat,
        ), empty
    rows: dict[str, list[float]] = {k: [] for k in empty}
    votes: dict[int, int] = {}
    decided = 0
    for step in steps:
        sel = samples["step"] == step
        r = samples["rank"][sel]
        if len(np.unique(r)) < 2:
            continue
        comm = samples["communication_ms"][sel]
        start = samples["step_start_ms"][sel]
        counts = {collectives.get((float(step), float(x)), 0) for x in r}
        same_ops = len(counts) == 1 and counts != {0} and not np.any(np.isnan(comm))
        rows["step"].append(float(step))
        rows["start_skew_ms"].append(float(np.nanmax(start) - np.nanmin(start)))
        if same_ops:
            decided += 1
            spread = float(comm.max() - comm.min())
            who = int(r[int(np.argmin(comm))])
            rows["comm_spread_ms"].append(spread)
            rows["straggler_rank"].append(float(who))
            votes[who] = votes.get(who, 0) + 1
        else:
            rows["comm_spread_ms"].append(float("nan"))
            rows["straggler_rank"].append(float("nan"))
    table = {k: np.array(v, dtype=np.float64) for k, v in rows.items()}
    if decided == 0:
        return _finding(
            "straggler",
            "undecided",
            "no step has the same collectives on every rank: the rank others wait for cannot be told",
            {
                "start_skew_ms_median": float(np.nanmedian(table["start_skew_ms"]))
                if len(table["step"])
                else float("nan")
            },
            "matching needs the same collective operations per step on each rank; " + clock_caveat,
        ), table
    spread = table["comm_spread_ms"]
    median_spread = float(np.nanmedian(spread))
    median_step = float(np.nanmedian(samples["step_ms"]))
    leader, n_votes = max(votes.items(), key=lambda kv: (kv[1], -kv[0]))
    evidence: Figures = {
        "straggler_rank": leader,
        "steps_as_straggler": n_votes,
        "steps_compared": decided,
        "comm_spread_ms_median": median_spread,
        "start_skew_ms_median": float(np.nanmedian(table["start_skew_ms"])),
    }
    significant = median_spread >= max(1.0, SHARE_THRESHOLD * median_step) and n_votes * 2 > decided
    hypothesis = ""
    if significant:
        led = [float(s) for s, who in zip(table["step"], table["straggler_rank"]) if who == leader]
        summary = (
            f"rank {leader} is the one the others wait for in {n_votes} of {decided} steps (steps {_steps_text(led)}): "
            f"the "
            f"other ranks spend a median {median_spread:.2f} ms more in exposed communication ({OBSERVATION})"
        )
        status = "found"
        hypothesis = STRAGGLER_HYPOTHESIS.format(rank=leader)
    else:
        summary = (
            f"no consistent straggler: exposed communication differs by a median {median_spread:.2f} ms across "
            f"ranks ({OBSERVATION})"
        )
        status = "not_found"
    return _finding("straggler", status, summary, evidence, clock_caveat, hypothesis), table


STRAGGLER_HYPOTHESIS = (
    "rank {rank}'s own work is slower (its GPU, node, input or share of the model): rerun with rank {rank} "
    "placed on another node; if the wait follows the node, suspect the node; if it stays with rank {rank}, "
    "suspect its share of the work"
)


def slowest_rank(samples: dict[str, np.ndarray]) -> Finding:
    """The rank whose step is longest in most steps, by how much over the median rank."""
    slow = rk.slowest_rank(samples)
    if slow is None:
        return _finding(
            "slowest_rank", "undecided", "fewer than two ranks timed in any step: the slowest rank cannot be told"
        )
    evidence: Figures = {
        "slowest_rank": slow.rank,
        "steps_slowest": slow.steps_slowest,
        "steps_compared": slow.steps_compared,
        "margin_ms_median": slow.margin_ms_median,
        "step_ms_median": slow.median_step_ms,
    }
    caveat = (
        "step time per rank on each rank's own clock; in a synchronous job the ranks that wait finish with the "
        "slowest one, so a straggler shows more in exposed communication (straggler) than in step time"
    )
    margin_share = slow.margin_ms_median / slow.median_step_ms if slow.median_step_ms > 0 else float("nan")
    if slow.steps_slowest * 2 > slow.steps_compared and margin_share >= SHARE_THRESHOLD:
        return _finding(
            "slowest_rank",
            "found",
            f"rank {slow.rank} has the longest step in {slow.steps_slowest} of {slow.steps_compared} steps (steps "
            f"{_steps_text(list(slow.steps))}), a median {slow.margin_ms_median:.2f} ms ({percent(margin_share, 1)}) "
            f"over the median rank ({OBSERVATION})",
            evidence,
            caveat,
            STRAGGLER_HYPOTHESIS.format(rank=slow.rank),
        )
    return _finding(
        "slowest_rank",
        "not_found",
        f"no rank is consistently slowest: the most often slowest, rank {slow.rank}, is slowest in "
        f"{slow.steps_slowest} of {slow.steps_compared} steps by a median {slow.margin_ms_median:.2f} ms "
        f"({OBSERVATION})",
        evidence,
        caveat,
    )


def run_all(
    samples: dict[str, np.ndarray], collectives: dict[tuple[float, float], int], clock_aligned: bool = False
) -> tuple[list[Finding], dict[str, np.ndarray]]:
    findings = [input_stall(samples), host_submission(samples), exposed_communication(samples)]
    strag, table = straggler(samples, collectives, clock_aligned)
    findings.append(strag)
    if len(np.unique(samples["rank"][~np.isnan(samples["rank"])])) > 1:  # a rank dimension only where there are ranks
        findings.append(slowest_rank(samples))
    return findings, table
