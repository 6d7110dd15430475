"""A run's stored JSON typed at its edge: the keys of ``RunRecord.meta`` and ``window`` that wb
writes, as msgspec schemas read at the time a reader needs them.

The store keeps ``meta`` and ``window`` as JSON mappings (importers, bundles and older stores put
keys there that no schema here names, and those stay in the mapping as they are). A reader asks
``run.typed_meta`` / ``run.typed_window`` instead of poking ``meta.get("summary")``: each known key
is decoded on its own, so one key of another shape (a hand-written capture, an older wb) leaves only
that key out of the view, named in ``unread``, while the raw value stays in the mapping. The
readers were written to tolerate such values (a figure of another type is unknown, never an error),
and the typed view keeps that behaviour rather than refusing a whole run for one key.

Bottom layer (``store``): msgspec and the standard library only, so the lenses can read it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Literal, Self

import msgspec

SweepAxis = Literal["rate", "concurrency", "strategy"]

# "incident": the moments around a trigger (a flight recorder's slow-step snapshot), never
# a steady window of the workload: like every kind, it must match to compare.
WindowKind = Literal["steady", "startup", "checkpointing", "mixed", "incident", "unknown"]

# meta["summary"]: metric -> statistic -> value, scalars (duration_s, request_throughput, ...) at
# the top level; a histogram quantile carries ``pNN_bounds: [lo, hi]`` (a null high: the +Inf bucket),
# a Prometheus block its ``source`` family and a gauge ``unknown: true``. An int is read as a float.
SummaryValue = bool | float | str | list[float | None] | None
Summary = dict[str, float | dict[str, SummaryValue] | None]


class _View(msgspec.Struct, frozen=True, kw_only=True):
    """A typed view over one stored mapping: the keys it knows, decoded one by one."""

    # Known keys whose stored value has another shape: left out here, still in the raw mapping.
    unread: tuple[str, ...] = ()

    @classmethod
    def of(cls, doc: Mapping[str, Any] | None) -> Self:
        known: dict[str, object] = {}
        unread: list[str] = []
        for f in _fields(cls):
            if f.name == "unread" or f.encode_name not in (doc or {}):
                continue
            assert doc is not None
            try:
                known[f.name] = msgspec.convert(doc[f.encode_name], f.type)
            except msgspec.ValidationError:
                unread.append(f.encode_name)
        return cls(**known, unread=tuple(unread))


@functools.cache
def _fields(cls: type[msgspec.Struct]) -> tuple[msgspec.structs.FieldInfo, ...]:
    """A view's fields, their types resolved once (msgspec resolves the annotations at every call)."""
    return msgspec.structs.fields(cls)


class Load(msgspec.Struct, frozen=True, kw_only=True):
    """``meta["load"]``: the load a level was measured at (``None``: the file does not say)."""

    requested_rate: float | None = None
    concurrency: float | None = None
    strategy: str | None = None
    achieved_rate: float | None = None


class Sweep(msgspec.Struct, frozen=True, kw_only=True):
    """``meta["sweep"]``: the sweep a level's run belongs to. wb writes every field but ``summary``
    (figures over every level together, in the tool's own shape: metadata of the sweep, never a
    level); a reader takes an absent one (a hand-written capture) as unknown, the level as the first."""

    id: str
    label: str | None = None
    tool: str | None = None
    axis: SweepAxis | None = None
    level: int = 0  # index in load order
    levels: int | None = None
    summary: dict[str, object] | None = None


class Pool(msgspec.Struct, frozen=True, kw_only=True):
    """``meta["pool"]`` of a fleet run: numbers (epoch seconds for the window), or text that the
    fleet lens reads as a number or an ISO 8601 time (hand-written captures, older stores)."""

    capacity_gpus: float | str | None = None
    window_start: float | str | None = None
    window_end: float | str | None = None
    wait_target_s: float | str | None = None


class Distributed(msgspec.Struct, frozen=True, kw_only=True):
    """``meta["distributed"]``: what a profiler trace says of its rank's process group."""

    backend: str | None = None
    rank: int | None = None
    world_size: int | None = None
    pg_count: int | None = None
    nccl_version: str | None = None


class ConfigSource(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of ``meta["engine_config_sources"]``: where an engine's settings were read."""

    file: str
    path: str
    read: str


class SampleFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of ``meta["sample_check"]``: what the lens check found in a run's samples
    (``lenses.base.Lens.check_samples``): ``count`` items of ``of`` (0: not a count)."""

    code: str
    text: str
    count: int = 0
    of: int = 0


class RunMeta(_View, frozen=True, kw_only=True):
    """The keys of ``RunRecord.meta`` that wb writes (absent: the run has none)."""

    load: Load | None = None
    sweep: Sweep | None = None
    summary: Summary | None = None
    pool: Pool | None = None
    distributed: Distributed | None = None
    engine_config_sources: tuple[ConfigSource, ...] = ()
    warnings: tuple[str, ...] = ()
    sample_check: tuple[SampleFinding, ...] = ()
    duration_s: float | None = None
    recorded_at: float | str | None = None  # as the capture states it: epoch seconds or an ISO 8601 time

    @property
    def notes(self) -> tuple[str, ...]:
        """What a person reading the run must be told: the lens check's findings, then the
        importer's warnings (``wb import``, ``wb show`` print them, not only ``--json``)."""
        return (*(f.text for f in self.sample_check), *self.warnings)

    def summary_block(self, metric: str) -> dict[str, SummaryValue] | None:
        """``summary[metric]`` when it is a block of statistics."""
        block = (self.summary or {}).get(metric)
        return block if isinstance(block, dict) else None

    def summary_scalar(self, name: str) -> float | None:
        """``summary[name]`` when it is a number at the summary's top level."""
        value = (self.summary or {}).get(name)
        return value if isinstance(value, float) else None


class RunWindow(_View, frozen=True, kw_only=True):
    """The keys of ``RunRecord.window`` that wb writes: the window's kind and how it was cut."""

    kind: WindowKind | None = None
    policy: str | None = None
    warmup_excluded: int | None = None
    duration_s: float | None = None
    step_kinds: dict[str, str] | None = None  # non-steady steps by number (training)
    restricted_to: str | None = None
