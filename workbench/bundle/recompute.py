"""``verify --recompute``: derive, don't check.

Integrity (digests) and correctness are separate claims. A forger who edits the results and
recomputes every digest passes the integrity check; recompute catches them by rebuilding
everything the bundle derives from the recipe and the embedded data alone, with the same
code that made it, and comparing the rebuilt document with the stated one **as a whole**
(``workbench.bundle.whole``): there is no list of fields to check, so a field is covered the
day it is written.

What is derived (the rest of the bundle is input):

- ``results``, whole: each comparison (the compare engine on runs rebuilt from ``runs`` and
  ``samples``, with the recipe's parameters and declarations), the verdicts stated for them,
  each carried rerun comparison (the rerun harness's own report builder on the plan, the run
  log and the arms' runs the recipe and bundle carry: ``recipe.rerun_comparisons``, format
  1.1), each action's status (``workbench.bundle.claims``);
- each hypothesis's ``status`` and ``links``, each bisection step's figures
  (``workbench.bundle.claims``).

A part that cannot be rebuilt (no embedded samples, a run log the bundle does not carry, an
engine that fails) is named with its reason and is never valid.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from workbench import __version__
from workbench.bundle.canonical import bundle_value
from workbench.bundle.columns import decode_tables
from workbench.bundle.format import Check
from workbench.bundle.reader import array, obj
from workbench.bundle.schema import Bundle, RecipeComparison, RerunEngine, RerunInputs, RerunSource, read
from workbench.bundle.whole import ABS_TOL, REL_TOL, Unrebuilt
from workbench.compare import compare
from workbench.compare.model import verdict_of
from workbench.compare.parameters import ComparisonParameters
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from store.records import DimensionSource, RunRecord

T = TypeVar("T")
_SOURCES: dict[str, DimensionSource] = {"declared": "declared", "measured": "measured", "derived": "derived"}

__all__ = ["ABS_TOL", "REL_TOL", "RerunEngine", "Rebuilt", "rebuild_results", "rebuild_runs", "with_stated_digests"]


def default_engine() -> Callable[..., Any]:
    return compare


def rebuild_runs(bundle: JSONDoc) -> dict[str, RunRecord]:
    """RunRecords keyed by ref, from ``runs`` and the embedded ``samples``. A value of
    another type than the run's field raises (``TypeError``, ``KeyError``): not rebuilt."""
    from store.records import Dimension, RunRecord, Work  # verify without --recompute never loads the store package

    tables_by_ref = obj(obj(obj(bundle.get("samples") or {}).get("content") or {}).get("runs") or {})
    runs = {}
    for item in array(bundle.get("runs")):
        entry = obj(item)
        ref = _typed(entry["ref"], str, "ref")
        work = entry.get("work")
        amount = work.get("amount") if isinstance(work, dict) else None
        runs[ref] = RunRecord(
            lens=_typed(entry.get("lens", ""), str, "lens"),
            label=_typed(entry.get("label", ""), str, "label"),
            dimensions={
                k: Dimension(
                    d.get("value"),
                    _SOURCES[_typed(d.get("source", "declared"), str, "source")],
                    _optional(d.get("declaration"), int, "declaration"),
                )
                for k, d in ((k, obj(d)) for k, d in obj(entry.get("dimensions") or {}).items())
            },
            window=dict(obj(entry.get("window") or {"kind": "steady"})),
            work=Work(_typed(work.get("unit", ""), str, "work.unit"), None if amount is None else _float(amount))
            if isinstance(work, dict)
            else None,
            quality={k: (math.nan if v is None else _float(v)) for k, v in obj(entry.get("quality") or {}).items()},
            meta=dict(obj(entry.get("meta") or {})),
            tables=decode_tables(obj(tables_by_ref.get(ref) or {}), where=f"samples.{ref}"),
            id=_optional(entry.get("id"), int, "id"),
        )
    return runs


def _typed(value: object, kind: type[T], name: str) -> T:
    """``value`` as the ``kind`` a run's field holds; a forged bundle's other value is refused."""
    if isinstance(value, kind):
        return value
    raise TypeError(f"{name} is a {type(value).__name__}, not a {kind.__name__}")


def _optional(value: object, kind: type[T], name: str) -> T | None:
    return None if value is None else _typed(value, kind, name)


def _float(value: object) -> float:
    if isinstance(value, int | float):
        return value
    raise TypeError(f"{value!r} is not a number")


