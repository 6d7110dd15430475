"""What worker threads tell the panes, as Textual messages (posted with ``post_message``, which is
thread-safe; a pane handles ``on_<message name>``). One class a kind of event, typed, rather than
one event with a ``kind`` string."""

from __future__ import annotations

from collections.abc import Mapping

from textual.message import Message


class RunBegan(Message):
    """The executor opened an execution: ``total`` runs, ``done`` of them already (a resume)."""

    def __init__(self, execution: int, total: int, done: int) -> None:
        super().__init__()
        self.execution, self.total, self.done = execution, total, done


class RunStarted(Message):
    """One run started: its slot, round (0: warm-up) and arm."""

    def __init__(self, index: int, round_: int, arm: str) -> None:
        super().__init__()
        self.index, self.round, self.arm = index, round_, arm


class RunFinished(Message):
    """One run finished: its slot, status, and the live ratios after the complete rounds so far
    (``rounds``, ``b_over_a``, ``aprime_over_a``; empty before the first complete round)."""

    def __init__(self, index: int, status: str, live: Mapping[str, float]) -> None:
        super().__init__()
        self.index, self.status, self.live = index, status, dict(live)


class RunEnded(Message):
    """The execution stopped: its status (done, interrupted, ...)."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status
