"""Dimensions declared after import: an append-only history, and the run's current value.

A declaration sets (or unsets) one dimension of one stored run with source
``declared``. Every declaration is a new ``dimension_declaration`` row (who, when, why,
the value before and after); rows are never updated nor removed (the ORM refuses, and the
database's triggers, ``store.append_only``; they go only with their run). The run's ``dimensions`` column
holds the current value, with the id of the declaration that set it, so every reader
(compare, bundles, the TUI) sees it without knowing about the history. Captures are
never touched: the file still says what it said.

A value that contradicts a ``measured`` or ``derived`` one is refused (the data win);
unsetting one the data gave is refused too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import JSON, Column, ForeignKey, Integer, Text, event
from sqlmodel import Field, SQLModel, select

from store.append_only import attach
from store.errors import StoreError
from store.tables import Run, utcnow_iso

if TYPE_CHECKING:
    from store.api import Store

SET, UNSET = "set", "unset"


class DeclarationRefused(StoreError):
    """A declaration that contradicts what the data show, or names an unknown run."""


class DimensionDeclaration(SQLModel, table=True):
    """One declaration of one dimension on one run. Never updated."""

    __tablename__ = "dimension_declaration"
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(sa_column=Column(Integer, ForeignKey("run.id", ondelete="CASCADE"), index=True, nullable=False))
    name: str
    action: str  # "set" or "unset"
    value: Optional[Any] = Field(default=None, sa_column=Column(JSON, nullable=True))
    # The dimension before this declaration ({"value", "source"}), or null when it had none.
    previous: Optional[dict[str, Any]] = Field(default=None, sa_column=Column(JSON, nullable=True))
    who: str = ""
    why: str = Field(default="", sa_column=Column(Text, nullable=False))
    at: str = Field(default_factory=utcnow_iso)


@event.listens_for(DimensionDeclaration, "before_update")
@event.listens_for(DimensionDeclaration, "before_delete")
def _history_is_append_only(_mapper: Any, _connection: Any, target: DimensionDeclaration) -> None:
    raise DeclarationRefused(f"declaration {target.id} is history and cannot change; declare again instead")


attach(DimensionDeclaration.__table__)  # type: ignore[attr-defined]  # the database refuses it too (store.append_only)


@dataclass(frozen=True)
class Declared:
    """What one declaration did (``changed`` False: the run already had that value)."""

    id: int | None
    run_id: int
    name: str
    action: str
    value: Any
    previous: dict[str, Any] | None
    who: str
    why: str
    at: str
    changed: bool = True

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "run": self.run_id,
            "name": self.name,
            "action": self.action,
            "value": self.value,
            "previous": self.previous,
            "who": self.who,
            "why": self.why,
            "at": self.at,
        }


def _same(a: Any, b: Any) -> bool:
    return str(a) == str(b)


def declare(
    store: "Store",
    run_ids: Sequence[int],
    values: Mapping[str, Any],
    unset: Sequence[str] = (),
    *,
    who: str,
    why: str = "",
) -> list[Declared]:
    """Set ``values`` and unset ``unset`` on every run, in one transaction (all or nothing).

    A value equal to the run's current one adds no history row (``changed`` False).
    """
    out: list[Declared] = []
    with store.session() as s:
        for run_id in run_ids:
            row = s.get(Run, run_id)
            if row is None:
                raise DeclarationRefused(f"no run with id {run_id}")
            dims = dict(row.dimensions or {})
            for name, value in values.items():
                current = dims.get(name)
                source = (current or {}).get("source")
                if current is not None and source in ("measured", "derived") and not _same(current.get("value"), value):
                    raise DeclarationRefused(
                        f"run {run_id}: {name}={value} contradicts the data, which say {name} = "
                        f"{current.get('value')!r} ({source})"
                    )
                if current is not None and _same(current.get("value"), value):
                    out.append(
                        Declared(None, run_id, name, SET, current.get("value"), current, who, why, "", changed=False)
                    )
                    continue
                entry = DimensionDeclaration(
                    run_id=run_id, name=name, action=SET, value=value, previous=current, who=who, why=why
                )
                s.add(entry)
                s.flush()
                dims[name] = {"value": value, "source": "declared", "declaration": entry.id}
                out.append(_declared(entry))
            for name in unset:
                current = dims.get(name)
                if current is None:
                    out.append(Declared(None, run_id, name, UNSET, None, None, who, why, "", changed=False))
                    continue
                if current.get("source") in ("measured", "derived"):
                    raise DeclarationRefused(
                        f"run {run_id}: {name} = {current.get('value')!r} is {current.get('source')} from the data and "
                        f"cannot be unset"
                    )
                entry = DimensionDeclaration(
                    run_id=run_id, name=name, action=UNSET, value=None, previous=current, who=who, why=why
                )
                s.add(entry)
                s.flush()
                del dims[name]
                out.append(_declared(entry))
            row.dimensions = dims  # a new dict: the JSON column sees the change
            s.add(row)
    return out


def history(store: "Store", run_ids: Sequence[int] | None = None) -> list[Declared]:
    """The declarations of ``run_ids`` (all runs when None), oldest first."""
    with store.session() as s:
        stmt = select(DimensionDeclaration).order_by(DimensionDeclaration.id)
        if run_ids is not None:
            stmt = stmt.where(DimensionDeclaration.run_id.in_(list(run_ids)))  # type: ignore[attr-defined]
        return [_declared(r) for r in s.exec(stmt).all()]


def _declared(row: DimensionDeclaration) -> Declared:
    return Declared(int(row.id), row.run_id, row.name, row.action, row.value, row.previous, row.who, row.why, row.at)  # type: ignore[arg-type]
