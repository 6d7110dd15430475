"""Execution: run a plan's arms round by round, one process at a time, keeping every outcome.

Each run gets ``WB_CAPTURE_OUT`` (where to write its native capture) and
``WB_RERUN_PLAN``, ``WB_RERUN_ROUND``, ``WB_RERUN_ARM``, ``WB_RERUN_SLOT`` in its
environment; it runs in its own process group so a Ctrl-C or a timeout can stop all
of it. A run is ``ok`` only when it exited 0 and wrote a valid capture of the plan's
lens with the plan's metric; otherwise it is ``failed`` with the reason (recorded, not
dropped). Each finished run is written to the store as soon as it ends, so a Ctrl-C
(or SIGTERM, or a crash) loses at most the run in flight, which ``resume`` runs again.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.engine import work_dir
from store.records import RunRecord
from workbench.errors import EXIT_REFUSED, BadInput, UsageError, WbError
from workbench.importers.native import read_capture
from workbench.ingest import check_samples
from workbench.rerun import strays
from workbench.rerun.ledger import ExecutionState, KeptRun, Ledger, StoreLedger, now_iso
from workbench.rerun.plan import Environment, Plan, schedule, warmup_slots
from workbench.rerun.preflight import Preflight, compare_environments, run_preflight
from workbench.rerun.report import live_effect, run_statistic, sequential_look

if TYPE_CHECKING:
    from store.api import Store

STDERR_TAIL_CHARS = 2000
KILL_GRACE_S = 5.0
# Each run's stdout and stderr are kept up to this many bytes each (docs/verify.md); the
# rest is counted, not written: a chatty or runaway benchmark cannot fill the disk.
OUTPUT_CAP_BYTES = 16 << 20
_DRAIN_S = 5.0  # after the arm and its strays are gone, how long a pipe may stay open


class Blocked(WbError):
    """Preflight found a missing or changed artifact, or a changed environment."""

    exit_code = EXIT_REFUSED

    def __init__(self, message: str, preflight: "Preflight") -> None:
        super().__init__(message)
        self.preflight = preflight


class Observer:
    """What the execution reports as it goes (the CLI draws a progress display)."""

    def begin(self, plan: Plan, execution_id: int, total: int, done: int) -> None: ...

    def run_started(self, index: int, round_: int, arm: str, argv: list[str]) -> None: ...

    def run_finished(self, outcome: "Outcome", live: dict[str, float]) -> None: ...

    def end(self, status: str) -> None: ...

    def should_stop(self) -> bool:
        """Asked between runs: True stops the execution there (finished runs are kept)."""
        return False


@dataclass
class Outcome:
    round: int
    arm: str
    slot: int
    status: str
    reason: str = ""
    wall_s: float | None = None
    exit_status: int | None = None
    statistic: float | None = None
    run_id: int | None = None
    record: RunRecord | None = None  # the capture as read, until it is stored
    capture_sha256: str | None = None


def split_round(slots: list[tuple[int, str]], finished: Collection[int]) -> list[int]:
    """The finished slots of a round an interruption split (some of its runs finished, some
    not): resume runs them again, so every round's runs come from one stretch of time. A
    round's three runs are a block (docs/methods.md section 1); a round half before and
    half after a pause (minutes, a reboot) would pair runs of two machine states."""
    pending = [i for i in range(len(slots)) if i not in finished]
    if not pending or not finished:
        return []
    resume_round = slots[pending[0]][0]
    if resume_round == 0:  # warm-up runs are not analysed
        return []
    return [i for i in finished if slots[i][0] == resume_round]


def default_workdir(plan: Plan, execution_id: int, store_url: str) -> Path:
    """An execution's run files, beside the store that records it (store.engine.work_dir)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", plan.name)[:60] or "plan"
    return work_dir(store_url) / "rerun" / f"{safe}-e{execution_id}"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _still_running(execution: ExecutionState) -> bool:
    """True when the execution's own process is alive (or cannot be checked: another host)."""
    from store.rerun import RUNNING  # the store's rerun tables: SQLModel, heavy

    if execution.status != RUNNING:
        return False
    if execution.host != socket.gethostname():
        return True
    return execution.pid != os.getpid() and _pid_alive(execution.pid)


def check_preflight(plan: Plan, expected: Environment | None = None, nvml: Any = None) -> Preflight:
    pf = run_preflight(plan, expected=expected, nvml=nvml)
    if pf.blockers:
        lines = "; ".join(pf.blockers)
        raise Blocked(
            f"plan {plan.name!r} blocked by preflight: {lines}. A changed environment is a new experiment: "
            "make a new plan under a new name (wb rerun plan ... --name NEW)",
            pf,
        )
    return pf


