"""Overhead of the flight recorder on a tight loop, side by side with the bare loop.

One run, interleaved rounds: the bare loop, the anchor (an empty timed context
manager), the loop with ``with rec.step():``, and the loop with a step and two phases.
Per-span and per-phase overhead are the differences of the per-iteration medians across
rounds. Times are the thread's CPU time (``time.thread_time_ns``), which a busy shared
machine inflates far less than wall time; wall-clock figures are printed beside them. Then peak memory at the byte
budget, with
tracemalloc, over a run that would need ~10x the budget unbounded.

    .venv/bin/python bench/recorder_overhead.py [--steps 1000000] [--rounds 5]

Targets: under 2 us per span (issue 11) and at most 2x the anchor (issue 19); peak memory
within 10 % of the byte budget.

Then the host sampler (issue 36), on a CPU-bound Python workload (steps of nested calls), in
paired runs: a recorder whose host streams are off against, back to back and in alternating
order (AB, BA, ...), a recorder with the defaults (stacks at 100 Hz, CPU and memory at 4 Hz,
GC pauses), the same unsampled recorder plus the sampler's anchor (a thread that wakes at
100 Hz and does nothing: the GIL handoffs any in-process sampler thread pays), for
comparison only the same tick driven by SIGALRM on the main thread (no handoff; not what the
recorder does), and no recorder. The cost is the median of the paired ratios, with the 95 %
bootstrap interval of that median, in wall time (what the workload feels), process CPU time
(what the machine pays, the sampler thread included) and the workload thread's CPU time; and,
measured directly, the sampler thread's own CPU time over the workload (its thread CPU clock)
as a share of the workload's wall time. Target: under 2 %. The achieved rate is the sampler's
ticks during the workload over its wall time.

    .venv/bin/python bench/recorder_overhead.py [--sampler-pairs 30] [--sampler-steps 200]

Then the hang watchdog (issue 46): it adds nothing to the span hot path (the span it watches
is the one ``rec.phase()`` already needed, stored in a slot instead of its number), and its
thread wakes every quarter of the hang threshold (at most once a second). On the same
CPU-bound workload, paired runs of a recorder without the watchdog against one with it at a
stress setting (a 0.08 s threshold: a check every 20 ms, 50 times its default rate); the
watchdog thread's own CPU over the workload (its thread CPU clock) is the direct measure,
against the host sampler's budget (2 %).

    .venv/bin/python bench/recorder_overhead.py [--watchdog-pairs 20]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc

from workbench.recorder import Budget, Recorder, TriggerRule
from workbench.recorder.host import StackTables


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


class Handoff:
    """The sampler's anchor: a thread that wakes on the same deadline grid as the sampler
    and does nothing. Behind a CPU-bound thread every wake-up is a GIL handoff (the workload
    is made to drop the GIL and take it back); that is the floor of any in-process sampler
    thread at that rate, whatever it does once it holds the GIL."""

    def __init__(self, hz: float) -> None:
        self.period = 1.0 / hz
        self.ticks = 0
        self.cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="handoff-anchor", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        c0 = time.thread_time()
        deadline = time.monotonic()
        while not self._stop.is_set():
            self.ticks += 1
            deadline += self.period
            time.sleep(max(0.0, deadline - time.monotonic()))
        self.cpu_s = time.thread_time() - c0

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


class SignalTicks:
    """Not the recorder: what a tick driven by a timer signal would cost instead of a thread's
    (the same interning, on the main thread at its next bytecode boundary, no GIL handoff).
    Measured so the thread sampler's cost has a point of comparison; the recorder does not
    use signals (they would take SIGALRM from the workload and interrupt its system calls)."""

    def __init__(self, hz: float) -> None:
        self.tables = StackTables(max_frames=4096, max_stacks=2048, max_depth=48)
        self.rows: list[tuple[float, int, int]] = []
        self.ticks = 0
        self.cpu_s = 0.0
        self._old = signal.signal(signal.SIGALRM, self._tick)
        signal.setitimer(signal.ITIMER_REAL, 1.0 / hz, 1.0 / hz)

    def _tick(self, signum: int, frame: object) -> None:
        t0 = time.thread_time()
        me = threading.get_ident()
        now = time.perf_counter_ns()
        for ident, top in sys._current_frames().items():
            self.rows.append((now, ident, self.tables.stack_of(frame if ident == me else top)))
        del self.rows[:-4096]
        self.ticks += 1
        self.cpu_s += time.thread_time() - t0

    def close(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, self._old)


def _thread_cpu(thread: threading.Thread | None) -> float:
    """Another thread's CPU seconds, read from its own CPU clock (Linux; 0 where absent)."""
    if thread is None or thread.ident is None or not hasattr(time, "pthread_getcpuclockid"):
        return 0.0
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    except OSError:  # the thread has ended
        return 0.0