@dataclass
class Rebuilt:
    """The derived document as rebuilt so far, what could not be, and notes for the report."""

    results: dict[str, Any] = field(default_factory=dict)  # JSON, with an Unrebuilt where a part is not
    notes: list[Check] = field(default_factory=list)
    # ref -> the rebuilt rerun comparison record (``{"id", "plan_id", ..., "body"}``)
    reruns: dict[str, Any] = field(default_factory=dict)
    # ``results.rerun_comparisons`` rebuilt (``None``: format 1.0, no run log carried)
    rerun_records: list[object] | None = None


def rebuild_results(
    bundle: JSONDoc,
    typed: Bundle,
    runs: Mapping[str, RunRecord] | Unrebuilt,
    *,
    engine: Callable[..., Any],
    rerun_engine: RerunEngine | None,
) -> Rebuilt:
    """What ``results.content`` derives from the recipe and the embedded data alone (``runs``:
    the bundle's runs rebuilt, or why they could not be); nothing stated in the results is
    read here. Actions' statuses are added by ``workbench.bundle.claims``."""
    out = Rebuilt()
    comparisons = [
        _comparison(bundle, spec, runs, engine, out.notes, i) for i, spec in enumerate(typed.recipe.comparisons)
    ]
    out.results["comparisons"] = [
        {"ref": spec.ref, "result": result} for spec, result in zip(typed.recipe.comparisons, comparisons)
    ]
    out.results["verdicts"] = [
        result
        if isinstance(result, Unrebuilt)
        else {"comparison": spec.ref, "comparable": bool(result.get("comparable")), "verdict": verdict_of(result)}
        for spec, result in zip(typed.recipe.comparisons, comparisons)
    ]
    out.rerun_records = _reruns(typed, runs, rerun_engine, out)
    return out


def _comparison(
    bundle: JSONDoc,
    spec: RecipeComparison,
    runs: Mapping[str, RunRecord] | Unrebuilt,
    engine: Callable[..., Any],
    notes: list[Check],
    i: int,
) -> JSONDoc | Unrebuilt:
    """One comparison's result, by the compare engine, from the recipe's parameters and the
    runs as they were declared for it."""
    if isinstance(runs, Unrebuilt):
        return runs
    try:
        params = ComparisonParameters.from_json(spec.parameters)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        return Unrebuilt(f"the recorded parameters cannot be read: {exc}")
    missing = [r for r in (*spec.baseline, *spec.candidate, *spec.control) if r not in runs]
    if missing:
        return Unrebuilt(f"run {missing[0]} is not in the bundle's runs")
    base, cand = [runs[r] for r in spec.baseline], [runs[r] for r in spec.candidate]
    control = [runs[r] for r in spec.control]
    if not isinstance(spec.declarations, msgspec.UnsetType):  # as this comparison saw them (older: as they are)
        import workbench.compare.contract as contract  # numpy and the store's records: only --recompute loads them

        try:
            in_force = declarations_in_force(bundle, [msgspec.to_builtins(d) for d in spec.declarations])
        except ValueError as exc:
            return Unrebuilt(f"the recipe's declarations cannot be used: {exc}")
        base = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in spec.baseline]
        cand = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in spec.candidate]
    try:
        result = engine(base, cand, **params.engine_arguments(), **({"control": control} if control else {}))
    except Exception as exc:  # noqa: BLE001 - a bundle the engine cannot digest is a result not rebuilt
        return Unrebuilt(f"the compare engine failed: {type(exc).__name__}: {exc}")
    used = f"{len(base)}+{len(cand)}" + (f"+{len(control)} control" if control else "")
    notes.append(
        Check(f"results.comparisons[{i}] {spec.ref}", True, f"rebuilt from {used} runs' samples{_engine_note(spec)}")
    )
    fresh: JSONDoc = bundle_value(result.to_json())
    return fresh


def _reruns(
    typed: Bundle, runs: Mapping[str, RunRecord] | Unrebuilt, engine: RerunEngine | None, out: Rebuilt
) -> list[object] | None:
    """Each carried rerun comparison's record, rebuilt from the plan, the run log and the arms'
    runs (format 1.1; ``None``: a bundle from before, which carries no run log to rebuild from).
    Its ``digest`` is the stated body's (``stated_digests``): a body is rebuilt within
    tolerance, a digest over its floats is not."""
    if isinstance(typed.recipe.rerun_comparisons, msgspec.UnsetType):
        return None
    plans = {p.ref: p.plan() for p in typed.recipe.rerun_plans}
    fresh: list[object] = []
    for i, inputs in enumerate(typed.recipe.rerun_comparisons):
        record = _rerun(inputs, plans.get(inputs.plan), runs, engine)
        if not isinstance(record, Unrebuilt):
            out.reruns[inputs.ref] = record
            out.notes.append(
                Check(
                    f"results.rerun_comparisons[{i}] {inputs.ref}",
                    True,
                    f"rebuilt from its plan, execution and {len(inputs.runs)} logged runs",
                )
            )
        fresh.append({"ref": inputs.ref, "record": record})
    return fresh


