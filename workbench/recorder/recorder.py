"""The flight recorder: spans and phases on the workload's threads, GPU samples on a
sampler thread, snapshots written by one writer thread.

Hot path (``with rec.step():``): two clock reads, one row appended to the span ring
(one C call), a comparison with the trigger threshold. No lock, no allocation beyond
the span object and its row. Everything slow (sealing, trimming, median refresh,
writing) happens rarely or on another thread.

Nothing in here raises into the workload: every recorder-side failure is caught,
counted, logged once per place and reported in ``stats()`` and in every snapshot.
"""

from __future__ import annotations

import atexit
import dataclasses
import itertools
import logging
import os
import queue
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Any

from msgspec import UNSET

from workbench import __version__
from workbench.recorder.capture import (
    CUDA,
    PHASE,
    REQUEST,
    NAME_UNIT,
    SEQ_LIMIT,
    SEQ_UNIT,
    SPAN_FIELDS,
    STEP,
    VALUE,
    SnapshotData,
    build_capture,
    write_capture,
)
from workbench.recorder.config import RecorderConfig, disabled_by_env
from workbench.recorder.gpu import GPU_FIELDS, GpuSampler, GpuSource
from workbench.recorder.host import GC_FIELDS, HOST_FIELDS, STACK_FIELDS, GcWatcher, HostSampler, StackTables, gil_note
from workbench.recorder import termination
from workbench.recorder.snapshot_socket import ControlServer
from workbench.recorder.host_capture import HostTaken
from workbench.recorder.moment import Open, WorkloadThreads, state_at
from workbench.recorder.records import AtSnapshot, Detail, GpuSection, RecorderInfo
from workbench.recorder.ring import SegmentRing
from workbench.recorder.trigger import HangRule, IncidentBudget, LatencyTrigger
from workbench.recorder.watchdog import Hang, Watchdog
from workbench.recorder.upload import upload_snapshot
from workbench.vocabulary import JSONDoc

log = logging.getLogger("workbench.recorder")

_OVERFLOW_NAME = "other"
# Every 16th span does the housekeeping (seal check, trigger refresh): a segment
# overshoots by at most 15 span rows (phases check on every row: they can be many).
# Spans carry base = seq * SEQ_UNIT, so the mask is shifted the same way.
_HOUSEKEEPING_MASK = 15 * SEQ_UNIT
_NOTE_MASK = 1023 * SEQ_UNIT  # the loop's frame and thread are noted every 1024th span
_INF = float("inf")


class _Span:
    """One step or request; also a handle for its phases and values (any thread).

    Each recorder makes its own subclass (``_bound``) whose ``__enter__``/``__exit__`` are
    closures over that recorder's clock, sequence, span ring and trigger, and binds it as
    ``rec.step``: creating a span is then a C-level call with no ``__init__`` frame, and
    the hot path reads its state from closure cells, not from attribute chains.
    """

    __slots__ = ("_seq", "_start")
    _seq: int
    _start: int | None  # None: the clock failed at __enter__
    _kind = STEP
    _rec: Recorder

    @property
    def seq(self) -> int:
        """The span's sequence number (``step`` in a training snapshot, ``r-<seq>``)."""
        return self._seq // SEQ_UNIT

    def phase(self, name: str, *, cuda: bool = False) -> Any:
        """A phase of this span (use it when several spans are open on several threads)."""
        return self._rec._phase_of(self._seq, name, cuda)

    def value(self, name: str, value: float) -> None:
        """Attach a number to this span (``tokens``, ``loss``, ``prompt_tokens``...)."""
        self._rec._value_of(self._seq, name, value)


class _NoSpan:
    """What ``rec._opened.span`` is before any span opened: phases attach to sequence 0."""

    __slots__ = ()
    _seq = 0
    _start = None
    _kind = STEP


class _Opened:
    """The most recently opened span (what ``rec.phase()`` attaches to, and what the hang
    watchdog watches) and the most recently entered phase: slots, the cheapest attributes
    to store on the hot path."""

    __slots__ = ("span", "phase")

    def __init__(self) -> None:
        self.span: Any = _NoSpan()
        self.phase: Any = None


class _Request(_Span):
    __slots__ = ()
    _kind = REQUEST


def _ignore(value: float) -> None:
    return None


def _span_hooks(rec: Recorder, kind: int) -> tuple[Callable[..., Any], Callable[..., bool], Callable[..., None]]:
    """``__enter__`` and ``__exit__`` of ``rec``'s spans of ``kind`` (the body of
    Recorder._close, inlined: the hottest code in the recorder), and ``rebind``, which
    swaps the clock or the sequence under them (a test's clock; the sequence's restart)."""
    clock: Callable[[], int] = rec._clock
    next_seq: Callable[[], int] = rec._seq.__next__
    ring = rec._spans
    # This recorder's trigger, or None when this kind isn't watched.
    trig = rec._trigger if kind == rec._watch_kind else None
    # The history's append (one C call); unused when no trigger watches this kind.
    observe: Callable[[float], None] = trig.observe if trig is not None else _ignore
    opened = rec._opened
    mask = _HOUSEKEEPING_MASK

    def __enter__(self: _Span) -> _Span:
        self._seq = next_seq()  # seq * SEQ_UNIT: the row code of a step
        opened.span = self  # for rec.phase() and the hang watchdog (its start is read there)
        try:
            self._start = clock()
        except Exception as exc:  # noqa: BLE001 - never into the workload
            self._start = None
            rec._fault(exc, "clock")
        return self

    def __exit__(self: _Span, et: Any, ev: Any, tb: Any) -> bool:
        try:
            start = self._start
            if start is None:  # the clock failed at __enter__ (already counted)
                return False
            end = clock()
            base = self._seq
            # Raw clock values: converting is the snapshot's job, not the hot path's.
            ring.append([base + kind, start, end])
            if et is not None:
                ring.append([base + rec._ok_code, 0.0, 0.0])
            if trig is not None:
                duration = end - start
                if duration > trig.fires_above_ns:
                    rec._slow(base, kind, duration, end)
                observe(duration)
            if not base & mask:
                rec._housekeeping(base, end)
        except Exception as exc:  # noqa: BLE001
            rec._fault(exc, "span")
        return False

    def rebind(*, clock_fn: Callable[[], int] | None = None, next_fn: Callable[[], int] | None = None) -> None:
        nonlocal clock, next_seq
        clock = clock_fn or clock
        next_seq = next_fn or next_seq

    return __enter__, __exit__, rebind


