"""The door to stored bisections for the faces: the list the TUI's Verify pane shows (the stored
state decoded as :class:`BisectionState`, never read as a dict), and the store's refusals as the
CLI's errors. The search itself (start, run, resume, report) is ``bisection.py``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import msgspec

from store.errors import StoreError
from workbench.bisect.result import BisectionState, BisectionStatus
from workbench.errors import UsageError, WbError
from workbench.rerun.workflow import stored_id
from workbench.vocabulary import Record

if TYPE_CHECKING:
    from store.api import Store


class BisectionRow(Record, frozen=True, kw_only=True):
    """A bisection in the Verify list: its status, the steps done, the candidates still open."""

    id: int
    name: str
    status: BisectionStatus
    steps: int
    open: int


@contextmanager
def bisect_errors() -> Iterator[None]:
    """An unknown bisection is a usage error; any other store fault one line."""
    from store.bisect import BisectionNotFound  # SQLAlchemy tables: not for --help nor the TUI's first frame

    try:
        yield
    except BisectionNotFound as exc:
        raise UsageError(str(exc)) from None
    except StoreError as exc:
        raise WbError(str(exc)) from None


def bisection_rows(store: Store) -> list[BisectionRow]:
    """Every bisection, oldest first: name, status, steps done, the open range."""
    from store.bisect import bisections  # SQLAlchemy tables: not for --help nor the TUI's first frame

    with bisect_errors():
        rows = bisections(store)
    out = []
    for r in rows:
        state = BisectionState.from_json(r.state)
        out.append(
            BisectionRow(
                id=stored_id(r.id),
                name=r.name,
                status=msgspec.convert(r.status, BisectionStatus),
                steps=len(state.steps),
                open=max(state.hi - state.lo - 1, 0),
            )
        )
    return out
