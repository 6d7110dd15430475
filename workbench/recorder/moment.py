"""Where the process is at one moment: the open step or request and its phase, the latest
closed span, and every thread's Python stack (innermost frame first, the loop's thread
marked). What a hang, termination or on-request snapshot states (``at_snapshot``).

Built on the thread that takes the snapshot (the watchdog, the control socket's, a
termination's), never on the workload's: ``sys._current_frames()`` and the span ring's
newest rows, read without a lock.
"""

from __future__ import annotations

import os
import socket
import sys
import sysconfig
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any

from msgspec import UNSET

from workbench.recorder.capture import NAME_UNIT, PHASE, REQUEST, SEQ_UNIT
from workbench.recorder.host import OWN_THREAD_PREFIX
from workbench.recorder.records import AtSnapshot, OpenPhase, OpenSpan, StackFrame, ThreadStack
from workbench.recorder.rowsearch import EndSearch, last_closed, phases_done

# Frames of the recorder itself (a thread caught inside rec.phase(), a signal handler) are left out.
_RECORDER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PATHS = sysconfig.get_paths()
_STDLIB = tuple(sorted({os.path.normpath(_PATHS[k]) + os.sep for k in ("stdlib", "platstdlib") if _PATHS.get(k)}))
_LOOP_CODES = 8  # distinct loop functions remembered (a process has one or two)


def is_stdlib(file: str) -> bool:
    """A frame of the standard library of this interpreter (not its site-packages)."""
    if file.startswith("<frozen"):
        return True
    return file.startswith(_STDLIB) and "-packages" + os.sep not in file


class WorkloadThreads:
    """Which thread runs the loop. Every 16th span's housekeeping (on the thread that closes
    it, work it does anyway) notes the code of the frame that holds the ``with`` and that
    thread's id; a snapshot marks the threads whose stack holds such a frame, else the thread
    that last closed a span, else the one that created the recorder."""

    def __init__(self) -> None:
        self.codes: dict[CodeType, None] = {}
        self.ident = threading.get_ident()
        self.closed_any = False

    def note(self, frame: FrameType | None) -> None:
        self.ident = threading.get_ident()
        self.closed_any = True
        if frame is None:
            return
        code = frame.f_code
        if code not in self.codes and len(self.codes) < _LOOP_CODES and not code.co_filename.startswith(_RECORDER_DIR):
            self.codes[code] = None


@dataclass
class _Walk:
    frames: list[StackFrame]
    truncated: bool
    holds_loop: bool


def _walk(top: FrameType | None, max_depth: int, loops: dict[CodeType, None]) -> _Walk:
    frames: list[StackFrame] = []
    truncated = holds_loop = False
    f = top
    while f is not None:
        code = f.f_code
        holds_loop = holds_loop or code in loops
        file = code.co_filename
        if not file.startswith(_RECORDER_DIR):
            if len(frames) < max_depth:
                stdlib = True if is_stdlib(file) else UNSET
                frames.append(StackFrame(function=code.co_name, file=file, line=f.f_lineno, stdlib=stdlib))
            else:
                truncated = True
        f = f.f_back
    return _Walk(frames, truncated, holds_loop)