def _phase_hooks(rec: Recorder) -> tuple[Callable[..., Any], Callable[..., bool], Callable[..., None]]:
    """``__enter__`` and ``__exit__`` of ``rec``'s phases (host timing), and ``rebind``."""
    clock: Callable[[], int] = rec._clock
    ring = rec._spans
    opened = rec._opened

    def __enter__(self: _Phase) -> _Phase:
        opened.phase = self  # the open phase, for the hang watchdog
        try:
            self._start = clock()
        except Exception as exc:  # noqa: BLE001
            self._start = None
            rec._fault(exc, "clock")
        return self

    def __exit__(self: _Phase, et: Any, ev: Any, tb: Any) -> bool:
        try:
            start = self._start
            if start is not None:
                end = clock()
                ring.append([self._code + PHASE, start, end])
                if len(ring.active) >= ring.segment_values:
                    rec._seal(end)
        except Exception as exc:  # noqa: BLE001
            rec._fault(exc, "phase")
        return False

    def rebind(*, clock_fn: Callable[[], int] | None = None, next_fn: Callable[[], int] | None = None) -> None:
        nonlocal clock
        clock = clock_fn or clock

    return __enter__, __exit__, rebind


def _bound(cls: type, rec: Recorder) -> type:
    """``cls`` for ``rec``: ``_rec`` a class attribute, the timing hooks closures over the
    recorder's state (their ``rebind`` kept in ``rec._rebinders``). Calling it makes a span
    or a phase with no Python-level init."""
    if issubclass(cls, _Span):
        enter, exit_, rebind = _span_hooks(rec, cls._kind)
    else:
        enter, exit_, rebind = _phase_hooks(rec)
    rec._rebinders.append(rebind)
    attrs: dict[str, object] = {"__slots__": (), "_rec": rec}  # the class namespace: what type() takes
    if cls is _CudaPhase:  # its own __enter__/__exit__ wrap the host timing
        attrs.update(_host_enter=staticmethod(enter), _host_exit=staticmethod(exit_))
    else:
        attrs.update(__enter__=enter, __exit__=exit_)
    return type(cls.__name__, (cls,), attrs)


class _Phase:
    """A phase of a span. Made by a per-recorder subclass (``_bound``: ``_rec`` a class
    attribute, the timing hooks closures) with ``_code`` (the span's base + the name's
    code) set by the maker: no init frame."""

    __slots__ = ("_code", "_start")
    _code: int
    _start: int | None
    _rec: Recorder
    _kind = PHASE


class _CudaPhase(_Phase):
    """A phase timed on the host and, through CUDA events (cupy), on the GPU stream.

    The events are resolved later (``done`` is a non-blocking query) so the workload
    never synchronizes with the GPU because of the recorder.
    """

    __slots__ = ("_events",)
    _kind = CUDA

    _host_enter: Callable[[_Phase], _Phase]
    _host_exit: Callable[[_Phase, Any, Any, Any], bool]

    def __enter__(self) -> _CudaPhase:
        self._host_enter(self)
        try:
            ev = self._rec._cupy.cuda.Event()
            ev.record()
            self._events = [ev]
        except Exception as exc:  # noqa: BLE001
            self._events = None
            self._rec._fault(exc, "cuda event")
        return self

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        self._host_exit(self, et, ev, tb)
        rec = self._rec
        try:
            if self._events is not None and self._start is not None:
                end_ev = rec._cupy.cuda.Event()
                end_ev.record()
                pending = rec._cuda_pending
                if len(pending) == pending.maxlen:
                    rec._cuda_dropped += 1
                pending.append((self._code, self._start, self._events[0], end_ev))
        except Exception as exc:  # noqa: BLE001
            rec._fault(exc, "cuda event")
        return False


def _made(cls: type, code: int) -> Any:
    phase = cls()
    phase._code = code
    return phase


class _Null:
    """What a disabled recorder hands out: every method does nothing."""

    __slots__ = ()
    seq = -1

    def __enter__(self) -> _Null:
        return self

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        return False

    def phase(self, name: str, *, cuda: bool = False) -> _Null:
        return self

    def value(self, name: str, value: float) -> None:
        return None


_NULL = _Null()


