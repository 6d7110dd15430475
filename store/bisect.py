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


class BisectionNotFound(StoreError):
    """No bisection by that id or name."""


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
