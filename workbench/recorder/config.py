"""The recorder's configuration: fixed at construction, never changed while running."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from msgspec import UNSET

from workbench.recorder.records import BudgetInfo, ConfigInfo
from workbench.recorder.trigger import HangRule, TriggerRule

# Set to off / 0 / false / no / disabled to turn every recorder in the process into a no-op.
DISABLE_ENV = "WB_RECORDER"
# Where snapshots go when no out_dir is given.
DIR_ENV = "WB_RECORDER_DIR"
# A store URL (as for ``wb --store``): snapshots are imported there as well.
STORE_ENV = "WB_STORE"
DEFAULT_DIR = "wb-snapshots"
# Seconds a step or request may stay open before the watchdog snapshots it as a hang, or
# "off" (read when ``hang_after_s`` is not given).
HANG_ENV = "WB_RECORDER_HANG_AFTER_S"
# "off": no SIGTERM/SIGINT handlers (no termination snapshot on a signal).
SIGNALS_ENV = "WB_RECORDER_SIGNALS"
# "off": no control socket (``wb snapshot PID`` cannot reach this process).
CONTROL_ENV = "WB_RECORDER_CONTROL"
EXIT_SNAPSHOTS = ("on error", "always", "never")

_OFF = {"0", "off", "false", "no", "disabled", "disable"}


def disabled_by_env(environ: dict[str, str] | None = None, name: str = DISABLE_ENV) -> bool:
    value = (environ if environ is not None else os.environ).get(name, "")
    return value.strip().lower() in _OFF


@dataclass(frozen=True)
class Budget:
    """Retention for one stream: at most ``max_bytes`` and nothing older than ``max_age_s``.

    ``segment_rows`` rows form a segment (capped at 1/16 of the budget); the active
    segment is also sealed every ``seal_every_s`` so the age budget has something to trim.
    """

    max_bytes: int
    max_age_s: float | None = 600.0
    segment_rows: int = 4096
    seal_every_s: float | None = None

    def __post_init__(self) -> None:
        if self.max_bytes < 4096:
            raise ValueError("max_bytes must be at least 4 KiB")
        if self.max_age_s is not None and self.max_age_s <= 0:
            raise ValueError("max_age_s must be positive (or None for no age limit)")

    @property
    def seal_interval_s(self) -> float | None:
        if self.seal_every_s is not None:
            return self.seal_every_s
        return None if self.max_age_s is None else min(5.0, self.max_age_s / 8)

    def info(self) -> BudgetInfo:
        return BudgetInfo(
            max_bytes=self.max_bytes,
            segment_rows=self.segment_rows,
            max_age_s=UNSET if self.max_age_s is None else self.max_age_s,
        )


@dataclass(frozen=True)
class RecorderConfig:
    """What a recorder keeps, when it snapshots and where snapshots go.

    ``lens`` decides what a sample is: a step (``training``) or a request
    (``inference``). ``dimensions`` are declared as-is into every snapshot (a must-match
    dimension left out is *unknown* and ``wb compare`` will refuse the pair).
    """

    lens: str = "training"
    label: str | None = None
    dimensions: dict[str, object] = field(default_factory=dict)  # plain JSON values
    rank: int | None = None
    out_dir: Path | None = None
    store_url: str | None = None
    server: str | None = None  # a wb serve URL (or WB_SERVER): snapshots are uploaded there too (recorder/upload.py)
    spans: Budget = Budget(max_bytes=16 << 20)
    gpu: Budget = Budget(max_bytes=4 << 20)
    gpu_interval_s: float | None = 0.5
    # Python stacks of the workload's threads, sampled this many times a second (None: off).
    stack_hz: float | None = 100.0
    stacks: Budget = Budget(max_bytes=4 << 20)
    max_frames: int = 4096
    max_stacks: int = 2048
    max_depth: int = 48
    # Process and per-thread CPU, RSS, faults, context switches, every this many s (None: off).
    host_interval_s: float | None = 0.25
    cpu: Budget = Budget(max_bytes=2 << 20)
    # Garbage-collector pauses (gc.callbacks); gc_pauses=False leaves gc.callbacks alone.
    gc_pauses: bool = True
    gc: Budget = Budget(max_bytes=1 << 20)
    trigger: TriggerRule | None = TriggerRule()
    # A triggered snapshot keeps only the last this-many seconds (None: all retained).
    incident_window_s: float | None = None
    window_kind: str = "steady"
    compress: bool = False
    max_names: int = 1024
    max_events: int = 1024
    # The hang watchdog (watchdog.py): a step or request open longer than ``hang_after_s``
    # is snapshotted while it is still open. None: WB_RECORDER_HANG_AFTER_S, else derived
    # from the history (HangRule: 10x the recent median, at least 60 s).
    hang_after_s: float | None = None
    watch_hangs: bool = True
    max_hangs: int = 5  # hangs snapshotted in the process's life (two snapshots each)
    # SIGTERM/SIGINT write a termination snapshot, then the previous handler runs.
    handle_signals: bool = True
    termination_timeout_s: float = 5.0
    # At interpreter exit: a termination snapshot "on error" (an uncaught exception), "always" or "never".
    exit_snapshot: str = "on error"
    # A Unix socket in the user's runtime directory answers ``wb snapshot PID`` (snapshot_socket.py).
    control: bool = True

    def __post_init__(self) -> None:
        if self.lens not in ("training", "inference"):
            raise ValueError(f"lens must be 'training' or 'inference', not {self.lens!r}")
        if self.window_kind not in ("steady", "startup", "checkpointing", "mixed"):
            raise ValueError(f"unknown window kind {self.window_kind!r}")
        if self.incident_window_s is not None and self.incident_window_s <= 0:
            raise ValueError("incident_window_s must be positive (or None for all retained)")
        try:  # fail here, not in every snapshot later
            json.dumps(self.dimensions, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"dimensions must be plain JSON values (no NaN): {exc}") from None
        if not 2 <= self.max_names <= 1024:
            raise ValueError("max_names must be between 2 and 1024 (10 bits of a row code)")
        if self.gpu_interval_s is not None and self.gpu_interval_s <= 0:
            raise ValueError("gpu_interval_s must be positive (or None for no GPU sampling)")
        if self.stack_hz is not None and not 0 < self.stack_hz <= 1000:
            raise ValueError("stack_hz must be in (0, 1000] (or None for no stack sampling)")
        if self.host_interval_s is not None and self.host_interval_s < 0.01:
            raise ValueError("host_interval_s must be at least 0.01 (or None for no CPU and memory sampling)")
        if not (self.max_frames >= 2 and self.max_stacks >= 2 and 1 <= self.max_depth <= 512):
            raise ValueError("need max_frames >= 2, max_stacks >= 2 and 1 <= max_depth <= 512")
        if self.hang_after_s is not None and not 0 < self.hang_after_s < 1e9:
            raise ValueError("hang_after_s must be a positive number of seconds (or None: derived from the history)")
        if self.max_hangs < 0 or not 0 < self.termination_timeout_s <= 600:
            raise ValueError("need max_hangs >= 0 and 0 < termination_timeout_s <= 600")
        if self.exit_snapshot not in EXIT_SNAPSHOTS:
            raise ValueError(f"exit_snapshot must be one of {', '.join(EXIT_SNAPSHOTS)}")

    def resolved_out_dir(self) -> Path:
        return Path(self.out_dir or os.environ.get(DIR_ENV) or DEFAULT_DIR)

    def resolved_store_url(self) -> str | None:
        return self.store_url or os.environ.get(STORE_ENV) or None

    def resolved_rank(self) -> int | None:
        if self.rank is not None:
            return self.rank
        value = os.environ.get("RANK")
        return int(value) if value and value.isdigit() else None

    def resolved_hang_after_s(self) -> float | None | bool:
        """Seconds (fixed), ``None`` (derived from the history) or ``False`` (no watchdog).
        A bad value of WB_RECORDER_HANG_AFTER_S is ignored (derived), never raised into the job."""
        if not self.watch_hangs:
            return False
        if self.hang_after_s is not None:
            return self.hang_after_s
        value = os.environ.get(HANG_ENV, "").strip().lower()
        if value in _OFF:
            return False
        try:
            seconds = float(value)
        except ValueError:
            return None
        return seconds if 0 < seconds < 1e9 else None

    def resolved_signals(self) -> bool:
        return self.handle_signals and not disabled_by_env(name=SIGNALS_ENV)

    def resolved_control(self) -> bool:
        return self.control and not disabled_by_env(name=CONTROL_ENV)

    def info(self) -> ConfigInfo:
        """What a snapshot states of this configuration (``recorder.config``)."""
        hang = self.resolved_hang_after_s()
        return ConfigInfo(
            lens=self.lens,
            spans=self.spans.info(),
            gpu=self.gpu.info(),
            gpu_interval_s=UNSET if self.gpu_interval_s is None else self.gpu_interval_s,
            trigger=UNSET if self.trigger is None else self.trigger.to_json(),
            stack_hz=UNSET if self.stack_hz is None else self.stack_hz,
            stacks=UNSET if self.stack_hz is None else self.stacks.info(),
            max_frames=self.max_frames,
            max_stacks=self.max_stacks,
            max_depth=self.max_depth,
            host_interval_s=UNSET if self.host_interval_s is None else self.host_interval_s,
            cpu=UNSET if self.host_interval_s is None else self.cpu.info(),
            gc_pauses=self.gc_pauses,
            gc=self.gc.info() if self.gc_pauses else UNSET,
            incident_window_s=UNSET if self.incident_window_s is None else self.incident_window_s,
            hang_after_s=hang if isinstance(hang, float) else UNSET,
            hang_rule="off" if hang is False else HangRule().describe(None) if hang is None else UNSET,
            max_hangs=UNSET if hang is False else self.max_hangs,
        )
