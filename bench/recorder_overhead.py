"""Overhead of the flight recorder on a tight loop, side by side with the bare loop.

One run, interleaved rounds: the bare loop, the anchor (an empty timed context
manager), the loop with ``with rec.step():``, and the loop with a step and two phases.
Per-span and per-phase overhead are the differences of the per-iteration medians across
rounds. Times are the thread's CPU time (``time.thread_time_ns``), which a busy shared
machine inflates far less than wall time; wall-clock figures are printed beside them. Then peak memory at the byte budget, with
tracemalloc, over a run that would need ~10x the budget unbounded.

    .venv/bin/python bench/recorder_overhead.py [--steps 1000000] [--rounds 5]

Targets: under 2 us per span (issue 11) and at most 2x the anchor (issue 19); peak memory
within 10 % of the byte budget.

Then the host sampler (issue 36): a CPU-bound Python workload (steps of nested calls) in
interleaved rounds without a recorder, with a recorder whose host streams are off, and with
the defaults (stacks at 100 Hz, CPU and memory at 10 Hz, GC pauses); the sampler's cost is
the sampled rounds against the unsampled ones, in wall time (what the workload feels) and
in process CPU time (what the machine pays, the sampler thread included). Target: under 2 %.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc

from workbench.recorder import Budget, Recorder, TriggerRule


class Floor:
    """The anchor: the cheapest a Python span can be - one object per iteration whose
    __enter__/__exit__ read the clock, and nothing stored."""

    __slots__ = ("owner", "start", "end")

    def __init__(self, owner: object) -> None:
        self.owner = owner

    def __enter__(self) -> "Floor":
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: object) -> bool:
        self.end = time.perf_counter_ns()
        return False


def floor(n: int, rec: Recorder) -> None:
    x = 0
    for _ in range(n):
        with Floor(rec):
            x += 1


def bare(n: int, rec: Recorder) -> None:
    x = 0
    for _ in range(n):
        x += 1


def steps(n: int, rec: Recorder) -> None:
    x = 0
    step = rec.step
    for _ in range(n):
        with step():
            x += 1


def steps_and_phases(n: int, rec: Recorder) -> None:
    x = 0
    step, phase = rec.step, rec.phase
    for _ in range(n):
        with step():
            with phase("input"):
                x += 1
            with phase("compute"):
                x += 1


def recorder(out: str, max_bytes: int) -> Recorder:
    # The trigger (3x the recent median) is armed and evaluated on every span, so its
    # cost is part of the span's; its 1 s floor keeps a tight loop's jitter from firing
    # it (a snapshot writer would then share the GIL with the loop being timed).
    return Recorder(
        out_dir=out,
        gpu_interval_s=None,
        spans=Budget(max_bytes=max_bytes),
        trigger=TriggerRule(at_least_ms=1000.0),
    )


def timing(total_steps: int, rounds: int, out: str) -> dict[str, float]:
    per_round = total_steps // rounds
    rec = recorder(out, 16 << 20)
    results: dict[str, list[float]] = {"bare": [], "floor": [], "steps": [], "phases": []}
    walls: dict[str, list[float]] = {k: [] for k in results}
    for _ in range(rounds):
        for name, fn in (("bare", bare), ("floor", floor), ("steps", steps), ("phases", steps_and_phases)):
            gc.collect()
            began_cpu, began_wall = time.thread_time_ns(), time.perf_counter_ns()
            fn(per_round, rec)
            results[name].append((time.thread_time_ns() - began_cpu) / per_round)
            walls[name].append((time.perf_counter_ns() - began_wall) / per_round)
    stats = rec.stats()
    rec.close()
    med = {k: statistics.median(v) for k, v in results.items()}
    wall = {k: statistics.median(v) for k, v in walls.items()}
    return {
        "wall_per_span_ns": wall["steps"] - wall["bare"],
        "wall_floor_ns": wall["floor"] - wall["bare"],
        "bare_ns": med["bare"],
        "step_ns": med["steps"],
        "step_phases_ns": med["phases"],
        "floor_ns": med["floor"] - med["bare"],
        "per_span_ns": med["steps"] - med["bare"],
        "per_phase_ns": (med["phases"] - med["steps"]) / 2,
        "spread_span_ns": max(results["steps"]) - min(results["steps"]),
        "faults": stats["faults"],
        "incidents": stats["incidents"],
        "evicted_records": stats["spans"]["evicted_records"],
    }


def memory(total_steps: int, max_bytes: int, out: str) -> dict[str, float]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    rec = recorder(out, max_bytes)
    steps_and_phases(total_steps // 3, rec)  # 1 step + 2 phases = 3 rows per step
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stats = rec.stats()
    rec.close()
    rows = (total_steps // 3) * 3
    return {
        "budget_bytes": max_bytes,
        "unbounded_bytes": rows * 3 * 8,
        "peak_bytes": peak - before,
        "end_bytes": current - before,
        "retained_bytes": stats["spans"]["retained_bytes"],
        "evicted_records": stats["spans"]["evicted_records"],
    }


def _leaf(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def _nested(depth: int, n: int) -> int:
    """A CPU-bound step a few frames deep (a sampler walks every frame of every stack)."""
    return _leaf(n) if depth == 0 else _nested(depth - 1, n)


def cpu_workload(steps_n: int, rec: Recorder | None) -> None:
    for _ in range(steps_n):
        if rec is None:
            _nested(12, 20_000)
        else:
            with rec.step():
                _nested(12, 20_000)


def sampler_overhead(rounds: int, steps_n: int, out: str) -> dict[str, float]:
    """Rounds of the CPU-bound workload, unsampled and sampled back to back (the order
    alternating), and a bare round; the overhead is the median of the per-round ratios, so
    a shared machine's load drifting between rounds cancels within each pair."""
    unsampled = {"stack_hz": None, "host_interval_s": None, "gc_pauses": False}
    sampled: dict[str, object] = {}  # the defaults: stacks 100 Hz, CPU and memory 4 Hz, GC pauses
    wall_ratio, cpu_ratio, thread_ratio, bare_ratio, walls = [], [], [], [], []
    ticks = sampler_cpu = seconds = 0.0

    def one(fields: dict[str, object] | None) -> tuple[float, float, float, Recorder | None]:
        rec = None if fields is None else Recorder(out_dir=out, gpu_interval_s=None, trigger=None, **fields)
        time.sleep(0.05)  # the sampler thread is up and sleeping before the clock starts
        gc.collect()
        w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
        cpu_workload(steps_n, rec)
        return time.perf_counter() - w0, time.process_time() - c0, time.thread_time() - t0, rec

    for r in range(rounds):
        got = {}
        for name in (("unsampled", "sampled") if r % 2 else ("sampled", "unsampled")) + ("bare",):
            wall, cpu, thread, rec = one(None if name == "bare" else sampled if name == "sampled" else unsampled)
            got[name] = (wall, cpu, thread)
            if rec is not None:
                sampler = rec._host_sampler
                if sampler is not None:
                    ticks += sampler.ticks
                    sampler_cpu += sampler.cpu_s
                    seconds += wall
                rec.close()
        wall_ratio.append(got["sampled"][0] / got["unsampled"][0])
        cpu_ratio.append(got["sampled"][1] / got["unsampled"][1])
        thread_ratio.append(got["sampled"][2] / got["unsampled"][2])
        bare_ratio.append(got["unsampled"][0] / got["bare"][0])
        walls.append(got["sampled"][0])
    # The anchor: one bare sys._current_frames() and a walk of every frame, no interning,
    # from a thread whose stack is as deep as the workload's.
    n = 2000

    def anchor() -> float:
        t0 = time.thread_time_ns()
        for _ in range(n):
            for frame in sys._current_frames().values():
                while frame is not None:
                    frame = frame.f_back
        return (time.thread_time_ns() - t0) / n

    def deep(d: int) -> float:
        return anchor() if d == 0 else deep(d - 1)

    anchor_ns = deep(12)
    q = statistics.quantiles
    return {
        "sampled_s": statistics.median(walls), "rounds": rounds,
        "wall_overhead": statistics.median(wall_ratio) - 1, "wall_q": tuple(x - 1 for x in q(wall_ratio, n=4)),
        "cpu_overhead": statistics.median(cpu_ratio) - 1, "cpu_q": tuple(x - 1 for x in q(cpu_ratio, n=4)),
        "thread_overhead": statistics.median(thread_ratio) - 1, "thread_q": tuple(x - 1 for x in q(thread_ratio, n=4)),
        "recorder_vs_bare": statistics.median(bare_ratio) - 1,
        "achieved_hz": ticks / seconds if seconds else float("nan"),
        "sampler_share": sampler_cpu / seconds if seconds else float("nan"),
        "tick_us": 1e6 * sampler_cpu / ticks if ticks else float("nan"),
        "anchor_us": anchor_ns / 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget-mib", type=float, default=4.0)
    parser.add_argument("--sampler-rounds", type=int, default=15, help="rounds of the CPU-bound workload per variant")
    parser.add_argument("--sampler-steps", type=int, default=80, help="steps of the CPU-bound workload per round")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        t = timing(args.steps, args.rounds, out)
        m = memory(args.steps, int(args.budget_mib * (1 << 20)), out)
        h = sampler_overhead(args.sampler_rounds, args.sampler_steps, out)
    print(f"recorder overhead, {args.steps:,} steps per variant in {args.rounds} interleaved rounds "
          f"(medians of thread CPU time); load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"(1 min, {os.cpu_count()} CPUs, a machine shared by several engineers)")
    print(f"  bare loop            {t['bare_ns']:8.0f} ns/iteration")
    print(f"  with rec.step()      {t['step_ns']:8.0f} ns/iteration  (round spread {t['spread_span_ns']:.0f} ns)")
    print(f"  step + 2 phases      {t['step_phases_ns']:8.0f} ns/iteration")
    print(f"  overhead per span    {t['per_span_ns']:8.0f} ns   target < 2000 ns -> "
          f"{'met' if t['per_span_ns'] < 2000 else 'MISSED'}")
    print(f"  overhead per phase   {t['per_phase_ns']:8.0f} ns")
    print(f"  anchor: an empty timed context manager costs {t['floor_ns']:.0f} ns; the recorder's span "
          f"is {t['per_span_ns'] / t['floor_ns']:.2f}x that (target <= 2x), a phase {t['per_phase_ns'] / t['floor_ns']:.2f}x")
    print(f"  wall clock (inflated when the machine is shared): span {t['wall_per_span_ns']:.0f} ns, "
          f"anchor {t['wall_floor_ns']:.0f} ns")
    print(f"  host sampler (stacks 100 Hz, CPU/memory 4 Hz, GC) on a CPU-bound workload ({h['sampled_s']:.2f} s a round), "
          f"{h['rounds']} rounds of sampled and unsampled back to back")
    print(f"  sampler overhead     wall {100 * h['wall_overhead']:+.2f} % (quartiles {100 * h['wall_q'][0]:+.1f} to "
          f"{100 * h['wall_q'][2]:+.1f} %), process CPU {100 * h['cpu_overhead']:+.2f} % (quartiles "
          f"{100 * h['cpu_q'][0]:+.1f} to {100 * h['cpu_q'][2]:+.1f} %)  target < 2 % -> "
          f"{'met' if max(h['wall_overhead'], h['cpu_overhead']) < 0.02 else 'MISSED'}")
    print(f"  workload thread CPU  {100 * h['thread_overhead']:+.2f} % (quartiles {100 * h['thread_q'][0]:+.1f} to "
          f"{100 * h['thread_q'][2]:+.1f} %): the GIL handoffs the sampler costs the workload's own thread; "
          f"with the sampler thread's share below, the sampler's cost is about "
          f"{100 * (h['thread_overhead'] + h['sampler_share']):.2f} % of the workload's CPU")
    print(f"  sampler thread       {100 * h['sampler_share']:.2f} % of one core, {h['tick_us']:.1f} us per tick at "
          f"{h['achieved_hz']:.0f} Hz achieved; anchor: a bare sys._current_frames() and frame walk costs "
          f"{h['anchor_us']:.1f} us ({h['tick_us'] / h['anchor_us']:.1f}x); an unsampled recorder vs the bare loop "
          f"{100 * h['recorder_vs_bare']:+.2f} %")
    print(f"  recorder faults {t['faults']}, incidents {t['incidents']}, records evicted {t['evicted_records']:,}")
    ratio = m["peak_bytes"] / m["budget_bytes"]
    print(f"memory at the budget ({args.steps:,} rows; unbounded they would take "
          f"{m['unbounded_bytes'] / 2**20:.1f} MiB)")
    print(f"  span budget          {m['budget_bytes'] / 2**20:8.2f} MiB")
    print(f"  peak (tracemalloc)   {m['peak_bytes'] / 2**20:8.2f} MiB  = {ratio:.3f} x budget -> "
          f"{'within 10 %' if abs(ratio - 1) <= 0.10 else 'OUTSIDE 10 %'}")
    print(f"  at end               {m['end_bytes'] / 2**20:8.2f} MiB  (ring accounts "
          f"{m['retained_bytes'] / 2**20:.2f} MiB; {m['evicted_records']:,} rows evicted)")


if __name__ == "__main__":
    main()
