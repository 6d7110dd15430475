"""A termination snapshot on SIGTERM or SIGINT, then the process ends as it would have.

The handlers are installed once per process, by the first recorder created on the main
thread (Python lets only the main thread install them); a recorder made on another thread
says it could not (``stats()["signals"]``). Whatever handler was installed before is
kept and called after the snapshot, so the process ends exactly as without the recorder:

- an application's handler is called with the same arguments (chained, never replaced);
- ``SIGINT``'s default (``signal.default_int_handler``) raises ``KeyboardInterrupt`` as it
  would have;
- a default disposition (``SIG_DFL``) is restored and the signal raised again, so the
  process dies of it (exit status 128 + signal, no ``atexit``);
- an ignored signal (``SIG_IGN``) is left alone: no handler, no snapshot.

The snapshot is taken by a short-lived thread while the handler waits for it at most
``termination_timeout_s``: the signal may have interrupted the main thread inside the
recorder (holding a ring's lock), and a snapshot taken on that thread could then wait for
itself. Only the first termination signal snapshots; a second one goes straight to the
previous handler. An application that installs its own handler after the recorder replaces
this one (its choice): the exit snapshot (``exit_snapshot``) still covers an uncaught exception.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGINT)

# reason, the interrupted frame -> None: snapshots every recorder that handles signals (recorder.py).
Flush = Callable[[str, FrameType | None], None]

_lock = threading.Lock()
_previous: dict[int, Any] = {}
_flush: Flush | None = None
_before_death: Callable[[], None] | None = None
_flushed = False


def install(flush: Flush, before_death: Callable[[], None] | None = None) -> str:
    """Install the handlers (once per process); what a recorder's ``stats()["signals"]`` says.
    ``before_death`` runs when the signal is about to kill the process (no ``atexit`` then)."""
    global _flush, _before_death
    if _previous and signal.getsignal(signal.SIGTERM) is _handler:
        return "installed (by an earlier recorder): " + ", ".join(signal.Signals(s).name for s in _previous)
    if threading.current_thread() is not threading.main_thread():
        return (
            f"not installed: the recorder was created on thread {threading.current_thread().name!r}, and only the "
            "main thread can install signal handlers (create it on the main thread for a termination snapshot)"
        )
    with _lock:
        _flush, _before_death = flush, before_death
        notes = []
        for sig in SIGNALS:
            name = signal.Signals(sig).name
            current = signal.getsignal(sig)
            if current is _handler:
                notes.append(name)
                continue
            if current == signal.SIG_IGN:
                notes.append(f"{name} ignored by the application, left alone")
                continue
            _previous[sig] = current
            signal.signal(sig, _handler)
            notes.append(name)
    return "installed: " + ", ".join(notes) + " (the previous handlers run after the snapshot)"


def uninstall() -> None:
    """Put the previous handlers back where ours is still the one installed (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        for sig, previous in list(_previous.items()):
            if signal.getsignal(sig) is _handler:
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            del _previous[sig]


def reset_after_fork() -> None:
    """A forked child inherits the handlers and may snapshot once itself."""
    global _flushed
    _flushed = False


def _handler(signum: int, frame: FrameType | None) -> Any:
    global _flushed
    flush = _flush
    if not _flushed and flush is not None:
        _flushed = True
        try:
            flush(f"signal {signal.Signals(signum).name}", frame)
        except Exception:  # noqa: BLE001 - the process must end as it would have
            pass
    return _chain(signum, frame)


def _chain(signum: int, frame: FrameType | None) -> Any:
    previous = _previous.get(signum, signal.SIG_DFL)
    if previous == signal.SIG_IGN:
        return None
    if callable(previous):
        return previous(signum, frame)
    # SIG_DFL (or a handler not installed from Python): die of the signal, as without us.
    if _before_death is not None:
        try:
            _before_death()
        except Exception:  # noqa: BLE001
            pass
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)
    return None
