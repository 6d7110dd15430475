"""What ``wb diagnose`` says of hung ranks (``hangs`` in ``--json``): typed records
(``workbench.diagnostics.hangs`` builds them from the recorder's snapshots)."""

from __future__ import annotations

from typing import Literal

from workbench.vocabulary import Record

HangVerdict = Literal["named", "undecided", "one process"]


class RankHang(Record, frozen=True, kw_only=True, omit_defaults=True):
    """Where one rank (or process) was at its latest hang, termination or on-request snapshot.
    Times are epoch seconds on that rank's own clock; ``frame`` is the innermost frame of the
    loop's thread outside the standard library (``function (file:line)``)."""

    process: str  # "rank 3", or "pid 4242 on node-a" without a rank
    rank: int | None = None
    host: str
    pid: int
    file: str
    snapshot_reason: str
    at: float
    step: int | None = None  # the open step or request (its sequence number), if one was open
    open_s: float | None = None
    phase: str | None = None  # its open phase
    phase_open_s: float | None = None
    phases_done: tuple[str, ...] = ()
    last_closed_step: int | None = None
    frame: str | None = None
    last_progress_at: float | None = None
    hang_ended_after_s: float | None = None  # a later "hang ended" snapshot: the hang's length


class HangsRecord(Record, frozen=True, kw_only=True, omit_defaults=True):
    """Which rank stopped making progress first (``named``, decided by its place in the loop
    or, between ranks at the same place, by the clocks), or ``undecided`` with what is
    missing; where each rank is; which ranks are further along and stopped too (waiting)."""

    verdict: HangVerdict
    first_stopped: str | None = None
    first_stopped_rank: int | None = None
    decided_by: str | None = None  # "position in the loop" | "clocks"
    waiting: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    reason: str
    ranks: tuple[RankHang, ...]
    notes: tuple[str, ...] = ()