def with_stated_digests(fresh: list[object] | None, stated: list[object]) -> list[object]:
    """The rebuilt rerun records with the digest of the body each states (see ``_reruns``);
    a bundle of format 1.0 carries no run log: each record it states is not rebuilt."""
    if fresh is None:
        why = "the bundle (format 1.0) carries no run log for it: export it again with this wb"
        return [Unrebuilt(why) for _ in stated]
    bodies = {
        str(e.get("ref")): (e.get("record") or {}).get("body") if isinstance(e.get("record"), dict) else None
        for e in stated
        if isinstance(e, dict)
    }
    out: list[object] = []
    for entry in fresh:
        assert isinstance(entry, dict)
        record = entry["record"]
        if isinstance(record, dict):
            record = {**record, "digest": _digest(bodies.get(str(entry["ref"])))}
        out.append({"ref": entry["ref"], "record": record})
    return out


def _rerun(
    inputs: RerunInputs, plan: Any, runs: Mapping[str, RunRecord] | Unrebuilt, engine: RerunEngine | None
) -> JSONDoc | Unrebuilt:
    if inputs.unavailable:
        return Unrebuilt(f"the exporting store did not have it ({inputs.unavailable})")
    if plan is None:
        return Unrebuilt(f"its plan {inputs.plan} is not carried")
    if engine is None:
        return Unrebuilt("this wb has no rerun engine to hand")
    if isinstance(runs, Unrebuilt):
        return runs
    try:
        body = bundle_value(engine(RerunSource(plan=plan, inputs=inputs, records=runs)))
    except KeyError as exc:
        return Unrebuilt(f"logged run {exc} is not in the bundle's runs")
    except Exception as exc:  # noqa: BLE001 - a record the harness cannot rebuild is not evidence
        return Unrebuilt(f"the rerun report failed: {type(exc).__name__}: {exc}")
    assert inputs.execution is not None
    return {
        "id": inputs.id,
        "plan_id": plan.id,
        "execution_id": inputs.execution.id,
        "rounds_used": len(obj(body.get("rounds")).get("used") or []),  # type: ignore[arg-type]
        "verdict": body.get("verdict"),
        "digest": None,  # the stated body's (with_stated_digests)
        "body": body,
        "created_at": inputs.created_at,
    }


def _digest(body: object) -> str | None:
    """``workbench.rerun.report.digest_of`` of a stored body: SHA-256 of its sorted-key JSON."""
    if not isinstance(body, dict):
        return None
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def declarations_in_force(bundle: JSONDoc, listed: object) -> dict[str, list[tuple[str, object, int]]]:
    """A comparison's recipe ``declarations`` by run ref, each checked against that run's own
    declaration history in the bundle (``ValueError`` names the first that is not in it)."""
    history = {
        entry.get("ref"): {
            (d.get("id"), d.get("name"), str(d.get("value")))
            for d in _tolerant(entry.get("declarations"))
            if isinstance(d, dict) and d.get("action") == "set"
        }
        for entry in _tolerant(bundle.get("runs"))
        if isinstance(entry, dict)
    }
    if not isinstance(listed, list):
        raise ValueError("not a list")
    out: dict[str, list[tuple[str, object, int]]] = {}
    for d in listed:
        if (
            not isinstance(d, dict)
            or not isinstance(d.get("declaration"), int)
            or not isinstance(d.get("dimension"), str)
        ):
            raise ValueError(f"{d!r} is not a declaration (run, dimension, value, declaration)")
        ref = str(d.get("run"))
        if (d["declaration"], d["dimension"], str(d.get("value"))) not in history.get(ref, set()):
            raise ValueError(
                f"declaration {d['declaration']} ({d['dimension']}={d.get('value')}) is not in the history of {ref}"
            )
        out.setdefault(ref, []).append((d["dimension"], d.get("value"), d["declaration"]))
    return out


def _tolerant(value: object) -> list[object]:
    """A list, or none: only its objects are read (any other iterable held none)."""
    return value if isinstance(value, list) else []


def _engine_note(spec: RecipeComparison) -> str:
    recorded = spec.engine.version if isinstance(spec.engine.version, str) else None
    return "" if recorded in (None, __version__) else f"; recorded with wb {recorded}, rebuilt with wb {__version__}"


def typed_bundle(bundle: JSONDoc) -> Bundle | Unrebuilt:
    """The bundle read with the typed readers, or why it cannot be."""
    try:
        return read(bundle)
    except msgspec.ValidationError as exc:
        return Unrebuilt(f"the bundle's records do not have the shape wb writes: {exc}")