def _median_interval(values: list[float], draws: int = 2000) -> tuple[float, float]:
    """The 95 % bootstrap interval of the median (seeded: the same data, the same interval)."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(draws))
    return medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]


def sampler_overhead(pairs: int, steps_n: int, out: str) -> dict[str, float]:
    """Paired runs of the CPU-bound workload: a recorder whose host streams are off
    ("unsampled", A) against each variant (B): the defaults ("sampled"), the unsampled
    recorder plus the handoff anchor, the signal-driven tick, and no recorder at all. A and
    B run back to back, the order flipped every pair (AB, BA, AB...), so the load drifting
    on a shared machine and whichever-runs-second effects cancel within a pair rather than
    across a round. Each figure is the median of the paired ratios, with the bootstrap 95 %
    interval of that median and the quartiles. Beside it, the direct measure: the sampler
    thread's own CPU time over the workload window (read from that thread's CPU clock), a
    share of the workload's wall time."""
    unsampled = {"stack_hz": None, "host_interval_s": None, "gc_pauses": False}
    sampled: dict[str, object] = {}  # the defaults: stacks 100 Hz, CPU and memory 4 Hz, GC pauses
    hz = 100.0  # RecorderConfig's default stack_hz
    variants = ("sampled", "handoff", "signal", "bare")
    ratios: dict[str, list[float]] = {f"{v}_{m}": [] for v in variants for m in ("wall", "cpu", "thread")}
    walls: list[float] = []
    shares: list[float] = []  # the sampler thread's CPU over the workload's wall time, per sampled run
    anchor_shares: list[float] = []
    ticks = window_ticks = window_s = window_cpu = 0.0
    anchor_ticks = anchor_cpu = signal_ticks = signal_all_ticks = signal_cpu = signal_s = 0.0

    def one(name: str) -> tuple[float, float, float]:
        nonlocal ticks, window_ticks, window_s, window_cpu, anchor_ticks, anchor_cpu
        nonlocal signal_ticks, signal_all_ticks, signal_cpu, signal_s
        fields = None if name == "bare" else sampled if name == "sampled" else unsampled
        rec = None if fields is None else Recorder(out_dir=out, gpu_interval_s=None, trigger=None, **fields)
        anchor = Handoff(hz) if name == "handoff" else None
        ticker = SignalTicks(hz) if name == "signal" else None
        time.sleep(0.05)  # the sampler thread is up and sleeping before the clock starts
        gc.collect()
        sampler = rec._host_sampler if rec is not None else None
        helper = sampler._thread if sampler is not None else anchor._thread if anchor is not None else None
        k0 = sampler.ticks if sampler is not None else 0
        s0 = ticker.ticks if ticker is not None else 0
        h0 = _thread_cpu(helper)
        w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
        cpu_workload(steps_n, rec)
        got = time.perf_counter() - w0, time.process_time() - c0, time.thread_time() - t0
        helper_cpu = _thread_cpu(helper) - h0
        if sampler is not None and name == "sampled":
            window_ticks += sampler.ticks - k0
            window_s += got[0]
            window_cpu += helper_cpu
            shares.append(helper_cpu / got[0])
        if ticker is not None:
            ticker.close()
            signal_ticks += ticker.ticks - s0  # over the workload, as the sampler's achieved rate
            signal_cpu += ticker.cpu_s
            signal_all_ticks += ticker.ticks
            signal_s += got[0]
        if anchor is not None:
            anchor_shares.append(helper_cpu / got[0])
            anchor.close()
            anchor_ticks += anchor.ticks
            anchor_cpu += anchor.cpu_s
        if rec is not None:
            rec.close()
        return got

    for i in range(pairs):
        for v in variants:
            first, second = ("unsampled", v) if i % 2 == 0 else (v, "unsampled")
            got = {first: one(first)}
            got[second] = one(second)
            base = got["unsampled"]
            for j, m in enumerate(("wall", "cpu", "thread")):
                # "bare" is the other way round: what the unsampled recorder costs over no recorder.
                ratios[f"{v}_{m}"].append(base[j] / got[v][j] if v == "bare" else got[v][j] / base[j])
            if v == "sampled":
                walls.append(got["sampled"][0])
    q = statistics.quantiles
    out_: dict[str, float] = {"sampled_s": statistics.median(walls), "pairs": pairs}
    for key, values in ratios.items():
        out_[key] = statistics.median(values) - 1
        out_[key + "_q"] = tuple(x - 1 for x in q(values, n=4))  # type: ignore[assignment]
        out_[key + "_ci"] = tuple(x - 1 for x in _median_interval(values))  # type: ignore[assignment]
    out_.update(
        {
            "achieved_hz": window_ticks / window_s if window_s else float("nan"),
            "sampler_share": statistics.median(shares) if shares else float("nan"),
            "sampler_share_q": tuple(q(shares, n=4)) if len(shares) > 1 else (float("nan"),) * 3,  # type: ignore[dict-item]
            "anchor_share": statistics.median(anchor_shares) if anchor_shares else float("nan"),
            "tick_us": 1e6 * window_cpu / window_ticks if window_ticks else float("nan"),
            "anchor_tick_us": 1e6 * anchor_cpu / anchor_ticks if anchor_ticks else float("nan"),
            "signal_tick_us": 1e6 * signal_cpu / signal_all_ticks if signal_all_ticks else float("nan"),
            "signal_hz": signal_ticks / signal_s if signal_s else float("nan"),
        }
    )
    return out_


