"""Bisection records: one row per ``wb bisect``, its specification and its progress.

Each step of a bisection is a rerun plan, execution and comparison (``store.rerun``); this
record holds what ties them together: the ordered candidates, what each was found to be,
and the range still open. The state is rewritten after every step, so a bisection can be
resumed after Ctrl-C or a reboot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer
from sqlmodel import Field, SQLModel, select

from store.errors import StoreError
from store.records import decimal_id
from store.investigations import Investigation  # noqa: F401 - the table bisection.investigation_id refers to
from store.tables import utcnow_iso

if TYPE_CHECKING:
    from sqlmodel import Session

    from store.api import Store


class BisectionNotFound(StoreError):
    """No bisection by that id or name."""


class BisectionExists(StoreError):
    """A bisection by that name is already recorded."""


class Bisection(SQLModel, table=True):
    __tablename__ = "bisection"
    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    status: str = "started"
    investigation_id: Optional[int] = Field(
        default=None, sa_column=Column(Integer, ForeignKey("investigation.id", ondelete="RESTRICT"), nullable=True)
    )
    spec: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: str = Field(default_factory=utcnow_iso)
    updated_at: str = Field(default_factory=utcnow_iso)


def find_bisection(session: "Session", ref: str | int | None) -> Bisection:
    """By id, by name, or (``None``) the latest."""
    if ref is None:
        row = session.exec(select(Bisection).order_by(Bisection.id.desc())).first()  # type: ignore[union-attr]
        if row is None:
            raise BisectionNotFound("no bisection in this store (start one with 'wb bisect start')")
        return row
    text = str(ref)
    as_id = decimal_id(text)  # ASCII digits only; anything else is a name
    row = session.get(Bisection, as_id) if as_id is not None else None
    if row is None:
        row = session.exec(select(Bisection).where(Bisection.name == text)).first()
    if row is None:
        raise BisectionNotFound(f"no bisection {text!r} (see 'wb bisect status')")
    return row


def bisections(store: "Store") -> list[Bisection]:
    """Every bisection, oldest first."""
    with store.session() as s:
        return list(s.exec(select(Bisection).order_by(Bisection.id)).all())  # type: ignore[arg-type]


def load_bisection(store: "Store", ref: str | int | None) -> Bisection:
    """By id, by name, or (``None``) the latest (``BisectionNotFound`` when none)."""
    with store.session() as s:
        return find_bisection(s, ref)


def add_bisection(
    store: "Store", name: str, spec: dict[str, Any], state: dict[str, Any], investigation_id: int | None
) -> int:
    """Record a new bisection and return its id; a name already taken is ``BisectionExists``."""
    with store.session() as s:
        if s.exec(select(Bisection).where(Bisection.name == name)).first() is not None:
            raise BisectionExists(name)
        row = Bisection(name=name, spec=spec, state=state, investigation_id=investigation_id)
        s.add(row)
        s.flush()
        return int(row.id)  # type: ignore[arg-type]


def save_bisection_state(store: "Store", bisection_id: int, state: dict[str, Any], status: str) -> None:
    """Rewrite a bisection's state and status (after each step)."""
    with store.session() as s:
        row = s.get(Bisection, bisection_id)
        if row is None:
            raise BisectionNotFound(f"no bisection {bisection_id}")
        row.state, row.status, row.updated_at = state, status, utcnow_iso()
        s.add(row)


def bisections_of(store: "Store", investigation_id: int) -> list[Bisection]:
    """The investigation's bisections, oldest first."""
    with store.session() as s:
        stmt = select(Bisection).where(Bisection.investigation_id == investigation_id).order_by(Bisection.id)  # type: ignore[arg-type]
        return list(s.exec(stmt).all())