class Recorder:
    """An in-process flight recorder for a training loop or a server.

    >>> rec = Recorder(lens="training", dimensions={"model": "toy"})  # doctest: +SKIP
    >>> with rec.step():                                               # doctest: +SKIP
    ...     with rec.phase("input"): batch = next(loader)
    ...     with rec.phase("compute"): loss = train(batch)

    ``clock`` (ns, monotonic) and ``wall_clock`` (epoch seconds) are injectable for
    tests; ``gpu_source`` replaces NVML. Keyword arguments not given as ``config``
    are fields of :class:`RecorderConfig`.
    """

    def __init__(
        self,
        config: RecorderConfig | None = None,
        *,
        clock: Callable[[], int] | None = None,
        wall_clock: Callable[[], float] | None = None,
        gpu_source: GpuSource | None = None,
        start_threads: bool = True,
        enabled: bool | None = None,
        **fields: Any,
    ) -> None:
        config = config or RecorderConfig()
        if fields:
            config = dataclasses.replace(config, **fields)
        self.config = config
        self.enabled = (not disabled_by_env()) if enabled is None else bool(enabled)
        if not self.enabled:
            self._disable()
            return
        self._clock: Callable[[], int] = clock or time.perf_counter_ns
        self._wall_clock = wall_clock or time.time
        self._start_threads = start_threads
        self._gpu_source = gpu_source
        self._t0 = self._clock()
        self._wall0 = self._wall_clock()
        self._pid = os.getpid()
        self._forked_from: int | None = None
        self._closed = False
        self._termination_taken = False
        self._setup_state()
        _LIVE.add(self)
        self._signals = _install_signals() if config.resolved_signals() else "off"
        self._control = _CONTROL.join(self) if config.resolved_control() else "off"
        if self._signals.startswith("not installed"):
            log.warning("wb recorder: signal handlers %s", self._signals)

    # -- set-up -------------------------------------------------------------------------

    def _disable(self) -> None:
        """Shadow every public method with a no-op (instance attributes beat methods)."""
        self.step = self.request = lambda *a, **k: _NULL  # type: ignore[method-assign]
        self.phase = lambda *a, **k: _NULL  # type: ignore[method-assign]
        self.value = self.record_step = self.record_request = self.mark = (  # type: ignore[method-assign]
            lambda *a, **k: None
        )
        self.snapshot = self.boundary = lambda *a, **k: None  # type: ignore[method-assign]
        self.close = lambda *a, **k: None  # type: ignore[method-assign]
        self.stats = lambda: {"enabled": False}  # type: ignore[method-assign]

    def _setup_state(self) -> None:
        cfg = self.config
        now = self._clock()

        def ring(name: str, fields: tuple[str, ...], budget: Any) -> SegmentRing:
            seal = budget.seal_interval_s
            return SegmentRing(
                name,
                fields,
                max_bytes=budget.max_bytes,
                max_age_ns=None if budget.max_age_s is None else budget.max_age_s * 1e9,
                segment_rows=budget.segment_rows,
                seal_every_ns=_INF if seal is None else seal * 1e9,
                now_ns=now,
            )

        self._spans = ring("spans", SPAN_FIELDS, cfg.spans)
        self._gpu = ring("gpu", GPU_FIELDS, cfg.gpu)
        self._names: dict[str, int] = {}
        self._name_list: list[str] = []
        self._names_dropped = 0
        self._names_lock = threading.Lock()
        self._ok_code = self._name_code("ok") + VALUE
        self._seq = itertools.count(0, SEQ_UNIT)
        self._opened = _Opened()
        self._watch_kind = REQUEST if cfg.lens == "inference" else STEP
        self._trigger = LatencyTrigger(cfg.trigger) if cfg.trigger is not None else None
        self._rebinders: list[Callable[..., None]] = []
        self.step = _bound(_Span, self)  # type: ignore[method-assign]
        self.request = _bound(_Request, self)  # type: ignore[method-assign]
        self._phase_cls = _bound(_Phase, self)
        self._cuda_phase_cls = _bound(_CudaPhase, self)
        self._incidents = IncidentBudget(cfg.trigger) if cfg.trigger is not None else None
        self._suppression_logged: set[str] = set()
        self._events: deque[tuple[float, str, Detail]] = deque(maxlen=cfg.max_events)
        self._events_seen = 0
        self._faults = 0
        self._fault_places: dict[str, int] = {}
        self._last_fault: str | None = None
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._worker_lock = threading.Lock()
        self._snapshot_seq = itertools.count(1)
        self._written: deque[str] = deque(maxlen=64)
        self._written_count = 0
        self._imported_count = 0
        self._imported_runs: deque[int] = deque(maxlen=64)
        self._cupy: Any = None
        self._cuda_pending: deque[tuple[Any, ...]] = deque(maxlen=4096)
        self._cuda_dropped = 0
        self._cuda_lock = threading.Lock()
        self._setup_host(ring)
        self._loops = WorkloadThreads()
        self._setup_watchdog()
        self._sampler: GpuSampler | None = None
        if cfg.gpu_interval_s is not None:
            self._sampler = GpuSampler(
                self._gpu,
                interval_s=cfg.gpu_interval_s,
                clock_ns=self._now,
                source=self._gpu_source,
                on_fault=self._fault,
                on_xid=self._xid,
            )
            if self._start_threads:
                self._sampler.start()

    def _setup_host(self, ring: Callable[..., SegmentRing]) -> None:
        """The host streams: stacks and CPU/memory on one sampler thread, GC pauses from
        gc.callbacks; each its own ring and budget."""
        cfg = self.config
        old = getattr(self, "_gc_watch", None)
        if old is not None:  # a forked child inherits gc.callbacks: drop the parent's watcher
            old.remove()
        self._stacks = ring("stacks", STACK_FIELDS, cfg.stacks) if cfg.stack_hz is not None else None
        self._host = ring("cpu", HOST_FIELDS, cfg.cpu) if cfg.host_interval_s is not None else None
        self._gc_ring = ring("gc", GC_FIELDS, cfg.gc) if cfg.gc_pauses else None
        self._stack_tables = StackTables(max_frames=cfg.max_frames, max_stacks=cfg.max_stacks, max_depth=cfg.max_depth)
        self._gc_watch = None
        if self._gc_ring is not None:
            # gc.callbacks outlives a recorder nobody closed: it holds the clock and a weak
            # reference, never the recorder.
            fault = weakref.WeakMethod(self._fault)
            self._gc_watch = GcWatcher(
                self._gc_ring, self._clock, lambda exc, where: (f := fault()) is not None and f(exc, where)
            )
            self._gc_watch.install()
        self._host_sampler: HostSampler | None = None
        if self._stacks is not None or self._host is not None:
            self._host_sampler = HostSampler(
                stacks_ring=self._stacks,
                host_ring=self._host,
                tables=self._stack_tables,
                stack_hz=cfg.stack_hz,
                host_interval_s=cfg.host_interval_s,
                clock_ns=self._clock,
                on_fault=self._fault,
                seal=self._seal_host,
            )
            if self._start_threads:
                self._host_sampler.start()

    def _setup_watchdog(self) -> None:
        """The hang watchdog on its own thread (watchdog.py), unless turned off."""
        hang = self.config.resolved_hang_after_s()
        self._watchdog: Watchdog | None = None
        if hang is False:
            return
        self._watchdog = Watchdog(
            fixed_s=hang if isinstance(hang, float) else None,
            rule=HangRule(),
            median_ns=self._median_of,
            opened=self._opened,
            ring=self._spans,
            clock_ns=self._now,
            on_hang=self._on_hang,
            on_end=self._on_hang_end,
            on_fault=self._fault,
            max_hangs=self.config.max_hangs,
        )
        if self._start_threads:
            self._watchdog.start()

    def _median_of(self, kind: int) -> float | None:
        """The recent median of spans of ``kind`` (the trigger's, refreshed off the hot path)."""
        trig = self._trigger
        return trig.median_ns if trig is not None and kind == self._watch_kind else None

    def _seal_host(self, now: float) -> None:
        for ring in (self._stacks, self._host, self._gc_ring):
            if ring is not None:
                ring.maybe_seal(now)

    def _host_taken(self, now: float) -> HostTaken | None:
        """References to the host streams for a snapshot (the intern tables by length:
        they only grow, so a prefix is stable)."""
        sampler = self._host_sampler
        if sampler is None and self._gc_ring is None:
            return None
        tables = self._stack_tables
        threads = sampler.threads if sampler is not None else None
        drops = {
            "stacks_over_limit": tables.stacks_over_limit,
            "frames_over_limit": tables.frames_over_limit,
            "truncated_stacks": tables.truncated,
            "threads_over_limit": threads.over_limit if threads is not None else 0,
        }
        status = sampler.status if sampler is not None else "off"
        return HostTaken(
            stacks=self._stacks.view(now) if self._stacks is not None else None,
            cpu=self._host.view(now) if self._host is not None else None,
            gc=self._gc_ring.view(now) if self._gc_ring is not None else None,
            frames=tables.frames[: len(tables.frames)],
            stack_table=tables.stacks[: len(tables.stacks)],
            threads=list(threads.info) if threads is not None else [],
            stack_hz=self.config.stack_hz,
            host_interval_s=self.config.host_interval_s,
            max_depth=self.config.max_depth,
            gil=gil_note(),
            stacks_status=status,
            cpu_status=status,
            ticks=sampler.ticks if sampler is not None else 0,
            achieved_hz=sampler.achieved_hz() if sampler is not None else None,
            overruns=sampler.overruns if sampler is not None else 0,
            sampler_cpu_s=sampler.cpu_s if sampler is not None else 0.0,
            stack_drops=drops,
            gc_status="watched" if self._gc_watch is not None else "off",
            gc_pauses_seen=self._gc_watch.pauses if self._gc_watch is not None else 0,
        )

    # -- recording (workload threads) ---------------------------------------------------

    def step(self) -> _Span:
        """``with rec.step():`` around one training step.

        (Shadowed per instance by a span class bound to this recorder: no Python frame
        on the hot path. This method is the documentation and the fallback.)"""
        return self.__dict__["step"]()  # the bound span class (one per recorder)

    def request(self) -> _Span:
        """``with rec.request() as r:`` around one request; ``r.phase("prefill")``."""
        return self.__dict__["request"]()

    def phase(self, name: str, *, cuda: bool = False) -> Any:
        """A phase of the most recently opened step (for a single-threaded loop; with
        concurrent spans use ``span.phase``). ``cuda=True`` also times it with CUDA
        events when cupy is installed."""
        try:
            code = self._names.get(name)
            if code is not None and not cuda:
                phase = self._phase_cls()
                phase._code = self._opened.span._seq + code
                return phase
        except Exception as exc:  # noqa: BLE001 - e.g. an unhashable name
            self._fault(exc, "phase")
            return _NULL
        return self._phase_of(self._opened.span._seq, name, cuda)

    def value(self, name: str, value: float) -> None:
        """Attach a number (``tokens``, ``samples``, ``loss``) to the most recent step."""
        self._value_of(self._opened.span._seq, name, value)

    def record_step(
        self,
        start_ns: int,
        end_ns: int,
        *,
        phases: Mapping[str, tuple[int, int]] | None = None,
        values: Mapping[str, float] | None = None,
        failed: bool = False,
    ) -> None:
        """Record a step timed by the caller's own timers, on this recorder's clock
        (``rec.clock()``; by default ``time.perf_counter_ns``)."""
        self._record(STEP, start_ns, end_ns, phases, values, failed)

    def record_request(
        self,
        start_ns: int,
        end_ns: int,
        *,
        phases: Mapping[str, tuple[int, int]] | None = None,
        values: Mapping[str, float] | None = None,
        failed: bool = False,
    ) -> None:
        self._record(REQUEST, start_ns, end_ns, phases, values, failed)

    def clock(self) -> int:
        """Now, on the recorder's clock (ns)."""
        return self._clock()

    def _set_clock(self, clock: Callable[[], int]) -> None:
        """Change the clock (tests: a clock that breaks), in the span classes too."""
        self._clock = clock
        for rebind in self._rebinders:
            rebind(clock_fn=clock)
        if self._host_sampler is not None:
            self._host_sampler.clock_ns = clock  # read when its thread (re)starts

    def mark(self, name: str, **detail: Any) -> None:
        """Note a moment (``epoch 3 done``) in the recorder's event log."""
        try:
            self._event(self._now(), "mark", {"name": str(name)[:200], **_plain(detail)})
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "mark")

    # -- internals of recording ---------------------------------------------------------

    def _now(self) -> float:
        """The recorder's clock (raw ns). Rows, events, rings and snapshots all use it;
        a snapshot converts to epoch seconds with one anchor pair (t0, wall0)."""
        return self._clock()

    def _close(self, base: int, kind: int, start: int, end: int, failed: bool) -> None:
        spans = self._spans
        spans.append([base + kind, start, end])
        if failed:
            spans.append([base + self._ok_code, 0.0, 0.0])
        trig = self._trigger
        if trig is not None and kind == self._watch_kind:
            duration = end - start
            if duration > trig.threshold_ns:
                self._slow(base, kind, duration, end)
            trig.observe(duration)
        if not base & _HOUSEKEEPING_MASK:
            self._housekeeping(base, end)

    def _record(self, kind: int, start: int, end: int, phases: Any, values: Any, failed: bool) -> None:
        try:
            base = next(self._seq)
            for name, (p0, p1) in (phases or {}).items():
                self._spans.append([base + self._name_code(name) + PHASE, p0, p1])
            for name, v in (values or {}).items():
                self._spans.append([base + self._name_code(name) + VALUE, float(v), 0.0])
            self._close(base, kind, start, end, failed)
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "record")

    def _phase_of(self, base: int, name: str, cuda: bool) -> Any:
        try:
            code = self._names.get(name)
            if code is None:
                code = self._name_code(name)
            if cuda and self._cuda_ready():
                return _made(self._cuda_phase_cls, base + code)
            return _made(self._phase_cls, base + code)
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "phase")
            return _NULL

    def _value_of(self, base: int, name: str, value: float) -> None:
        try:
            code = self._names.get(name)
            if code is None:
                code = self._name_code(name)
            self._spans.append([base + code + VALUE, float(value), 0.0])
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "value")

    def _name_code(self, name: str) -> int:
        """The code of a phase or value name (its id times NAME_UNIT), registering it."""
        name = str(name)
        with self._names_lock:
            code = self._names.get(name)
            if code is not None:
                return code
            if len(self._name_list) >= self.config.max_names - 1:
                # Bounded: a workload inventing names per step can't grow the table.
                self._names_dropped += 1
                if _OVERFLOW_NAME not in self._names:
                    self._names[_OVERFLOW_NAME] = len(self._name_list) * NAME_UNIT
                    self._name_list.append(_OVERFLOW_NAME)
                return self._names[_OVERFLOW_NAME]
            code = len(self._name_list) * NAME_UNIT
            self._name_list.append(name)
            self._names[name] = code
            return code

    def _housekeeping(self, base: int, now: float) -> None:
        if not base & _NOTE_MASK:
            # Every 1024th span, on the thread that closed it: the loop's frame (the one
            # holding the ``with``: two up, past __exit__) and thread, for the snapshots'
            # stacks (every 16th cost the span 5 %: a call, a frame lookup, a thread id).
            self._loops.note(sys._getframe(2))
        trig = self._trigger
        # Until the first median is known, refresh at every housekeeping (cheap: the
        # history is short) so the relative rule arms as soon as min_history is reached.
        if trig is not None and (trig.median_ns is None or not base & trig.refresh_seq_mask):
            trig.refresh()
        if base >= SEQ_LIMIT:  # keep row codes exact in float64 (after 2**39 spans)
            self._restart_seq(0)
        spans = self._spans  # every 16th span comes here: the seal check, inlined
        if len(spans.active) >= spans.segment_values or now - spans.opened_at_ns > spans.seal_every_ns:
            self._seal(now)

    def _restart_seq(self, base: int) -> None:
        """Start the span sequence over at ``base`` (a multiple of SEQ_UNIT), in the span
        classes' closures too."""
        self._seq = itertools.count(base, SEQ_UNIT)
        for rebind in self._rebinders:
            rebind(next_fn=self._seq.__next__)

    def _seal(self, now: float) -> None:
        """Rare path: seal the span ring; do the housekeeping that must not be hot."""
        self._spans.seal(now)
        if self._cuda_pending:
            self._resolve_cuda()
        if self._gc_ring is not None:
            self._gc_ring.maybe_seal(now)
        if self._forked_from is not None and self._start_threads:
            self._restart_threads()

    def _restart_threads(self) -> None:
        """In a forked child, at its seals: the threads and the socket its parent's recorder had."""
        for worker in (self._sampler, self._host_sampler, self._watchdog):
            if worker is not None and worker.status == "not started":
                worker.start()
        if self._control != "off" and not _CONTROL.serving():
            self._control = _CONTROL.join(self)

    def _cuda_ready(self) -> bool:
        if self._cupy is None:
            try:
                import cupy  # lazy: the ``gpu`` extra

                self._cupy = cupy
            except Exception as exc:  # noqa: BLE001 - no cupy: host timing only
                self._cupy = False
                self._fault(exc, "cupy import")
        return bool(self._cupy)

    def _resolve_cuda(self, *, wait: bool = False) -> None:
        """Turn completed CUDA event pairs into rows; never waits unless ``wait``."""
        if not self._cuda_lock.acquire(blocking=False):
            return
        try:
            pending = self._cuda_pending
            while pending:
                code, start_rel, ev0, ev1 = pending[0]
                if not ev1.done:
                    if not wait:
                        break
                    ev1.synchronize()
                ms = self._cupy.cuda.get_elapsed_time(ev0, ev1)
                self._spans.append([code + CUDA, start_rel, float(ms)])
                pending.popleft()
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "cuda resolve")
        finally:
            self._cuda_lock.release()

    def _event(self, t: float, kind: str, detail: Detail) -> None:
        self._events_seen += 1
        self._events.append((t, kind, detail))

    def _xid(self, t: float, device: int, xid: int) -> None:
        self._event(t, "xid", {"device": device, "xid": xid})

    def _fault(self, exc: BaseException, where: str) -> None:
        """Count a recorder-side failure; log the first one of each place."""
        try:
            self._faults += 1
            self._last_fault = f"{where}: {type(exc).__name__}: {exc}"[:500]
            seen = self._fault_places.get(where, 0)
            self._fault_places[where] = seen + 1
            if not seen:
                log.warning("wb recorder: %s (counted; the workload continues)", self._last_fault)
        except Exception:  # noqa: BLE001 - the fault counter itself must never raise
            pass

    # -- triggers and snapshots -----------------------------------------------------------

    def _slow(self, base: int, kind: int, duration: float, now: float) -> None:
        trig, budget = self._trigger, self._incidents
        assert trig is not None and budget is not None
        seq = base // SEQ_UNIT
        refused = budget.admit(now)
        if refused == "budget" and trig.threshold_ns != _INF:
            # Every incident is spent: disarm, so slow spans stop costing a call each.
            trig.disarm()
            self._event(now, "disarmed", {"why": "incident budget spent", "seq": seq})
        if refused is not None:
            # Only the first suppression after an incident (per reason) goes to the event
            # log; the rest are counted. A noisy loop must not pay for an event each time.
            if budget.suppressed[refused] == 1 or refused not in self._suppression_logged:
                self._suppression_logged.add(refused)
                self._event(now, "suppressed", {"why": refused, "seq": seq, "duration_ms": duration / 1e6})
            return
        self._suppression_logged.clear()
        detail: Detail = {"seq": seq, "span": "request" if kind == REQUEST else "step"}
        detail.update(trig.explain(duration))
        self._event(now, "trigger", dict(detail))
        detail["at"] = round(self._wall0 + (now - self._t0) / 1e9, 6)
        window = self.config.incident_window_s
        # The window reaches back from when the slow span *began*: the moments before
        # the delay, not the delay alone.
        since = None if window is None else now - duration - window * 1e9
        self._take(f"slow {detail['span']}", trigger=detail, incident=True, since_ns=since)

    def snapshot(
        self, reason: str = "on demand", *, wait: bool = True, timeout: float = 60.0, last_s: float | None = None
    ) -> Path | None:
        """Write what the recorder holds now as a capture; returns its path (when
        ``wait``), else ``None``. Never raises; a failure is counted in ``stats()``."""
        try:
            since = None if last_s is None else self._now() - last_s * 1e9
            job = self._take(str(reason)[:200], since_ns=since)
            if job is None or not wait:
                return None
            job.done.wait(timeout)
            return job.path
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "snapshot")
            return None

    def boundary(self, name: str) -> None:
        """A workload boundary (end of an epoch, a checkpoint): mark it and snapshot."""
        self.mark(name)
        self.snapshot(f"boundary: {name}", wait=False)

    # -- hangs, termination, requests from outside (never on the workload's threads) ---------

    def _state_at(self, reason: str, now: float, overrides: dict[int, FrameType] | None = None) -> AtSnapshot:
        """Where the process is now (moment.py): the open span and phase, every thread's stack."""
        return state_at(
            reason=reason,
            now_ns=now,
            epoch=self._epoch,
            ring=self._spans,
            names=self._name_list,
            opened=Open(self._opened.span, self._opened.phase),
            rank=self.config.resolved_rank(),
            max_depth=self.config.max_depth,
            loops=self._loops,
            overrides=overrides,
        )

    def _epoch(self, t_ns: float) -> float:
        return round(self._wall0 + (t_ns - self._t0) / 1e9, 6)

    def _on_hang(self, hang: Hang) -> None:
        """The watchdog found a span open past the threshold: snapshot it while it is open."""
        now = hang.reported_ns
        at = self._state_at("hang", now)
        span = at.open_span
        detail: Detail = {
            "kind": "hang",
            "seq": hang.span._seq // SEQ_UNIT,
            "span": "request" if hang.span._kind == REQUEST else "step",
            "open_ms": round((now - hang.start_ns) / 1e6, 3),
            "threshold_ms": round(hang.threshold_ns / 1e6, 3),
            "rule": self._watchdog.describe(hang.span._kind) if self._watchdog is not None else "",
        }
        if at.open_phase is not UNSET:
            detail["phase"] = at.open_phase.name
            detail["phase_open_ms"] = round(at.open_phase.open_s * 1e3, 3)
        if span is not UNSET and span.phases_done:
            detail["phases_done"] = ",".join(str(p[0]) for p in span.phases_done)[:200]
        self._event(now, "hang", dict(detail))
        detail["at"] = self._epoch(now)
        window = self.config.incident_window_s
        since = None if window is None else hang.start_ns - window * 1e9
        self._take("hang", trigger=detail, since_ns=since, window_kind="incident", at=at)

    def _on_hang_end(self, hang: Hang, end: float) -> None:
        """The hung span ended: a second snapshot, with the hang's length."""
        detail: Detail = {
            "kind": "hang ended",
            "seq": hang.span._seq // SEQ_UNIT,
            "span": "request" if hang.span._kind == REQUEST else "step",
            "duration_ms": round((end - hang.start_ns) / 1e6, 3),
            "threshold_ms": round(hang.threshold_ns / 1e6, 3),
            "rule": self._watchdog.describe(hang.span._kind) if self._watchdog is not None else "",
            "hang_reported_at": self._epoch(hang.reported_ns),
        }
        self._event(self._now(), "hang ended", dict(detail))
        detail["at"] = self._epoch(end)
        window = self.config.incident_window_s
        since = None if window is None else hang.start_ns - window * 1e9
        self._take("hang ended", trigger=detail, since_ns=since, window_kind="incident")

    def _termination(self, reason: str, overrides: dict[int, FrameType] | None, timeout: float) -> Path | None:
        """A termination snapshot (a signal, or an exit on error), waited for at most ``timeout``."""
        if self._termination_taken or self._closed:
            return None
        self._termination_taken = True
        try:
            now = self._now()
            at = self._state_at(reason, now, overrides)
            self._event(now, "termination", {"why": reason})
            job = self._take("termination", trigger={"kind": "termination", "why": reason}, at=at)
            if job is None:
                return None
            job.done.wait(timeout)
            return job.path
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "termination snapshot")
            return None

    def _on_request(self, wait: float) -> Path | None:
        """``wb snapshot PID``: a snapshot now, with the process's state (on the control thread)."""
        try:
            now = self._now()
            at = self._state_at("on request", now)
            job = self._take("on request", trigger={"kind": "on request"}, at=at)
            if job is None:
                return None
            job.done.wait(wait)
            return job.path
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "request snapshot")
            return None

    def _take(
        self,
        reason: str,
        *,
        trigger: Detail | None = None,
        incident: bool = False,
        since_ns: float | None = None,
        window_kind: str | None = None,
        at: AtSnapshot | None = None,
    ) -> _Job | None:
        """Seal and take references (fast, on the calling thread); queue the writing."""
        try:
            if self._closed:
                return None
            if self._cuda_pending:
                self._resolve_cuda()
            now = self._now()
            cfg = self.config
            data = SnapshotData(
                reason=reason,
                taken_ns=now,
                wall0_s=self._wall0,
                t0_ns=self._t0,
                lens=cfg.lens,
                spans=self._spans.view(now),
                gpu=self._gpu.view(now) if self._sampler is not None else None,
                names=tuple(self._name_list),
                events=list(self._events),
                gpu_info=self._gpu_info(),
                recorder=self._report(),
                trigger=trigger,
                label=cfg.label,
                dimensions=dict(cfg.dimensions),
                # An incident's window says so: it is not a steady window of the workload.
                window_kind=window_kind or ("incident" if incident else cfg.window_kind),
                rank=cfg.resolved_rank(),
                since_ns=since_ns,
                host=self._host_taken(now),
                at_snapshot=at,
            )
            job = _Job(data, incident)
            self._ensure_worker()
            self._jobs.put(job)
            return job
        except Exception as exc:  # noqa: BLE001
            if incident and self._incidents is not None:
                self._incidents.finished()
            self._fault(exc, "snapshot")
            return None

    def _gpu_info(self) -> GpuSection:
        if self._sampler is None:
            return GpuSection(status="off", reason="GPU sampling not configured")
        return self._sampler.describe()

    def _report(self) -> RecorderInfo:
        """The recorder's own state, as it goes into snapshots and ``stats()``."""
        incidents = self._incidents
        return RecorderInfo(
            tool="wb",
            version=__version__,
            pid=os.getpid(),
            config=self.config.info(),
            spans=self._spans.counters(),
            gpu=self._gpu.counters(),
            stacks=self._stacks.counters() if self._stacks is not None else UNSET,
            cpu=self._host.counters() if self._host is not None else UNSET,
            gc=self._gc_ring.counters() if self._gc_ring is not None else UNSET,
            faults=self._faults,
            events_dropped=max(0, self._events_seen - len(self._events)),
            fault_places=dict(self._fault_places) or UNSET,
            last_fault=self._last_fault or UNSET,
            incidents=UNSET if incidents is None else incidents.taken,
            in_flight=UNSET if incidents is None else incidents.in_flight,
            suppressed=UNSET if incidents is None else dict(incidents.suppressed),
            names_dropped=self._names_dropped or UNSET,
            cuda_events_dropped=self._cuda_dropped or UNSET,
            forked_from_pid=UNSET if self._forked_from is None else self._forked_from,
            watchdog=UNSET if self._watchdog is None else self._watchdog.counters(),
            signals=getattr(self, "_signals", UNSET),
            control=UNSET if getattr(self, "_control", "off") == "off" else _CONTROL.status(),
        )

    def _ensure_worker(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        with self._worker_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._write_loop, name="wb-recorder-writer", daemon=True)
                self._worker.start()

    def _write_loop(self) -> None:
        """The single snapshot writer: one snapshot at a time, in order."""
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job.path = self._write(job)
                self._import(job.path)
                upload_snapshot(job.path, self.config.server, self._fault)  # server= / WB_SERVER (recorder/upload.py)
            except Exception as exc:  # noqa: BLE001
                self._fault(exc, "snapshot write")
            finally:
                self._release(job)
                job.done.set()

    def _write(self, job: _Job) -> Path:
        cfg = self.config
        doc = build_capture(job.data)
        job.data = None  # drop the segment references: the ring's memory is its own again
        self._release(job)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        reason = doc.window.snapshot_reason
        stem = f"{cfg.label or cfg.lens}-{stamp}-p{os.getpid()}-{next(self._snapshot_seq):03d}-{reason}"
        path = write_capture(doc, cfg.resolved_out_dir(), stem, compress=cfg.compress)
        self._written_count += 1
        self._written.append(str(path))
        return path

    def _release(self, job: _Job) -> None:
        """An incident stops counting as in flight once its document is built."""
        if job.incident and not job.released and self._incidents is not None:
            job.released = True
            self._incidents.finished()

    def _import(self, path: Path) -> None:
        url = self.config.resolved_store_url()
        if not url:
            return
        try:
            from workbench.recorder.handoff import import_into_store  # the store loads here, in the writer thread

            report = import_into_store(path, url)
            self._imported_count += 1
            self._imported_runs.extend(report.run_ids)
        except Exception as exc:  # noqa: BLE001 - the file is kept; import it by hand
            self._fault(exc, "store import")

    # -- reporting and lifetime ------------------------------------------------------------

    def stats(self) -> JSONDoc:
        """Counters: retention and evictions per stream, faults, incidents, snapshots
        (a plain dict: what a user's script prints or logs)."""
        out = self._report().to_json()
        out["enabled"] = True
        out["gpu_sampler"] = self._gpu_info().to_json()
        out["snapshots_written"] = self._written_count
        out["snapshots_imported"] = self._imported_count
        out["imported_run_ids"] = list(self._imported_runs)
        out["snapshot_paths"] = list(self._written)
        return out

    def close(self, timeout: float = 10.0) -> None:
        """Stop sampling and finish queued snapshots (bounded by ``timeout``)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._sampler is not None:
                self._sampler.stop()
            if self._host_sampler is not None:
                self._host_sampler.stop()
            if self._watchdog is not None:
                self._watchdog.stop()
            if self._gc_watch is not None:
                self._gc_watch.remove()
            worker = self._worker
            if worker is not None and worker.is_alive():
                self._jobs.put(None)
                worker.join(timeout)
        except Exception as exc:  # noqa: BLE001
            self._fault(exc, "close")
        _LIVE.discard(self)
        _CONTROL.leave(self)
        if not any(r._signals.startswith("installed") for r in list(_LIVE)):
            termination.uninstall()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close()
        return False

    def _after_fork(self) -> None:
        """In a forked child: fresh locks, empty rings, no threads (they did not survive
        the fork); the sampler restarts at the next seal, the writer on first use."""
        self._forked_from = self._pid
        self._pid = os.getpid()
        self._termination_taken = False
        self._setup_state_without_threads()

    def _setup_state_without_threads(self) -> None:
        start = self._start_threads
        self._start_threads = False
        try:
            self._setup_state()
        finally:
            self._start_threads = start


class _Job:
    __slots__ = ("data", "incident", "done", "path", "released")

    def __init__(self, data: SnapshotData, incident: bool) -> None:
        self.data: SnapshotData | None = data
        self.incident = incident
        self.done = threading.Event()
        self.path: Path | None = None
        self.released = False


def _plain(detail: Mapping[str, object]) -> Detail:
    """Event details as JSON-safe scalars (no NaN, no objects)."""
    out: Detail = {}
    for key, value in detail.items():
        if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
            out[str(key)] = value
        elif isinstance(value, float):
            if value == value and value not in (_INF, -_INF):
                out[str(key)] = value
        else:
            out[str(key)] = str(value)[:200]
    return out


# Every live recorder, for the fork and exit hooks (weak: a dropped recorder is gone).
_LIVE: weakref.WeakSet[Recorder] = weakref.WeakSet()


class _Control:
    """The process's one control socket (snapshot_socket.py), shared by its recorders: started by the
    first that wants it, stopped when the last leaves. A request snapshots each of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: weakref.WeakSet[Recorder] = weakref.WeakSet()
        self._server: ControlServer | None = None

    def join(self, rec: Recorder) -> str:
        with self._lock:
            self._members.add(rec)
            if self._server is None or not self._server.status.startswith("listening"):
                self._server = ControlServer(self._answer, self._fault)
                if rec._start_threads:
                    try:
                        self._server.start()
                    except Exception as exc:  # noqa: BLE001 - no socket: counted, the job goes on
                        rec._fault(exc, "control socket")
                        self._server.status = f"off: {type(exc).__name__}: {exc}"[:300]
            return self._server.status

    def leave(self, rec: Recorder) -> None:
        with self._lock:
            self._members.discard(rec)
            if not self._members and self._server is not None:
                self._server.stop()
                self._server = None

    def serving(self) -> bool:
        """Whether this process (not a parent it was forked from) listens."""
        server = self._server
        return server is not None and server.status.startswith("listening") and server.pid == os.getpid()

    def _fault(self, exc: BaseException, where: str) -> None:
        for rec in list(self._members):
            rec._fault(exc, where)

    def stop(self) -> None:
        server = self._server
        if server is not None:
            server.stop()

    def status(self) -> str:
        server = self._server
        return server.status if server is not None else "off"

    def _answer(self, wait: float) -> list[str]:
        paths = []
        for rec in list(self._members):
            path = rec._on_request(wait)
            if path is not None:
                paths.append(str(path))
        return paths

    def after_fork(self) -> None:
        """The child does not serve its parent's socket; its recorders join again at their next seal."""
        self._lock = threading.Lock()
        if self._server is not None:
            self._server.forget()
        self._server = None