def watchdog_overhead(pairs: int, steps_n: int, out: str) -> dict[str, float]:
    """Paired runs (order flipped every pair): no watchdog (A) against the watchdog checking
    every 20 ms (B); the medians of the paired ratios and the watchdog thread's CPU share."""
    quiet = {"stack_hz": None, "host_interval_s": None, "gc_pauses": False, "handle_signals": False, "control": False}
    ratios: dict[str, list[float]] = {"wall": [], "cpu": []}
    shares: list[float] = []
    checks = 0.0
    seconds = 0.0

    def one(watch: bool) -> tuple[float, float]:
        nonlocal checks, seconds
        rec = Recorder(out_dir=out, gpu_interval_s=None, trigger=None, watch_hangs=watch, hang_after_s=0.08, **quiet)
        time.sleep(0.05)
        gc.collect()
        dog = rec._watchdog
        thread = dog._thread if dog is not None else None
        c_dog, k0 = _thread_cpu(thread), dog.checks if dog is not None else 0
        w0, c0 = time.perf_counter(), time.process_time()
        cpu_workload(steps_n, rec)
        got = time.perf_counter() - w0, time.process_time() - c0
        if dog is not None:
            shares.append((_thread_cpu(thread) - c_dog) / got[0])
            checks += dog.checks - k0
            seconds += got[0]
        rec.close()
        return got

    for i in range(pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        got = {w: one(w) for w in order}
        ratios["wall"].append(got[True][0] / got[False][0])
        ratios["cpu"].append(got[True][1] / got[False][1])
    out_: dict[str, float] = {"pairs": pairs, "check_hz": checks / seconds if seconds else float("nan")}
    for key, values in ratios.items():
        out_[key] = statistics.median(values) - 1
        out_[key + "_ci"] = tuple(x - 1 for x in _median_interval(values))  # type: ignore[assignment]
    out_["share"] = statistics.median(shares)
    out_["share_max"] = max(shares)
    return out_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget-mib", type=float, default=4.0)
    parser.add_argument("--sampler-pairs", type=int, default=30, help="paired runs (unsampled against each variant)")
    parser.add_argument("--sampler-steps", type=int, default=200, help="steps of the CPU-bound workload per run")
    parser.add_argument("--watchdog-pairs", type=int, default=20, help="paired runs without and with the watchdog")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        t = timing(args.steps, args.rounds, out)
        m = memory(args.steps, int(args.budget_mib * (1 << 20)), out)
        h = sampler_overhead(args.sampler_pairs, args.sampler_steps, out)
        w = watchdog_overhead(args.watchdog_pairs, args.sampler_steps, out)
    print(
        f"recorder overhead, {args.steps:,} steps per variant in {args.rounds} interleaved rounds "
        f"(medians of thread CPU time); load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after "
        f"(1 min, {os.cpu_count()} CPUs, a machine shared by several engineers)"
    )
    print(f"  bare loop            {t['bare_ns']:8.0f} ns/iteration")
    print(f"  with rec.step()      {t['step_ns']:8.0f} ns/iteration  (round spread {t['spread_span_ns']:.0f} ns)")
    print(f"  step + 2 phases      {t['step_phases_ns']:8.0f} ns/iteration")
    print(
        f"  overhead per span    {t['per_span_ns']:8.0f} ns   target < 2000 ns -> "
        f"{'met' if t['per_span_ns'] < 2000 else 'MISSED'}"
    )
    print(f"  overhead per phase   {t['per_phase_ns']:8.0f} ns")
    print(
        f"  anchor: an empty timed context manager costs {t['floor_ns']:.0f} ns; the recorder's span "
        f"is {t['per_span_ns'] / t['floor_ns']:.2f}x that (target <= 2x), a phase "
        f"{t['per_phase_ns'] / t['floor_ns']:.2f}x"
    )
    print(
        f"  wall clock (inflated when the machine is shared): span {t['wall_per_span_ns']:.0f} ns, "
        f"anchor {t['wall_floor_ns']:.0f} ns"
    )
    print(
        f"  host sampler (stacks 100 Hz, CPU/memory 4 Hz, GC) on a CPU-bound workload ({h['sampled_s']:.2f} s a run), "
        f"{h['pairs']} pairs of runs (the unsampled recorder against each variant, back to back, order flipped every "
        f"pair)"
    )

    def pct(key: str) -> str:
        lo, hi = h[key + "_ci"]
        qlo, _, qhi = h[key + "_q"]
        return (
            f"{100 * h[key]:+.2f} % (95 % interval of the median {100 * lo:+.2f} to {100 * hi:+.2f}; quartiles "
            f"{100 * qlo:+.1f} to {100 * qhi:+.1f})"
        )

    slo, _, shi = h["sampler_share_q"]
    direct = "met" if h["sampler_share"] < 0.02 else "MISSED"
    paired = (
        "met"
        if max(h["sampled_wall_ci"][1], h["sampled_cpu_ci"][1]) < 0.02
        else "MISSED"
        if min(h["sampled_wall_ci"][0], h["sampled_cpu_ci"][0]) >= 0.02
        else "not resolved (the interval spans 2 %)"
    )
    print(
        f"  sampler thread's own CPU over the workload: {100 * h['sampler_share']:.2f} % of its wall time (quartiles "
        f"{100 * slo:.2f} to {100 * shi:.2f}), {h['tick_us']:.1f} us a tick at {h['achieved_hz']:.1f} Hz achieved "
        f"(100 Hz configured)  target < 2 % -> {direct}"
    )
    print(f"  sampled vs unsampled, paired: wall {pct('sampled_wall')}")
    print(f"                                process CPU {pct('sampled_cpu')}")
    print(f"                                workload thread CPU {pct('sampled_thread')}  target < 2 % -> {paired}")
    print(
        f"  anchor (a thread waking at 100 Hz, doing nothing: the GIL handoffs alone; its own CPU "
        f"{100 * h['anchor_share']:.2f} %, {h['anchor_tick_us']:.1f} us a wake-up): wall {pct('handoff_wall')}"
    )
    print(
        f"  for comparison (not the recorder): the same tick driven by SIGALRM on the main thread, "
        f"{h['signal_tick_us']:.1f} us in the handler at {h['signal_hz']:.1f} Hz: wall {pct('signal_wall')}"
    )
    print(f"  an unsampled recorder vs no recorder: wall {pct('bare_wall')}")
    print(f"  recorder faults {t['faults']}, incidents {t['incidents']}, records evicted {t['evicted_records']:,}")
    lo, hi = w["wall_ci"]
    clo, chi = w["cpu_ci"]
    print(
        f"  hang watchdog at a stress setting ({w['check_hz']:.0f} checks/s; the default is at most 1/s), "
        f"{w['pairs']} pairs against no watchdog: its thread's own CPU {100 * w['share']:.3f} % of the workload's "
        f"wall time (at most {100 * w['share_max']:.3f} %)  target < 2 % -> {'met' if w['share'] < 0.02 else 'MISSED'}"
    )
    print(
        f"                                wall {100 * w['wall']:+.2f} % (95 % interval of the median {100 * lo:+.2f} "
        f"to {100 * hi:+.2f}), process CPU {100 * w['cpu']:+.2f} % ({100 * clo:+.2f} to {100 * chi:+.2f})"
    )
    ratio = m["peak_bytes"] / m["budget_bytes"]
    print(
        f"memory at the budget ({args.steps:,} rows; unbounded they would take {m['unbounded_bytes'] / 2**20:.1f} MiB)"
    )
    print(f"  span budget          {m['budget_bytes'] / 2**20:8.2f} MiB")
    print(
        f"  peak (tracemalloc)   {m['peak_bytes'] / 2**20:8.2f} MiB  = {ratio:.3f} x budget -> "
        f"{'within 10 %' if abs(ratio - 1) <= 0.10 else 'OUTSIDE 10 %'}"
    )
    print(
        f"  at end               {m['end_bytes'] / 2**20:8.2f} MiB  (ring accounts "
        f"{m['retained_bytes'] / 2**20:.2f} MiB; {m['evicted_records']:,} rows evicted)"
    )


if __name__ == "__main__":
    main()
