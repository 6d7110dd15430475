"""What the host was doing: sampled Python stacks, CPU and memory, and GC pauses.

One daemon thread (``wb-recorder-host``) reads every workload thread's Python stack with
``sys._current_frames()`` at ``stack_hz`` and, every ``host_interval_s``, the process's CPU
time, RSS, page faults and context switches (``getrusage`` and ``/proc``) and each
thread's CPU time (``/proc/self/task/<tid>/stat``). Garbage-collector pauses come from
``gc.callbacks`` on whichever thread collects. Each stream is its own ring with its own
budget, apart from the spans and the GPU samples.

Stacks are interned: a frame is a code object (function, file, first line), a stack a
tuple of frame ids, leaf first; a ring row is ``(t_ns, thread slot, stack id)``. The
intern tables are bounded (``max_frames``, ``max_stacks``, ``max_depth``); what does not
fit is counted and lands in the ``(other)`` frame or stack, never dropped silently.

What this cannot see: frames of native code (C extensions, CUDA, the kernel) show as the
Python frame that called them; other processes; the GIL's holder (CPython exposes no API
for it, and at the sampling instant the sampler itself holds the GIL). Per-thread CPU time
says which threads ran, an observation about CPU, not the GIL.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from types import CodeType
from typing import Any

try:  # Unix only; elsewhere process CPU and faults are unknown
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

NAN = math.nan
OTHER = "(other)"
# A thread sampled inside the recorder's own GC callback was collecting: the sample is
# the collector's, shown as this frame (innermost), with the workload's frames below it.
GC_FRAME = "(garbage collection)"

STACK_FIELDS: tuple[str, ...] = ("t_ns", "thread", "stack")
# One host row: the process (thread -1) or one thread. A thread row leaves the process-only
# columns NaN (unknown); /proc gives per-thread CPU at clock-tick resolution.
HOST_FIELDS: tuple[str, ...] = (
    "t_ns",
    "thread",
    "cpu_user_s",
    "cpu_sys_s",
    "minor_faults",
    "major_faults",
    "rss_bytes",
    "voluntary_switches",
    "involuntary_switches",
)
PROCESS_METRICS: tuple[str, ...] = HOST_FIELDS[2:]
THREAD_METRICS: tuple[str, ...] = HOST_FIELDS[2:6]
GC_FIELDS: tuple[str, ...] = ("start_ns", "end_ns", "generation", "collected", "uncollectable")

# Threads the recorder runs itself: never sampled (their stacks say nothing of the workload).
OWN_THREAD_PREFIX = "wb-recorder-"
MAX_THREADS = 256
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") and "SC_PAGE_SIZE" in os.sysconf_names else 4096


def gil_note() -> str:
    """What the sampler can say about the GIL on this interpreter (honestly: little)."""
    enabled = getattr(sys, "_is_gil_enabled", None)
    if enabled is not None and not enabled():
        return "no GIL (free-threaded build): threads run in parallel"
    return (
        f"unknown: CPython {sys.version_info.major}.{sys.version_info.minor} has no API that names the "
        "thread holding the GIL, and at each sample the sampler holds it itself; per-thread CPU time "
        "(the per-thread rows of host.cpu) shows which threads ran"
    )


class StackTables:
    """The interned frames and stacks (written by the sampler thread only; read by
    snapshots as a length, since both lists only grow)."""

    def __init__(self, *, max_frames: int, max_stacks: int, max_depth: int) -> None:
        self.max_frames = max_frames
        self.max_stacks = max_stacks
        self.max_depth = max_depth
        self.frames: list[tuple[str, str, int]] = [(OTHER, "", 0)]  # id 0: the overflow frame
        self.stacks: list[tuple[int, ...]] = [(0,)]  # id 0: the overflow stack
        # id(code) -> frame id; the code objects are kept (``_codes``) so an id is never reused.
        self._frame_ids: dict[int, int] = {}
        self._codes: list[CodeType] = []
        self._stack_ids: dict[tuple[int, ...], int] = {}
        self.frames_over_limit = 0
        self.stacks_over_limit = 0
        self.truncated = 0
        self.frames.append((GC_FRAME, "", 0))  # id 1
        self._frame_ids[id(GcWatcher._callback.__code__)] = 1

    def stack_of(self, top: Any) -> int:
        """The id of the stack whose innermost frame is ``top`` (interning as needed)."""
        ids = []
        f = top
        depth = self.max_depth
        frame_ids = self._frame_ids
        while f is not None and depth:
            code = f.f_code
            fid = frame_ids.get(id(code))
            if fid is None:
                fid = self._frame(code)
            ids.append(fid)
            f = f.f_back
            depth -= 1
        if f is not None:
            self.truncated += 1  # the outermost frames are cut: the leaf side is what moves
        key = tuple(ids)
        sid = self._stack_ids.get(key)
        if sid is None:
            if len(self.stacks) >= self.max_stacks:
                self.stacks_over_limit += 1
                return 0
            sid = len(self.stacks)
            self.stacks.append(key)
            self._stack_ids[key] = sid
        return sid

    def _frame(self, code: CodeType) -> int:
        if len(self.frames) >= self.max_frames:
            self.frames_over_limit += 1
            return 0
        fid = len(self.frames)
        self.frames.append((code.co_name, code.co_filename, code.co_firstlineno))
        self._codes.append(code)
        self._frame_ids[id(code)] = fid
        return fid


class ThreadSlots:
    """Workload threads as small integers, with their names (bounded)."""

    def __init__(self) -> None:
        self.slots: dict[int, int] = {}  # ident -> slot
        self.info: list[tuple[str, int | None]] = []  # slot -> (name, native id)
        self.skip: set[int] = set()
        self.over_limit = 0

    def slot(self, ident: int) -> int | None:
        found = self.slots.get(ident)
        if found is not None:
            return found
        return self._add(ident)

    def _add(self, ident: int) -> int | None:
        thread = _thread_by_ident(ident)
        name = thread.name if thread is not None else f"thread {ident}"
        if name.startswith(OWN_THREAD_PREFIX):
            self.skip.add(ident)
            return None
        if len(self.info) >= MAX_THREADS:
            self.over_limit += 1
            self.skip.add(ident)
            return None
        slot = len(self.info)
        self.info.append((name, getattr(thread, "native_id", None)))
        self.slots[ident] = slot
        return slot

    def refresh(self) -> None:
        """Give a reused ident a new slot (a thread that ended and one that took its ident)."""
        for thread in threading.enumerate():
            slot = self.slots.get(thread.ident)  # type: ignore[arg-type]
            if slot is not None and self.info[slot] != (thread.name, thread.native_id):
                del self.slots[thread.ident]  # type: ignore[arg-type]
                self._add(thread.ident)  # type: ignore[arg-type]


def _thread_by_ident(ident: int) -> threading.Thread | None:
    for thread in threading.enumerate():
        if thread.ident == ident:
            return thread
    return None


class ProcFiles:
    """/proc files kept open and re-read with one ``pread`` each: every system call releases
    the GIL, and taking it back can wait a switch interval behind a CPU-bound thread, so a
    tick makes as few as it can. Opened by the process that reads them (a forked child's
    recorder makes its own)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def read(self, path: str) -> bytes | None:
        fd = self._fds.get(path)
        try:
            if fd is None:
                fd = self._fds[path] = os.open(path, os.O_RDONLY)
            return os.pread(fd, 4096, 0)
        except OSError:  # no /proc, or the thread is gone
            if fd is not None:
                self.forget(path)
            return None

    def forget(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        for path in list(self._fds):
            self.forget(path)


def process_row(now_ns: float, files: ProcFiles) -> list[float]:
    """One process row: CPU time, faults, RSS, context switches (NaN where unknown)."""
    row = [now_ns, -1.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN]
    if resource is not None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        row[2:6] = [ru.ru_utime, ru.ru_stime, float(ru.ru_minflt), float(ru.ru_majflt)]
        row[7:9] = [float(ru.ru_nvcsw), float(ru.ru_nivcsw)]
    statm = files.read("/proc/self/statm")
    try:
        if statm is not None:
            row[6] = float(int(statm.split()[1]) * _PAGE)
    except (ValueError, IndexError):
        pass  # RSS unknown
    return row


def thread_row(now_ns: float, slot: int, native_id: int, files: ProcFiles) -> list[float] | None:
    """One thread's CPU time and faults from /proc (None: the thread is gone, or no /proc)."""
    raw = files.read(f"/proc/self/task/{native_id}/stat")
    try:
        if raw is None:
            return None
        after = raw.rsplit(b")", 1)[1].split()
        return [
            now_ns,
            float(slot),
            int(after[11]) / _CLK_TCK,
            int(after[12]) / _CLK_TCK,
            float(after[7]),
            float(after[9]),
            NAN,
            NAN,
            NAN,
        ]
    except (ValueError, IndexError):
        return None


class TickSchedule:
    """When the stack and host streams are next due, on the sampler's monotonic clock (s).

    Each stream keeps its own grid of deadlines (start + k * period): a tick that comes late
    (the sampler waited for the GIL, or the machine is busy) does not move the grid, and one
    that comes more than a period late skips the deadlines it missed (counted in ``missed``)
    instead of catching up in a burst. So the achieved rate is the configured one whenever a
    tick's delay stays under one period, and below it, by the ``missed`` count, when not.
    """

    def __init__(self, stack_period: float | None, host_period: float | None, now: float) -> None:
        # A stream that is off has no deadline (inf: never due, never advanced).
        self.stack_period = math.inf if stack_period is None else stack_period
        self.host_period = math.inf if host_period is None else host_period
        self.next_stack = math.inf if stack_period is None else now
        self.next_host = math.inf if host_period is None else now
        self.missed = 0  # stack deadlines skipped because a tick came a period or more late

    def due(self, now: float) -> tuple[bool, bool]:
        """Whether the stack and the host stream are due at ``now``; advances their grids."""
        stack = now >= self.next_stack
        if stack:
            self.next_stack, skipped = _advance(self.next_stack, self.stack_period, now)
            self.missed += skipped
        host = now >= self.next_host
        if host:
            self.next_host = _advance(self.next_host, self.host_period, now)[0]
        return stack, host

    def wait(self, now: float) -> float:
        """Seconds to sleep until the next deadline of either stream."""
        return max(0.0, min(self.next_stack, self.next_host) - now)


def _advance(deadline: float, period: float, now: float) -> tuple[float, int]:
    """The first deadline of the grid after ``now``, and how many grid points were skipped."""
    following = deadline + period
    if following > now:
        return following, 0
    skipped = int((now - deadline) // period)
    following = deadline + (skipped + 1) * period
    if following <= now:  # float rounding at the boundary
        following += period
        skipped += 1
    return following, skipped


class HostSampler:
    """Stacks at ``stack_hz`` and host metrics every ``host_interval_s``, on one thread.

    ``sample_stacks(now)`` and ``sample_host(now)`` are the whole of one tick, so tests
    call them directly on their own clock; ``monotonic`` and ``sleep`` (the thread's
    schedule) are injectable too, so the deadline arithmetic is tested without wall time.
    """

    def __init__(
        self,
        *,
        stacks_ring: Any | None,
        host_ring: Any | None,
        tables: StackTables,
        stack_hz: float | None,
        host_interval_s: float | None,
        clock_ns: Callable[[], float],
        on_fault: Callable[[BaseException, str], None],
        seal: Callable[[float], None],
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        thread_time: Callable[[], float] = time.thread_time,
    ) -> None:
        self.stacks_ring = stacks_ring
        self.host_ring = host_ring
        self.tables = tables
        self.threads = ThreadSlots()
        self.stack_hz = stack_hz if stacks_ring is not None else None
        self.host_interval_s = host_interval_s if host_ring is not None else None
        self.clock_ns = clock_ns
        self.on_fault = on_fault
        self.seal = seal
        self.monotonic = monotonic
        self.sleep = sleep
        self.thread_time = thread_time
        self.status = "not started"
        self.ticks = 0
        self.host_ticks = 0
        self.schedule: TickSchedule | None = None
        self.cpu_s = 0.0  # the sampler thread's own CPU time: its cost to the process
        self.started_s: float | None = None  # the first stack tick, on ``monotonic``
        self.last_s: float | None = None  # the latest stack tick
        self.files = ProcFiles()
        self._stopping = False  # a plain read in the loop, not a call
        self._ident: int | None = None  # the sampler thread's (it never samples itself)
        self._thread: threading.Thread | None = None

    @property
    def overruns(self) -> int:
        """Stack deadlines skipped because a tick came a period or more late."""
        return self.schedule.missed if self.schedule is not None else 0

    def achieved_hz(self) -> float | None:
        """Stack ticks per second between the first and the latest one (below ``stack_hz``
        by the deadlines the sampler missed: it waited a period or more for the GIL, or the
        machine was busy)."""
        if self.started_s is None or self.last_s is None or self.ticks < 2:
            return None
        elapsed = self.last_s - self.started_s
        return (self.ticks - 1) / elapsed if elapsed > 0 else None

    def sample_stacks(self, now_ns: float) -> None:
        ring, tables, threads = self.stacks_ring, self.tables, self.threads
        me, slots, skip = self._ident or threading.get_ident(), threads.slots, threads.skip
        append, stack_of = ring.append, tables.stack_of
        frames = sys._current_frames()
        try:
            for ident, top in frames.items():
                slot = slots.get(ident)
                if slot is None:
                    if ident == me or ident in skip:
                        continue
                    slot = threads.slot(ident)
                    if slot is None:
                        continue
                append([now_ns, slot, stack_of(top)])
        finally:
            del frames  # frame references must not outlive the tick
        self.ticks += 1

    def sample_host(self, now_ns: float) -> None:
        ring = self.host_ring
        ring.append(process_row(now_ns, self.files))
        self.threads.refresh()
        live = set(self.threads.slots.values())
        for slot, (_, native_id) in enumerate(self.threads.info):
            if native_id is None:
                continue
            if slot in live:
                row = thread_row(now_ns, slot, native_id, self.files)
                if row is not None:
                    ring.append(row)
            else:
                self.files.forget(f"/proc/self/task/{native_id}/stat")
        self.host_ticks += 1

    def start(self) -> None:
        self._stopping = False
        self.status = "starting"
        self._thread = threading.Thread(target=self._run, name="wb-recorder-host", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        stack_period = None if self.stack_hz is None else 1.0 / self.stack_hz
        self.status = "ok"
        self._ident = threading.get_ident()
        thread_time, monotonic, sleep, clock_ns = self.thread_time, self.monotonic, self.sleep, self.clock_ns
        cpu0 = thread_time()
        self.schedule = schedule = TickSchedule(stack_period, self.host_interval_s, monotonic())
        try:
            # Every Python call here runs on cold caches (the thread slept since the last
            # tick), so the loop is kept flat. time.sleep, not Event.wait: one GIL release per
            # tick (each reacquire waits a switch interval behind a CPU-bound thread).
            while not self._stopping:
                began = monotonic()
                stacks, host = schedule.due(began)
                now = clock_ns()
                if stacks:
                    try:
                        self.sample_stacks(now)
                    except Exception as exc:  # noqa: BLE001 - one bad tick, counted
                        self.on_fault(exc, "stack sample")
                    if self.started_s is None:
                        self.started_s = began
                    self.last_s = began
                    if not self.ticks & 15:  # the rings' age budget moves even when nothing else happens
                        self.seal(now)
                        # The sampler's own CPU, read every 16th tick (or at each host tick when
                        # stacks are off): a thread-CPU clock read is a system call.
                        self.cpu_s = thread_time() - cpu0
                if host:
                    try:
                        self.sample_host(now)
                    except Exception as exc:  # noqa: BLE001
                        self.on_fault(exc, "host sample")
                    if stack_period is None:
                        self.seal(now)
                        self.cpu_s = thread_time() - cpu0
                # The wait for the GIL after each sleep is absorbed into the next sleep: the
                # deadlines stay on their grid behind a CPU-bound thread.
                sleep(schedule.wait(monotonic()))
        except Exception as exc:  # noqa: BLE001 - the sampler dies quietly, counted
            self.status = "failed"
            self.on_fault(exc, "host sampler")
        finally:
            self.cpu_s = thread_time() - cpu0
            self.files.close()

    def stop(self, timeout: float = 1.0) -> None:
        self._stopping = True
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self.files.close()
        if self.status in ("ok", "starting"):
            self.status = "stopped"


class GcWatcher:
    """Garbage-collector pauses from ``gc.callbacks``: one ring row per collection.

    The callback runs on the collecting thread, inside the pause: two clock reads and one
    row appended (one C call), nothing else.
    """

    def __init__(
        self, ring: Any, clock_ns: Callable[[], float], on_fault: Callable[[BaseException, str], None]
    ) -> None:
        self.ring = ring
        self.clock_ns = clock_ns
        self.on_fault = on_fault
        self.pauses = 0
        self._start: float | None = None
        self._installed = False

    def install(self) -> None:
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True

    def remove(self) -> None:
        if self._installed:
            try:
                gc.callbacks.remove(self._callback)
            except ValueError:
                pass
            self._installed = False

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        try:
            if phase == "start":
                self._start = self.clock_ns()
                return
            start, self._start = self._start, None
            if start is not None:
                self.ring.append(
                    [
                        start,
                        self.clock_ns(),
                        float(info.get("generation", NAN)),
                        float(info.get("collected", NAN)),
                        float(info.get("uncollectable", NAN)),
                    ]
                )
                self.pauses += 1
        except Exception as exc:  # noqa: BLE001 - never into the collecting thread
            self.on_fault(exc, "gc callback")
