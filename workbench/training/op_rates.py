"""Each run's operations per step, by name and by shape, reduced from its ``operations`` and
``op_shapes`` tables: the tables of a training run that grow with its ranks (a row per
operation, step and rank). ``reduce_loaded`` reads a run in memory; ``reduce_stored`` reads
the few columns it needs from the store, one table at a time, grouping by the dictionary
codes of the text columns without building their rows, so ``wb inspect`` of two 1,024-rank
jobs never holds their tables (issue 47). Both go through the same arithmetic, in the
tables' row order: the figures are the same to the last bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from store.columns import decode_coded
from store.records import RunRecord
from workbench.training.window_kind import steady_rows

if TYPE_CHECKING:
    from store.api import Store

RANK_TABLES = ("operations", "op_shapes")  # what reduce_stored reads in place of the tables
CHUNK = 1 << 16  # rows
OpRates = dict[str, tuple[str, float]]  # name -> (kind of its first row, ms per step)
ShapeRates = dict[tuple[str, str, str], float]  # (name, kind, shape) -> ms per step, in order of first row
Coded = tuple[np.ndarray, np.ndarray]  # (codes, values): the row i is values[codes[i]]


Column = tuple["np.ndarray | None", np.ndarray]  # store.columns.decode_coded's (codes or None, values)
Read = Callable[[str], "Column | None"]  # a column of the table by name (None: the table lacks it)


@dataclass(frozen=True)
class Reduced:
    operations: OpRates | None  # None: the run has no operations table
    shapes: ShapeRates | None  # None: the run has no recorded shapes
    steps: str = "all"  # "steady": reduced over the run's steady steps only


def reduce_loaded(run: RunRecord) -> Reduced:
    def reader(table: str) -> Read:
        cols = run.tables.get(table) or {}
        return lambda name: (None, np.asarray(cols[name])) if name in cols else None

    return Reduced(operations=_op_rates(reader("operations")), shapes=_shape_rates(reader("op_shapes")))


def reduce_stored(store: Store, run_id: int, unsteady: dict[str, str] | None = None) -> Reduced:
    """One column in memory at a time (and what is kept of the ones before: codes, a count).
    ``unsteady`` (``window_kind.unsteady_steps``): reduced over the other steps only, the rows
    ``steady_steps`` keeps of a run in memory."""

    def reader(table: str) -> Read:
        def read(name: str) -> Column | None:
            blob = store.column_blobs(run_id, table, [name]).get(name)
            return None if blob is None else decode_coded(blob, view=True)

        return read if unsteady is None else _steady(read, unsteady)

    return Reduced(
        operations=_op_rates(reader("operations")),
        shapes=_shape_rates(reader("op_shapes")),
        steps="all" if unsteady is None else "steady",
    )


def _steady(read: Read, unsteady: dict[str, str]) -> Read:
    """``read`` restricted to the rows of steady steps (a table without steps: every row)."""
    step = read("step") if unsteady else None
    if step is None:
        return read
    codes, values = step
    keep = steady_rows(values if codes is None else values[codes], unsteady)

    def restricted(name: str) -> Column | None:
        column = read(name)
        if column is None:
            return None
        codes, values = column
        return (None, values[keep]) if codes is None else (codes[keep], values)

    return restricted


def _coded(column: Column) -> Coded:
    codes, values = column
    if codes is not None:
        return codes, values
    values, codes = np.unique(values.astype(object), return_inverse=True)  # a column stored plain, or loaded
    return codes.ravel(), values


def _numbers(column: Column | None) -> np.ndarray | None:
    if column is None:
        return None
    codes, values = column
    arr = values if codes is None else values[codes]
    return arr.astype(np.float64, copy=False) if arr.dtype.kind in "biuf" else None


def _chunks(n: int) -> list[slice]:
    """Row ranges a table is reduced in: its temporaries stay small at any number of ranks. Sums
    are added row after row (``np.add.at``), as a whole-column ``np.bincount`` adds them."""
    return [slice(i, min(i + CHUNK, n)) for i in range(0, n, CHUNK)]


def _n_steps(step: np.ndarray | None) -> int:
    if step is None:
        return 1
    seen = [np.unique(part[np.isfinite(part)]) for part in (step[p] for p in _chunks(len(step)))]
    return len(np.unique(np.concatenate(seen))) if seen and any(s.size for s in seen) else 1


def _op_rates(read: Read) -> OpRates | None:
    """Per name over the rows with a known time: (the kind of its first row, its time per step)."""
    total = _numbers(read("total_ms"))
    name = read("name") if total is not None else None
    if total is None or name is None:
        return None
    codes, names = _coded(name)
    sums, first = np.zeros(len(names)), np.full(len(names), -1, dtype=np.int64)
    for part in _chunks(len(total)):
        times = total[part]
        kept = np.flatnonzero(np.isfinite(times))
        here = codes[part][kept]
        np.add.at(sums, here, times[kept])
        seen, at = np.unique(here, return_index=True)
        new = first[seen] < 0
        first[seen[new]] = part.start + kept[at[new]]
    present = np.flatnonzero(first >= 0)
    if not present.size:
        return {}
    kind = read("kind")
    if kind is None:
        kind_of = np.full(len(present), "", dtype=object)
    else:
        kind_codes, kinds = _coded(kind)
        kind_of = kinds[kind_codes[first[present]]]
    n_steps = _n_steps(_numbers(read("step")))
    order = np.argsort(names[present].astype(str), kind="stable")  # by name, as the rows are shown
    return {str(names[present[i]]): (str(kind_of[i]), float(sums[present[i]]) / n_steps) for i in order}


def _shape_rates(read: Read) -> ShapeRates | None:
    """Per (name, kind, shape), the sum over its rows of (time / steps), in row order."""
    name = read("name")
    if name is None or not len(name[1] if name[0] is None else name[0]):
        return None
    codes, names = _coded(name)
    key, tables = codes.astype(np.int64), [names]
    for col in ("kind", "shape"):  # one key a row: name, kind and shape codes, mixed radix
        found = read(col)
        if found is None:
            return None
        codes, values = _coded(found)
        key = key * len(values) + codes
        tables.append(values)
    n_steps = max(_n_steps(_numbers(read("step"))), 1)
    total = _numbers(read("total_ms"))
    if total is None:
        return None
    groups = np.unique(np.concatenate([np.unique(key[p]) for p in _chunks(len(key))]))
    sums, first = np.zeros(len(groups)), np.full(len(groups), len(key), dtype=np.int64)
    for part in _chunks(len(key)):
        at = np.searchsorted(groups, key[part])
        np.add.at(sums, at, total[part] / n_steps)
        np.minimum.at(first, at, np.arange(part.start, part.stop))
    (names, kinds, shapes), out = tables, {}
    n_kinds, n_shapes = len(kinds), len(shapes)
    for g in np.argsort(first, kind="stable"):  # in order of each key's first row
        n, rest = divmod(int(groups[g]), n_kinds * n_shapes)
        k, s = divmod(rest, n_shapes)
        out[(str(names[n]), str(kinds[k]), str(shapes[s]))] = float(sums[g])
    return out
