"""What an execution keeps, and where: the executor's record of one execution (its plan, its
state, each finished run and its capture), kept in a store.

The executor (``execute.py``) runs the arms where it is, on the machine with the GPU; every
record it keeps goes through a :class:`Ledger`. :class:`StoreLedger` keeps them in a store
(through ``store.rerun``'s functions); the use cases expose each of its
methods (``usecases/reruns.py``), and ``usecases.reruns.WorkbenchLedger`` is the ledger over
any transport, so an execution typed on a GPU node records on the team's server exactly as it
would on a local store, and resumes from the server's record.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from store.api import CaptureInfo
from workbench.errors import BadInput, UsageError
from workbench.importers.native import IMPORTER, read_capture
from workbench.ingest import check_text
from workbench.inputs import digest_file
from workbench.rerun.plan import Plan
from workbench.vocabulary import Record

if TYPE_CHECKING:
    from store.api import Store


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ExecutionState(Record, frozen=True, kw_only=True):
    """One execution as the executor needs it: who runs it (host, pid), its status, what it
    runs (the schedule), where its files are, and the environment of its first preflight."""

    id: int
    plan_id: int
    status: str
    host: str
    pid: int
    schedule: list[tuple[int, str]]
    workdir: str
    first_environment: dict[str, Any] | None


class KeptRun(Record, frozen=True, kw_only=True):
    """A run of an execution as kept (its outcome: ``ok``, ``failed`` or ``interrupted``)."""

    round: int
    arm: str
    slot: int
    status: str
    reason: str = ""
    argv: list[str] = []
    started_at: str = ""
    ended_at: str = ""
    wall_s: float | None = None
    exit_status: int | None = None
    stderr_tail: str = ""
    capture_path: str = ""
    capture_sha256: str = ""
    run_id: int | None = None
    statistic: float | None = None


class KeptCapture(Record, frozen=True, kw_only=True):
    """A run's capture as kept: the run it is, and the capture's SHA-256."""

    run_id: int
    sha256: str


class Ledger(Protocol):
    """Where an execution's records are kept (a store, or a server's store)."""

    url: str  # the store's (or the server's) URL: an execution's files go beside it (store.engine.work_dir)

    def plan(self, ref: str | int) -> tuple[int, str, Plan]: ...

    def executions(self, plan_id: int) -> list[ExecutionState]: ...

    def begin(
        self,
        plan_id: int,
        *,
        abandon: list[int],
        preflight: dict[str, Any],
        schedule: list[tuple[int, str]],
        host: str,
        pid: int,
    ) -> int: ...

    def set_workdir(self, execution_id: int, workdir: str) -> None: ...

    def take_over(self, execution_id: int, *, preflight: dict[str, Any], host: str, pid: int) -> None: ...

    def execution(self, execution_id: int) -> tuple[ExecutionState, list[KeptRun]]: ...

    def end(self, execution_id: int, status: str) -> None: ...

    def keep_run(self, execution_id: int, run: KeptRun) -> None: ...

    def keep_capture(self, execution_id: int, slot: int, capture: Path, source: str) -> KeptCapture: ...


def _state(row: Any) -> ExecutionState:
    preflights = list(row.preflights or [])
    first = preflights[0].get("environment") if preflights and isinstance(preflights[0], dict) else None
    return ExecutionState(
        id=int(row.id),
        plan_id=int(row.plan_id),
        status=row.status,
        host=row.host or "",
        pid=int(row.pid or 0),
        schedule=[(int(r), str(a)) for r, a in (row.schedule or [])],
        workdir=row.workdir or "",
        first_environment=first if isinstance(first, dict) else None,
    )


class StoreLedger:
    """An execution's records in a store (``store.rerun``'s tables)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.url = store.url

    def plan(self, ref: str | int) -> tuple[int, str, Plan]:
        from store.rerun import load_plan  # SQLModel, heavy

        row = load_plan(self.store, ref)
        return int(row.id), row.digest, Plan.from_json(row.body)  # type: ignore[arg-type]

    def executions(self, plan_id: int) -> list[ExecutionState]:
        from store.rerun import executions  # SQLModel, heavy

        return [_state(e) for e in executions(self.store, plan_id)]

    def begin(
        self,
        plan_id: int,
        *,
        abandon: list[int],
        preflight: dict[str, Any],
        schedule: list[tuple[int, str]],
        host: str,
        pid: int,
    ) -> int:
        """A new execution of the plan (the unfinished ones named are abandoned); its id."""
        from store.rerun import begin_execution  # SQLModel, heavy

        return begin_execution(
            self.store,
            plan_id,
            abandon=abandon,
            preflight=preflight,
            schedule=[[r, arm] for r, arm in schedule],
            host=host,
            pid=pid,
            now=now_iso(),
        )

    def set_workdir(self, execution_id: int, workdir: str) -> None:
        from store.rerun import update_execution  # SQLModel, heavy

        with _known_execution():
            update_execution(self.store, execution_id, workdir=workdir)

    def take_over(self, execution_id: int, *, preflight: dict[str, Any], host: str, pid: int) -> None:
        """The unfinished execution continues on ``host`` (its preflight kept with the others)."""
        from store.rerun import RUNNING, update_execution  # SQLModel, heavy

        with _known_execution():
            update_execution(self.store, execution_id, status=RUNNING, pid=pid, host=host, add_preflight=preflight)

    def execution(self, execution_id: int) -> tuple[ExecutionState, list[KeptRun]]:
        from store.rerun import execution_runs  # SQLModel, heavy

        with _known_execution():
            row, kept = execution_runs(self.store, execution_id)
        runs = [
            KeptRun(round=r.round, arm=r.arm, slot=r.slot, status=r.status, statistic=r.statistic, run_id=r.run_id)
            for r in kept
        ]
        return _state(row), runs

    def end(self, execution_id: int, status: str) -> None:
        from store.rerun import update_execution  # SQLModel, heavy

        with _known_execution():
            update_execution(self.store, execution_id, status=status, ended_at=now_iso())

    def keep_run(self, execution_id: int, run: KeptRun) -> None:
        from store.rerun import add_run  # SQLModel, heavy

        with _known_execution():
            add_run(self.store, execution_id, run.to_json())

    def keep_capture(self, execution_id: int, slot: int, capture: Path, source: str) -> KeptCapture:
        """Read the run's capture (the native format: a run's ``WB_CAPTURE_OUT``) and keep it, as
        the run of this slot; a byte-identical capture already stored is that run. ``source``: the
        file's path where the run wrote it (``capture`` may be a server's copy of it)."""
        from store.rerun import get_execution  # SQLModel, heavy

        with _known_execution():
            row = get_execution(self.store, execution_id)
        plan_id, slots = int(row.plan_id), [(int(r), str(a)) for r, a in row.schedule]
        _plan_id, digest, plan = self.plan(plan_id)
        if not 0 <= slot < len(slots):
            raise BadInput(source, f"execution {execution_id} has no slot {slot}")
        round_, arm = slots[slot]
        sha, size, _identity = digest_file(capture)
        known = self.store.find_capture(sha)
        if known is not None:  # byte-identical capture already stored: link its run
            ids = self.store.capture_runs(int(known.id))
            if ids:
                return KeptCapture(run_id=ids[0], sha256=sha)
        try:
            record = read_capture(capture)
        except BadInput as exc:
            raise BadInput(source, exc.detail, where=exc.where) from None
        record.meta["capture_label"] = record.label
        record.meta["rerun"] = {
            "plan": plan.name,
            "plan_digest": digest,
            "execution": execution_id,
            "round": round_,
            "arm": arm,
            "slot": slot,
        }
        record.label = f"{plan.name} e{execution_id} r{round_} {arm}"
        record.sources = [Path(source)]
        check_text(record)
        info = CaptureInfo(
            path=Path(source),
            sha256=sha,
            size=size,
            format=IMPORTER.name,
            importer=IMPORTER.name,
            importer_version=IMPORTER.version,
        )
        return KeptCapture(run_id=self.store.add_import([info], [record], origin="rerun")[0], sha256=sha)


@contextmanager
def _known_execution() -> Iterator[None]:
    """An execution id the store does not hold is the caller's mistake: a usage error."""
    from store.rerun import ExecutionNotFound  # SQLModel, heavy

    try:
        yield
    except ExecutionNotFound as exc:
        raise UsageError(str(exc)) from None
