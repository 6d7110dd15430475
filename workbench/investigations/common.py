"""What the investigation modules share: ids and refs, users, the investigation row."""

from __future__ import annotations

import getpass
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from store.errors import StoreError
from store.records import LENSES, decimal_id
from workbench.bundle.canonical import nfc
from workbench.bundle.format import OBSERVATION_LABEL
from workbench.errors import NotFound, UsageError, WbError

if TYPE_CHECKING:
    from store.api import Store
    from store.investigations import Investigation

HYPOTHESIS_STATUSES = ("open", "supported", "refuted", "undetermined")
DECIDED = ("supported", "refuted")

__all__ = ["LENSES", "OBSERVATION_LABEL", "HYPOTHESIS_STATUSES", "DECIDED"]


def current_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "unknown"


def required_text(value: str, what: str) -> str:
    value = nfc(str(value)).strip()
    if not value:
        raise UsageError(f"{what} must not be empty")
    return value


def parse_id(ref: str | int, kind: str) -> int:
    """``12``, ``"12"`` or ``"investigation/12"`` -> 12."""
    text = str(ref).strip()
    prefix = f"{kind}/"
    if text.startswith(prefix):
        text = text[len(prefix) :]
    as_id = decimal_id(text)  # ASCII digits only: "²".isdigit() is True, int("²") fails
    if as_id is None:
        raise UsageError(f"{kind} reference {str(ref)!r} is not an id")
    return as_id


def resolve_runs(store: "Store", refs: Sequence[str | int]) -> list[int]:
    """Run ids for ids or labels, as a user-facing error when one does not resolve."""

    try:
        return store.resolve_runs(list(refs))
    except StoreError as exc:
        raise NotFound(str(exc)) from None


def investigation_of(store: "Store", inv: str | int, *, writable: bool = False) -> "Investigation":
    """The investigation ``inv`` names, or the one-line error that says why not (none by
    that id, or, when ``writable``, imported and read-only)."""
    from store.investigations import get_investigation  # SQLAlchemy: loaded with the store, not at import

    inv_id = parse_id(inv, "investigation")
    return checked_investigation(get_investigation(store, inv_id), inv_id, writable)


def checked_investigation(row: "Investigation | None", inv_id: int, writable: bool = False) -> "Investigation":
    """``row``, the investigation ``inv_id`` as read, or the one-line error that says why not."""
    if row is None:
        raise NotFound(f"no investigation {inv_id} (see 'wb investigate list')")
    if writable and row.imported_bundle_id is not None:
        raise WbError(f"investigation {inv_id} was imported from a bundle and is read-only", exit_code=3)
    return row


@contextmanager
def investigation_errors() -> Iterator[None]:
    """The store's refusals of an investigation's new record as the CLI's errors: none by that
    id is not found, an imported (read-only) one is refused (exit 3)."""
    from store.investigations import InvestigationNotFound, InvestigationReadOnly  # SQLAlchemy: with the store

    try:
        yield
    except InvestigationNotFound as exc:
        raise NotFound(str(exc)) from None
    except InvestigationReadOnly as exc:
        raise WbError(str(exc), exit_code=3) from None


def writable_investigation(store: "Store", inv: str | int) -> int:
    """The id of an investigation that can take new records (a plan, a bisection), or the
    one-line error that says why not (none by that id, or imported and read-only)."""
    return int(investigation_of(store, inv, writable=True).id)  # type: ignore[arg-type]
