"""Two ways to run a use case, one interface: ``Local(store).call(req)`` runs it here, on the
store; ``Remote(url, token).call(req)`` (``remote.py``) asks a ``wb serve`` to run the same
function on its store. The CLI and the TUI hold a :class:`Workbench` and never know which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from workbench.usecases.core import Context, Request, check_text, run

if TYPE_CHECKING:
    from store.api import Store

A = TypeVar("A")


class Workbench(Protocol):
    """What the faces hold: ``call`` runs a use case wherever the store is."""

    url: str  # the store's URL or the server's: an execution's files go beside it (store.engine.work_dir)

    def call(self, req: Request[A]) -> A: ...

    def close(self) -> None: ...

    def __enter__(self) -> "Workbench": ...

    def __exit__(self, *exc: Any) -> None: ...


class Local:
    """Use cases run in this process, on ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.url = store.url

    def call(self, req: Request[A]) -> A:
        check_text(req)  # what a server refuses, a local store refuses too (PostgreSQL cannot keep a NUL)
        return run(Context(self.store), req)

    def close(self) -> None:
        pass

    def __enter__(self) -> "Local":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