class Executor:
    """Runs (or resumes) one execution of a plan, here, keeping its records in ``ledger`` (a
    store's, or a server's through the use cases: ``rerun/ledger.py``)."""

    def __init__(
        self,
        ledger: "Ledger | Store",
        plan_ref: str | int,
        *,
        observer: Observer | None = None,
        workdir: Path | None = None,
        confirmed: bool = False,
        nvml: Any = None,
    ) -> None:
        self.ledger: Ledger = ledger if hasattr(ledger, "keep_capture") else StoreLedger(ledger)  # type: ignore[arg-type]
        self.observer = observer or Observer()
        self.workdir_root = workdir
        self.nvml = nvml
        self.plan_id, self.plan_digest, self.plan = self.ledger.plan(plan_ref)
        if self.plan.origin != "user" and not confirmed:
            raise WbError(
                f"plan {self.plan.name!r} came from {self.plan.origin}; review its commands "
                f"(wb rerun run {self.plan.name} --dry-run) and confirm with --yes",
                exit_code=EXIT_REFUSED,
            )

    # -- starting ---------------------------------------------------------------------

    def start(self, *, new: bool = False) -> int:
        """Preflight, then create a new execution; returns its id (nothing is run yet)."""
        from store.rerun import INTERRUPTED, RUNNING  # SQLModel, heavy

        unfinished = [e for e in self.ledger.executions(self.plan_id) if e.status in (RUNNING, INTERRUPTED)]
        for e in unfinished:
            if _still_running(e):
                raise WbError(
                    f"plan {self.plan.name!r} is already running (execution {e.id}, pid {e.pid} on {e.host}); runs "
                    f"never overlap",
                    exit_code=EXIT_REFUSED,
                )
            if not new:
                raise UsageError(
                    f"plan {self.plan.name!r} has an unfinished execution {e.id}: continue it with "
                    f"'wb rerun resume {self.plan.name}', or start over with 'wb rerun run {self.plan.name} --new'"
                )
        pf = check_preflight(self.plan, nvml=self.nvml)
        execution_id = self.ledger.begin(
            self.plan_id,
            abandon=[e.id for e in unfinished],
            preflight=pf.to_json(),
            schedule=warmup_slots(self.plan) + schedule(self.plan),
            host=socket.gethostname(),
            pid=os.getpid(),
        )
        workdir = (
            (self.workdir_root / f"e{execution_id}")
            if self.workdir_root
            else default_workdir(self.plan, execution_id, self.ledger.url)
        )
        self.ledger.set_workdir(execution_id, str(workdir))
        return execution_id

    def reopen(self) -> int:
        """Preflight again and take over the latest unfinished execution; returns its id."""
        from store.rerun import INTERRUPTED, RUNNING  # SQLModel, heavy

        unfinished = [e for e in self.ledger.executions(self.plan_id) if e.status in (RUNNING, INTERRUPTED)]
        if not unfinished:
            raise UsageError(
                f"plan {self.plan.name!r} has no unfinished execution to resume (start one with 'wb rerun run "
                f"{self.plan.name}')"
            )
        e = unfinished[-1]
        if _still_running(e):
            raise WbError(
                f"execution {e.id} of plan {self.plan.name!r} is still running (pid {e.pid} on {e.host}); runs never "
                f"overlap",
                exit_code=EXIT_REFUSED,
            )
        # Against the plan, and against the machine this execution started on.
        pf = check_preflight(self.plan, nvml=self.nvml)
        first_env = Environment.from_json(e.first_environment)
        if first_env.recorded:
            changes, _ = compare_environments(first_env, pf.environment)
            if changes:
                pf.environment_changes += [f"since execution {e.id} started: {c}" for c in changes]
                raise Blocked(f"execution {e.id} cannot resume here: {'; '.join(changes)}", pf)
        self.ledger.take_over(e.id, preflight=pf.to_json(), host=socket.gethostname(), pid=os.getpid())
        return e.id

    def resume_or_start(self) -> int:
        """The plan's unfinished execution taken over (``reopen``), or else a new one (``start``)."""
        from store.rerun import INTERRUPTED, RUNNING  # SQLModel, heavy

        if any(e.status in (RUNNING, INTERRUPTED) for e in self.ledger.executions(self.plan_id)):
            return self.reopen()
        return self.start()

    # -- running ----------------------------------------------------------------------

    def run(self, execution_id: int) -> str:
        """Run every slot not yet finished; returns the final status. Ctrl-C: status
        ``interrupted`` is recorded and KeyboardInterrupt propagates."""
        from store.rerun import COMPLETE, INTERRUPTED, RUN_FAILED, RUN_OK  # SQLModel, heavy

        state, kept = self.ledger.execution(execution_id)
        slots = state.schedule
        workdir = Path(state.workdir)
        finished = {r.slot: r for r in kept if r.status in (RUN_OK, RUN_FAILED)}
        for index in split_round(slots, finished):
            del finished[index]  # run again: the round is measured whole after the resume
        workdir.mkdir(parents=True, exist_ok=True)
        history: list[Outcome] = [
            Outcome(r.round, r.arm, r.slot, r.status, statistic=r.statistic, run_id=r.run_id) for r in finished.values()
        ]
        self.observer.begin(self.plan, execution_id, len(slots), len(finished))

        # A polite kill is a Ctrl-C. Signal handlers can only be set from the main
        # thread; the TUI runs executions in a worker thread and stops them instead
        # through the observer's should_stop().
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGTERM) if main_thread else None
        if main_thread:
            signal.signal(signal.SIGTERM, _raise_interrupt)
        should_stop = getattr(self.observer, "should_stop", None) or (lambda: False)
        strays.become_subreaper()  # what an arm's processes orphan comes to wb, to be found and killed
        status = INTERRUPTED
        try:
            for index, (round_, arm) in enumerate(slots):
                if index in finished:
                    continue
                if should_stop():  # cancelled between runs: finished runs are kept
                    break
                outcome = self._run_one(execution_id, workdir, index, round_, arm)
                history.append(outcome)
                self.observer.run_finished(outcome, live_effect(history))
                look = sequential_look(self.plan, history)
                if look is not None and look.decided:  # the data decided: the rounds left are not needed
                    status = COMPLETE
                    break
            else:
                status = COMPLETE
        finally:
            self.ledger.end(execution_id, status)
            if main_thread:
                signal.signal(signal.SIGTERM, previous)
            self.observer.end(status)
        return status

    def _env(self, index: int, round_: int, arm: str, capture: Path, extra: dict[str, str]) -> dict[str, str]:
        env = dict(os.environ)
        env.update(extra)
        env.update(
            WB_CAPTURE_OUT=str(capture),
            WB_RERUN_PLAN=self.plan.name,
            WB_RERUN_ROUND=str(round_),
            WB_RERUN_ARM=arm,
            WB_RERUN_SLOT=str(index),
        )
        return env

    def _run_one(self, execution_id: int, workdir: Path, index: int, round_: int, arm: str) -> Outcome:
        from store.rerun import RUN_FAILED, RUN_INTERRUPTED, RUN_OK  # SQLModel, heavy

        cmd = self.plan.command(arm)
        arm_tag = arm.replace("'", "prime")
        tag = f"r{round_:03d}-{arm_tag}-s{index:03d}"
        capture = workdir / f"{tag}.capture.json"
        stdout_path, stderr_path = workdir / f"{tag}.stdout", workdir / f"{tag}.stderr"
        for stale in (capture, Path(f"{capture}.partial")):
            stale.unlink(missing_ok=True)
        self.observer.run_started(index, round_, arm, list(cmd.argv))
        started = now_iso()
        t0 = time.monotonic()
        outcome = Outcome(round_, arm, index, RUN_FAILED)
        token, since = strays.new_token(), strays.boot_ticks_now()
        env = {**self._env(index, round_, arm, capture, cmd.env), strays.TOKEN_VARIABLE: token}
        left_behind = ""
        with _CappedOutput(stdout_path) as out, _CappedOutput(stderr_path) as err:
            try:
                proc = subprocess.Popen(
                    list(cmd.argv),
                    cwd=cmd.cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out.write_end,
                    stderr=err.write_end,
                    start_new_session=True,
                )
            except OSError as exc:
                outcome.reason = f"cannot start {cmd.argv[0]!r}: {exc.strerror or exc}"
            else:
                out.started()
                err.started()
                try:
                    outcome.exit_status = proc.wait(timeout=self.plan.timeout_s)
                except subprocess.TimeoutExpired:
                    stop_group(proc)
                    outcome.exit_status = proc.returncode
                    outcome.reason = f"timed out after {self.plan.timeout_s:g} s (killed)"
                except KeyboardInterrupt:
                    stop_group(proc)
                    strays.sweep(proc.pid, token, since)
                    outcome.status, outcome.exit_status = RUN_INTERRUPTED, proc.returncode
                    outcome.reason = "interrupted (Ctrl-C or SIGTERM); resume runs it again"
                    outcome.wall_s = time.monotonic() - t0
                    out.close()
                    err.close()
                    self._record(execution_id, outcome, started, cmd.argv, stderr_path, capture)
                    raise
                outcome.wall_s = time.monotonic() - t0
                # Before the next arm: nothing this one started may still run (or hold its pipes).
                left_behind = strays.sweep(proc.pid, token, since)
        if outcome.wall_s is None:
            outcome.wall_s = time.monotonic() - t0
        if not outcome.reason:
            self._check(outcome, capture)
        if left_behind:  # kept in the run's record whatever its status
            outcome.reason = f"{outcome.reason}; {left_behind}" if outcome.reason else left_behind
        if outcome.status == RUN_OK:
            outcome.run_id = self._import(execution_id, outcome, capture)
        self._record(execution_id, outcome, started, cmd.argv, stderr_path, capture)
        return outcome

    def _check(self, outcome: Outcome, capture: Path) -> None:
        """Decide ok / failed from the exit status and the capture."""
        from store.rerun import RUN_OK  # SQLModel, heavy

        code = outcome.exit_status
        if code is not None and code < 0:
            outcome.reason = f"killed by signal {-code} ({_signal_name(-code)})"
            return
        if code:
            outcome.reason = f"exit status {code}"
            return
        if not capture.is_file():
            outcome.reason = "exited 0 but wrote no capture to $WB_CAPTURE_OUT"
            return
        try:
            record = read_capture(capture)
        except BadInput as exc:
            outcome.reason = f"invalid capture: {exc.message}"
            return
        if record.lens != self.plan.lens:
            outcome.reason = f"invalid capture: lens {record.lens!r}, the plan's lens is {self.plan.lens!r}"
            return
        check_samples(record)  # what a sample means, as at every import
        value, why = run_statistic(record, self.plan)
        if value is None:
            outcome.reason = f"invalid capture: {why}"
            return
        outcome.statistic = value
        outcome.status = RUN_OK
        outcome.record = record

    def _import(self, execution_id: int, outcome: Outcome, capture: Path) -> int:
        """Keep the run's capture (in the ledger's store); returns the run id."""
        outcome.record = None  # read again where it is kept (a server reads its own copy)
        kept = self.ledger.keep_capture(execution_id, outcome.slot, capture, str(capture))
        outcome.capture_sha256 = kept.sha256
        return kept.run_id

    def _record(
        self, execution_id: int, outcome: Outcome, started: str, argv: tuple[str, ...], stderr_path: Path, capture: Path
    ) -> None:
        try:
            with open(stderr_path, "rb") as f:
                f.seek(max(0, os.path.getsize(stderr_path) - STDERR_TAIL_CHARS))
                tail = f.read().decode("utf-8", errors="replace")
        except OSError:
            tail = ""
        self.ledger.keep_run(
            execution_id,
            KeptRun(
                round=outcome.round,
                arm=outcome.arm,
                slot=outcome.slot,
                status=outcome.status,
                reason=outcome.reason,
                argv=list(argv),
                started_at=started,
                ended_at=now_iso(),
                wall_s=outcome.wall_s,
                exit_status=outcome.exit_status,
                stderr_tail=tail,
                capture_path=str(capture) if capture.is_file() else "",
                capture_sha256=outcome.capture_sha256 or "",
                run_id=outcome.run_id,
                statistic=outcome.statistic,
            ),
        )