def thread_stacks(
    max_depth: int, loops: WorkloadThreads, overrides: dict[int, FrameType] | None = None
) -> tuple[list[ThreadStack], str]:
    """Every thread's stack but the recorder's own, the loop's thread(s) first and marked;
    and how the loop's thread was told apart. ``overrides``: a thread's top frame to use
    instead of its current one (a signal handler passes the frame it interrupted)."""
    by_ident = {t.ident: t for t in threading.enumerate()}
    frames = sys._current_frames()
    walked: list[tuple[int, threading.Thread | None, _Walk]] = []
    try:
        for ident, top in frames.items():
            thread = by_ident.get(ident)
            if thread is not None and thread.name.startswith(OWN_THREAD_PREFIX):
                continue
            walked.append((ident, thread, _walk((overrides or {}).get(ident, top), max_depth, loops.codes)))
    finally:
        del frames  # frame references must not outlive the snapshot
    marked = {ident for ident, _, w in walked if w.holds_loop}
    if marked:
        names = ", ".join(sorted({c.co_name for c in loops.codes}))
        how = f"its stack holds the frame that opens and closes the spans ({names})"
    else:
        marked = {loops.ident}
        how = (
            "it closed the latest 16th span (no stack holds the loop's frame)"
            if loops.closed_any
            else "it created the recorder (no span had closed yet)"
        )
    out = []
    for ident, thread, w in sorted(walked, key=lambda x: (x[0] not in marked, x[1].name if x[1] else "")):
        out.append(
            ThreadStack(
                name=thread.name if thread is not None else f"thread {ident}",
                native_id=UNSET if thread is None or thread.native_id is None else thread.native_id,
                daemon=UNSET if thread is None else thread.daemon,
                workload=ident in marked,
                frames=w.frames,
                truncated=True if w.truncated else UNSET,
            )
        )
    return out, how


@dataclass
class Open:
    """The spans the workload has open, as the recording hooks leave them (``rec._opened``)."""

    span: Any  # the most recently opened span object (``_seq``, ``_start``, ``_kind``)
    phase: Any  # the most recently entered phase object (``_code``, ``_start``), or None


def state_at(
    *,
    reason: str,
    now_ns: float,
    epoch: Callable[[float], float],
    ring: Any,
    names: list[str],
    opened: Open,
    rank: int | None,
    max_depth: int,
    loops: WorkloadThreads,
    overrides: dict[int, FrameType] | None = None,
) -> AtSnapshot:
    """The process's state now (``at_snapshot``)."""
    threads, how = thread_stacks(max_depth, loops, overrides)
    fields: dict[str, Any] = {}
    span = opened.span
    start = getattr(span, "_start", None)
    if start is not None:
        base = span._seq
        if EndSearch(float(base + span._kind), float(start)).find(ring) is None:
            seq = base // SEQ_UNIT
            done = phases_done(ring, seq, start, names)
            fields["open_span"] = OpenSpan(
                kind="request" if span._kind == REQUEST else "step",
                seq=seq,
                opened_at=epoch(start),
                open_s=round((now_ns - start) / 1e9, 6),
                phases_done=[[name, round((b - a) / 1e6, 6)] for name, a, b in done],
            )
            fields.update(_open_phase(opened.phase, base, ring, names, now_ns, epoch))
    closed = last_closed(ring)
    if closed is not None:
        fields["last_closed_seq"], fields["last_closed_at"] = closed[0], epoch(closed[1])
    return AtSnapshot(
        reason=reason,
        at=epoch(now_ns),
        rank=UNSET if rank is None else rank,
        host=socket.gethostname(),
        pid=os.getpid(),
        workload_how=how,
        threads=threads,
        **fields,
    )


def _open_phase(
    phase: Any, base: int, ring: Any, names: list[str], now_ns: float, epoch: Callable[[float], float]
) -> dict[str, Any]:
    """The open span's open phase: the most recently entered phase, if it belongs to that span
    and has not ended (a phase entered inside it and ended since hides an outer one: said)."""
    start = getattr(phase, "_start", None)
    code = getattr(phase, "_code", None)
    if start is None or code is None or code // SEQ_UNIT != base // SEQ_UNIT:
        return {"open_phase_note": "no phase of the open span has been entered"}
    name_id = (code % SEQ_UNIT) // NAME_UNIT
    name = names[name_id] if name_id < len(names) else "other"
    if EndSearch(float(code + PHASE), float(start)).find(ring) is not None:
        return {
            "open_phase_note": f"the latest phase entered ({name}) has ended; an outer phase, if one is open, "
            "is not known"
        }
    return {"open_phase": OpenPhase(name=name, opened_at=epoch(start), open_s=round((now_ns - start) / 1e9, 6))}
