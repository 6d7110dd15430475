"""What the API answers, as the CLI's ``--json`` documents: runs, a run, declarations,
comparisons (stored in an investigation when one is named) and bundles.

Each function takes the open store and a decoded body and returns a JSON value; the
errors are wb's own (``status_of`` gives their HTTP status). The comparison is the one
engine ``wb compare`` calls (``workbench.compare.compare``), with the run sets resolved
the same way, so ``POST /compare`` and ``wb compare --json`` give the same document.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import msgspec

from store.api import Store
from store.errors import StoreError
from store.tokens import Caller
from workbench.bundle.export import dumps
from workbench.compare import compare, inspect, lens_with_metric, parse_accepts, parse_change
from workbench.compare.run_sets import Selection
from workbench.compare.way_out import rerun_words, way_out
from workbench.declare import declare_dimensions
from workbench.errors import NotFound, UsageError
from workbench.investigations.bundling import export_investigation
from workbench.investigations.comparisons import store_comparison
from workbench.run_documents import runs_json, show_document
from workbench.server.errors import ApiError
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from lenses.base import Lens
    from workbench.compare.model import Comparison


class CompareRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``POST /compare``: the words of ``wb compare BASE... --vs CAND...`` as JSON."""

    baseline: list[str | int]
    candidate: list[str | int]
    control: list[str | int] = []
    lens: str | None = None
    change: list[str] = []  # DIM, DIM=FROM:TO or DIM=FROM->TO, as --change
    accept: list[str] = []  # DIM[,DIM...], as --accept
    why: list[str] = []  # one per accept, or one for all, as --why
    metric: str | None = None  # inference: the primary metric, as --metric
    investigation: str | int | None = None  # store the comparison in this investigation


class DeclareRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``POST /runs/{id}/declarations``: as ``wb declare RUN NAME=VALUE... --unset NAME --why TEXT``."""

    values: dict[str, str] = {}
    unset: list[str] = []
    why: str = ""


T = TypeVar("T")


def decode(kind: type[T], body: bytes) -> T:
    """A JSON body as ``kind``; 422 naming the place of a wrong one."""
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except msgspec.ValidationError as exc:
        raise ApiError(422, f"request body: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ApiError(422, f"request body is not JSON: {exc}") from None


def list_runs(store: Store, lens: str | None) -> list[dict[str, object]]:
    return runs_json(store.list_runs(lens))


def show_run(store: Store, ref: str) -> dict[str, object]:
    return show_document(store, store.resolve_run(ref))


def declare(store: Store, ref: str, req: DeclareRequest, caller: Caller) -> dict[str, object]:
    """As ``wb declare --json``; who declared is the token's name."""
    done = declare_dimensions(
        store, [store.resolve_run(ref)], req.values, req.unset, why=req.why, who=f"token:{caller.name}"
    )
    return {
        "declarations": [d.to_json() for d in done if d.changed],
        "unchanged": [{"run": d.run_id, "name": d.name} for d in done if not d.changed],
    }


def _extensions() -> list[str]:
    """The server's lens extensions ($WB_LENS_EXTENSIONS where it runs): a client's files are not read."""
    return [p for p in os.environ.get("WB_LENS_EXTENSIONS", "").split(os.pathsep) if p]


def _refs(values: list[str | int]) -> list[str | int]:
    return [str(v) for v in values]