class _CappedOutput:
    """A pipe for one of a run's streams, copied to ``path`` by a thread up to
    :data:`OUTPUT_CAP_BYTES`; what is over the cap is counted and said at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close()
        read_end, self.write_end = os.pipe()
        self._read = os.fdopen(read_end, "rb", buffering=0)
        self._thread = threading.Thread(target=self._copy, name=f"wb-rerun-{path.name}", daemon=True)
        self.dropped = 0

    def __enter__(self) -> "_CappedOutput":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def started(self) -> None:
        """The child holds the write end now: ours is closed, so EOF comes when it (and its strays) are gone."""
        os.close(self.write_end)
        self.write_end = -1
        self._thread.start()

    def _copy(self) -> None:
        kept = 0
        try:
            while block := self._read.read(1 << 16):
                room = OUTPUT_CAP_BYTES - kept
                if room > 0:
                    self._file.write(block[:room])
                    kept += min(room, len(block))
                self.dropped += max(0, len(block) - max(room, 0))
        except (OSError, ValueError):  # closed under us after the drain timeout
            pass

    def close(self) -> None:
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1
        if self._thread.is_alive() or self._thread.ident is not None:
            self._thread.join(_DRAIN_S)  # an escaped process may keep the pipe open: not waited for
        if not self._file.closed:
            if self.dropped:
                self._file.write(
                    f"\n[wb: {self.dropped:,} more bytes not kept: each run's output is capped at "
                    f"{OUTPUT_CAP_BYTES >> 20} MiB per stream]\n".encode()
                )
            self._file.close()
        if not self._thread.is_alive():
            self._read.close()


def _raise_interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return "unknown signal"


def stop_group(proc: subprocess.Popen) -> None:
    """Stop a run and everything it started: SIGTERM to its group, SIGKILL after a grace."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