_CONTROL = _Control()


def _install_signals() -> str:
    # Dying of the signal skips atexit: the control socket's file goes first.
    return termination.install(_flush_for_termination, _CONTROL.stop)


def _flush_for_termination(reason: str, frame: FrameType | None) -> None:
    """In the signal handler: every recorder's termination snapshot, taken on a short-lived
    thread (the interrupted main thread may hold a recorder lock), waited for at most the
    largest ``termination_timeout_s``."""
    recs = [r for r in list(_LIVE) if r._signals.startswith("installed") and not r._closed]
    if not recs:
        return
    timeout = max(r.config.termination_timeout_s for r in recs)
    overrides = {threading.get_ident(): frame} if frame is not None else None
    done = threading.Event()

    def flush() -> None:
        try:
            for rec in recs:
                rec._termination(reason, overrides, timeout)
        finally:
            done.set()

    threading.Thread(target=flush, name="wb-recorder-termination", daemon=True).start()
    done.wait(timeout)


def _after_fork_in_child() -> None:
    _CONTROL.after_fork()
    termination.reset_after_fork()
    for rec in list(_LIVE):
        try:
            rec._after_fork()
        except Exception:  # noqa: BLE001 - a recorder must never break a fork
            pass


def _exit_reason(rec: Recorder) -> str | None:
    """Why this exit deserves a termination snapshot (``exit_snapshot``), or ``None``."""
    mode = rec.config.exit_snapshot
    error = getattr(sys, "last_value", None)  # set for an uncaught exception, before atexit runs
    if mode == "always":
        return f"exit: uncaught {type(error).__name__}" if error is not None else "exit"
    if mode == "on error" and error is not None:
        return f"exit: uncaught {type(error).__name__}"
    return None


def _close_all_at_exit() -> None:
    for rec in list(_LIVE):
        try:
            reason = _exit_reason(rec)
            if reason is not None:
                rec._termination(reason, None, rec.config.termination_timeout_s)
            rec.close(timeout=2.0)
        except Exception:  # noqa: BLE001
            pass


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)