class InspectRequest(CompareRequest, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``POST /inspect``: ``wb inspect``'s words (``--windows``, ``--top`` too)."""

    windows: int = 8
    top: int = 10


def _ids(store: Store, req: CompareRequest) -> tuple[list[int], list[int], list[int]]:
    """The run sets, resolved as ``wb compare`` resolves them."""
    if not req.baseline or not req.candidate:
        raise UsageError("name the candidate runs: wb compare BASE... --vs CAND...")
    try:
        base_ids = store.resolve_runs(_refs(req.baseline))
        cand_ids = store.resolve_runs(_refs(req.candidate))
        control_ids = store.resolve_runs(_refs(req.control)) if req.control else []
    except StoreError as exc:
        raise NotFound(str(exc)) from None
    overlap = sorted(set(base_ids) & set(cand_ids))
    if overlap:
        raise UsageError(f"run {overlap[0]} is on both sides: a run cannot be its own baseline")
    return base_ids, cand_ids, control_ids


class EngineArguments(Selection):
    """The keyword arguments ``compare`` and ``inspect`` share, as a request gives them."""

    lens: str | Lens | None


def _engine_arguments(
    store: Store, req: CompareRequest, base_ids: list[int], cand_ids: list[int], control_ids: list[int]
) -> EngineArguments:
    """The runs and declarations as the engines' keyword arguments (``load_selection``'s)."""
    base, cand = store.load_runs(base_ids), store.load_runs(cand_ids)
    extensions = _extensions()
    lens = lens_with_metric([*base, *cand], req.lens, extensions, req.metric)
    args = EngineArguments(
        lens=lens,
        baseline=base,
        candidate=cand,
        changes=dict(parse_change(c) for c in req.change),
        accepts=parse_accepts(tuple(req.accept), tuple(req.why)),
        extensions=extensions,
    )
    if control_ids:
        args["control"] = store.load_runs(control_ids)
    return args


def _way_out(name: str, result: Comparison, req: CompareRequest, args: EngineArguments) -> JSONDoc | None:
    base, cand = [r.id for r in args["baseline"]], [r.id for r in args["candidate"]]
    words = rerun_words(
        name,
        base,
        cand,
        req.lens,
        req.change,
        args["accepts"],
        args["extensions"],
        [r.id for r in args.get("control", [])],
        metric=req.metric,
    )
    ways = way_out(result, base, cand, words, [*args["baseline"], *args["candidate"]])
    return None if ways is None else ways.to_json()


def compare_runs(store: Store, req: CompareRequest, caller: Caller) -> dict[str, object]:
    """``wb compare --json`` for the request (with ``way_out`` for a refusal); stored in
    ``req.investigation`` when one is named (then also ``stored``: where)."""
    base_ids, cand_ids, control_ids = _ids(store, req)
    if req.investigation is not None:
        changes = dict(parse_change(c) for c in req.change)
        accepts = parse_accepts(tuple(req.accept), tuple(req.why))
        return _store_in_investigation(
            store, req, req.investigation, caller, base_ids, cand_ids, control_ids, changes, accepts
        )
    args = _engine_arguments(store, req, base_ids, cand_ids, control_ids)
    result = compare(**args)
    doc = result.to_json()
    ways = _way_out("compare", result, req, args)
    if ways is not None:
        doc["way_out"] = ways
    return doc


def inspect_runs(store: Store, req: InspectRequest) -> dict[str, object]:
    """``wb inspect --json`` for the request (with ``way_out`` for a refusal)."""
    if not 2 <= req.windows <= 50 or not 1 <= req.top <= 200:
        raise UsageError("windows: 2 to 50; top: 1 to 200 (as wb inspect)")
    if req.investigation is not None:
        raise UsageError("an inspection is not stored; leave out investigation")
    args = _engine_arguments(store, req, *_ids(store, req))
    result = inspect(windows=req.windows, top=req.top, **args)
    ways = _way_out("inspect", result.comparison, req, args)
    return {**result.to_json(), **({"way_out": ways} if ways else {})}


def _store_in_investigation(
    store: Store,
    req: CompareRequest,
    investigation: str | int,
    caller: Caller,
    base_ids: list[int],
    cand_ids: list[int],
    control_ids: list[int],
    changes: dict[str, tuple[str | None, str | None] | None],
    accepts: dict[str, str],
) -> dict[str, object]:
    if req.metric:
        raise UsageError("--metric is not stored with an investigation's comparison; compare without --investigation")
    bare = [name for name, values in changes.items() if values is None]
    if bare:
        raise UsageError(f"--change {bare[0]!r}: an investigation's comparison needs DIM=FROM:TO")
    view = store_comparison(
        store,
        investigation,
        base_ids,
        cand_ids,
        lens=req.lens,
        changes={k: list(v) for k, v in changes.items() if v is not None} if req.change else None,  # none is bare
        accepts=accepts,
        control=control_ids,
        by=f"token:{caller.name}",
    )
    if isinstance(view.result, msgspec.UnsetType):  # store_comparison's view holds the result it stored
        raise ValueError(f"{view.ref} came back without its result")
    doc: dict[str, object] = dict(view.result)
    doc["stored"] = {"investigation": investigation, "comparison": view.id}
    return doc


def bundle_text(store: Store, investigation: str, embed_samples: bool) -> str:
    """The bundle ``wb bundle export`` writes, as its text (checksummed, unsigned)."""
    return dumps(export_investigation(store, investigation, embed_samples=embed_samples))


def lens_of(query: Mapping[str, str]) -> str | None:
    return query.get("lens") or None
