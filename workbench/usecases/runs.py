"""Runs: list them, show one, declare what their files do not say (``wb runs``, ``wb show``,
``wb declare``)."""

from __future__ import annotations

from typing import Any

from lenses import get_lens
from workbench.declare import declare_dimensions
from workbench.run_documents import runs_json, show_document
from workbench.usecases.core import Answer, Context, Request, operation


class RunList(Answer, frozen=True, kw_only=True):
    """``wb runs --json``: one object per run."""

    runs: list[dict[str, Any]]


class ListRuns(Request[RunList], frozen=True, kw_only=True, forbid_unknown_fields=True):
    lens: str | None = None


@operation("runs.list", "read")
def list_runs(ctx: Context, req: ListRuns) -> RunList:
    """The runs in the store (of one lens)."""
    return RunList(runs=runs_json(ctx.store.list_runs(req.lens)))


class RunDocument(Answer, frozen=True, kw_only=True):
    """``wb show --json``: the run in full."""

    run: dict[str, Any]


class ShowRun(Request[RunDocument], frozen=True, kw_only=True, forbid_unknown_fields=True):
    run: str  # an id or a label


@operation("runs.show", "read")
def show_run(ctx: Context, req: ShowRun) -> RunDocument:
    """One run: dimensions with their sources, window, work, phases, declarations, captures."""
    return RunDocument(run=show_document(ctx.store, ctx.store.resolve_run(req.run)))


class DeclaredRow(Answer, frozen=True, kw_only=True):
    """What one declaration did (``changed`` False: the run already said so, nothing recorded)."""

    id: int | None
    run: int
    name: str
    action: str
    value: Any
    previous: dict[str, Any] | None
    who: str
    why: str
    at: str
    changed: bool

    def document(self) -> dict[str, Any]:
        """The declaration as ``wb declare --json`` lists it."""
        doc = self.to_json()
        doc.pop("changed")
        return doc


class Declarations(Answer, frozen=True, kw_only=True):
    """What ``wb declare`` did, in order, and its notes (a name no lens of these runs compares)."""

    done: list[DeclaredRow]
    notes: list[str]

    def document(self) -> dict[str, Any]:
        """``wb declare --json``."""
        return {
            "declarations": [d.document() for d in self.done if d.changed],
            "unchanged": [{"run": d.run, "name": d.name} for d in self.done if not d.changed],
        }


class Declare(Request[Declarations], frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``wb declare RUN... NAME=VALUE... --unset NAME --why TEXT``."""

    runs: list[str]
    values: dict[str, str] = {}
    unset: list[str] = []
    why: str = ""
    by: str | None = None


@operation("runs.declare", "upload")
def declare(ctx: Context, req: Declare) -> Declarations:
    """Declare dimensions on stored runs (an append-only history: who, when, why)."""
    store = ctx.store
    run_ids = store.resolve_runs(req.runs) if req.runs else []
    done = declare_dimensions(store, run_ids, req.values, req.unset, why=req.why, who=ctx.by(req.by))
    rows = [
        DeclaredRow(
            id=d.id,
            run=d.run_id,
            name=d.name,
            action=d.action,
            value=d.value,
            previous=d.previous,
            who=d.who,
            why=d.why,
            at=d.at,
            changed=d.changed,
        )
        for d in done
    ]
    return Declarations(done=rows, notes=_unchecked(store, run_ids, req.values))


def _unchecked(store: Any, run_ids: list[int], values: dict[str, str]) -> list[str]:
    """A name no lens of these runs compares (a typo such as 'modle') is recorded, but no
    comparison will ever require it: say so, with the names that are checked."""
    lenses = sorted({store.get_run(run_id).lens for run_id in run_ids})
    known: list[str] = []
    for name in lenses:
        try:
            known += [d.name for d in get_lens(name).dimensions if d.name not in known]
        except Exception:  # noqa: BLE001 - a lens this wb does not know: nothing to say
            return []
    return [
        f"note: {name} is not a dimension the {'/'.join(lenses)} lens compares ({', '.join(known)}): recorded, but no "
        "comparison checks it"
        for name in values
        if name not in known
    ]
