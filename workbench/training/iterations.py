"""Iterations of a trace that has no step markers (no ``ProfilerStep#N``, no NVTX step
ranges), from the annotations a PyTorch training loop leaves in it anyway.

* ``optimizer``: ``Optimizer.step#...`` (torch/optim/optimizer.py records one per
  ``optimizer.step()``). An iteration ends where an optimizer step ends, so the
  iterations tile the trace as ``ProfilerStep#N`` windows do; the first begins at the
  data loader's first ``__next__`` before it, else at the rank's first event. Optimizer
  steps with nothing run between them (two optimizers, or two parameter groups stepped
  apart) end one iteration; a nested one is part of its parent.
* ``loader``: ``enumerate(DataLoader)#...__next__``, when no optimizer step is recorded
  (an evaluation loop, a forward-only profile). An iteration begins where the loader is
  asked for a batch and runs to the next request; the last runs to the rank's last event.

Which boundary was used is kept with the windows (``breakdown.Windows.boundary``) and
said in the run's window; with neither annotation the trace has no steps at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from workbench.training import model as m

MARKER = "marker"  # the format's own step markers
OPTIMIZER = "optimizer"
LOADER = "loader"
NONE = "none"

_OPTIMIZER_STEP = re.compile(r"^Optimizer\.step#")


@dataclass(frozen=True)
class Iterations:
    boundary: str  # OPTIMIZER or LOADER
    starts: np.ndarray  # int64 ns, sorted
    ends: np.ndarray


def _outermost(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The intervals not inside an earlier one, sorted by start."""
    order = np.lexsort((-ends, starts))
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    keep = np.ones(len(starts), dtype=bool)
    keep[1:] = starts[1:] >= reach[:-1]
    return starts[keep], ends[keep]


def _optimizer_steps(trace: m.RankTrace) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([i for i, name in enumerate(trace.names) if _OPTIMIZER_STEP.match(name)], dtype=np.int32)
    sel = np.isin(trace.ops["name"], ids)
    starts, ends = _outermost(trace.ops["start"][sel], trace.ops["end"][sel])
    if len(starts) < 2:
        return starts, ends
    # Back-to-back optimizer steps (no operator starts between them) close one iteration.
    others = np.sort(trace.ops["start"][~sel])
    between = np.searchsorted(others, starts[1:]) - np.searchsorted(others, ends[:-1])
    last_of_group = np.append(between > 0, True)
    first_of_group = np.insert(between > 0, 0, True)
    return starts[first_of_group], ends[last_of_group]


def infer(trace: m.RankTrace) -> Iterations | None:
    """The rank's iterations from optimizer-step or data-loader annotations, or None."""
    span = trace.span
    if span is None:
        return None
    opt_starts, opt_ends = _optimizer_steps(trace)
    loader_starts, _ = _outermost(trace.loader["start"], trace.loader["end"])
    if len(opt_ends):
        before = loader_starts[loader_starts < opt_starts[0]]
        first = int(before[-1]) if len(before) else span[0]
        starts = np.concatenate([[first], opt_ends[:-1]]).astype(np.int64)
        return Iterations(OPTIMIZER, starts, opt_ends.astype(np.int64))
    if len(loader_starts):
        ends = np.append(loader_starts[1:], span[1]).astype(np.int64)
        return Iterations(LOADER, loader_starts.astype(np.int64), ends)
    return None
