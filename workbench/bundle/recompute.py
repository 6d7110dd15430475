"""``verify --recompute``: re-derive every comparison from the embedded samples.

Integrity (digests) and correctness are separate claims. A forger who edits the
results and recomputes every digest passes the integrity check; recompute catches
them by running the same compare engine on runs rebuilt from the bundle and checking
each recorded result against the recomputed one. Floats are compared within a
tolerance (another machine or numpy version may differ in the last bits), everything
else exactly; the report says "within tolerance", never "identical".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

import msgspec

from workbench import __version__
from workbench.bundle.canonical import bundle_value
from workbench.bundle.columns import decode_tables
from workbench.bundle.format import Check
from workbench.bundle.reader import array, content, listed, obj
from workbench.bundle.recheck import Rederived, primary_verdict, recheck_outputs
from workbench.compare import compare
from workbench.compare.parameters import ComparisonParameters
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from store.records import DimensionSource, RunRecord

# The rerun harness's ``reanalyze``: a rerun comparison's body -> its verdict-bearing parts, again
# (records' to_json documents: bundle_value makes them the bundle's JSON before they are compared).
RerunEngine = Callable[[JSONDoc], Mapping[str, object]]
T = TypeVar("T")
_SOURCES: dict[str, DimensionSource] = {"declared": "declared", "measured": "measured", "derived": "derived"}

REL_TOL = 1e-9
ABS_TOL = 1e-12
MAX_DIFFS = 5


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


def recompute_results(
    bundle: JSONDoc,
    *,
    engine: Callable[..., Any] | None = None,
    rerun_engine: RerunEngine | None = None,
) -> list[Check]:
    """Re-derive the stored comparisons from the embedded samples (``engine``: the compare
    engine) and the rerun comparisons from their per-run values (``rerun_engine``: the
    rerun harness's ``reanalyze``, passed in by the layer above); then every verdict,
    flag, status and link the bundle states is checked against what was re-derived
    (``workbench.bundle.recheck``): they are outputs to check, never inputs."""
    out, comparisons = _recompute_comparisons(bundle, engine or default_engine())
    rerun_checks, reruns = recompute_reruns(bundle, rerun_engine)
    out += rerun_checks
    out += recheck_outputs(bundle, comparisons, reruns)
    if not out:
        out.append(Check("recompute", False, "the recipe lists no comparisons to recompute"))
    return out


def recompute_reruns(bundle: JSONDoc, rerun_engine: RerunEngine | None) -> tuple[list[Check], dict[str, Rederived]]:
    """Each carried rerun comparison's analysis, verdict and sequential decision, again, and
    what was re-derived of each (by ref). A record with nothing to re-derive it from fails
    with its name."""
    try:
        carried = array(content(bundle, "results").get("rerun_comparisons"))
    except (KeyError, TypeError, AttributeError):
        return [Check("recompute", False, "the results have an unexpected shape")], {}
    out, fresh_by_ref = [], {}
    for i, entry in enumerate(carried):
        ref = entry.get("ref") if isinstance(entry, dict) else None
        record = (entry.get("record") if isinstance(entry, dict) else None) or {}
        body = record.get("body") if isinstance(record, dict) else None
        part = f"results.rerun_comparisons[{i}] {ref}"
        if not isinstance(body, dict) or not body.get("runs"):
            why = (
                str(record.get("unavailable"))
                if isinstance(record, dict) and record.get("unavailable")
                else "it carries no per-run values"
            )
            out.append(Check(part, False, f"cannot be re-derived: {why}; its verdict is not evidence"))
            continue
        if rerun_engine is None:
            out.append(Check(part, False, "not recomputed: this wb has no rerun engine to hand"))
            continue
        try:
            fresh = bundle_value(rerun_engine(body))
        except Exception as exc:  # noqa: BLE001 - a record the engine cannot digest is a failed check
            out.append(Check(part, False, f"the rerun analysis failed: {type(exc).__name__}: {exc}"))
            continue
        rounds = len(array(obj(body.get("rounds") or {}).get("used")))
        execution = obj(body.get("execution")) if isinstance(body.get("execution"), dict) else {}
        status = execution.get("status")  # said as it is: "its execution is {status}, not complete"
        fresh_by_ref[str(ref)] = Rederived(
            comparable=True,
            verdict=fresh.get("verdict"),
            rounds=rounds,
            status=None if status is None else str(status),
            result=fresh,
        )
        diffs = [d for key in fresh for d in differences(body.get(key), fresh[key], f"body.{key}")]
        # The record's own columns restate the body: outputs too.
        diffs += differences(record.get("verdict"), fresh.get("verdict"), "record.verdict")
        diffs += differences(record.get("rounds_used"), rounds, "record.rounds_used")
        if diffs:
            fresh_by_ref.pop(str(ref))
            out.append(Check(part, False, f"recorded result differs from the recomputed one: {_shown(diffs)}"))
        else:
            out.append(
                Check(
                    part,
                    True,
                    f"verdict {fresh.get('verdict')} recomputed from {rounds} rounds' per-run values; equal within "
                    f"tolerance",
                )
            )
    return out, fresh_by_ref


def _shown(diffs: list[str]) -> str:
    return "; ".join(diffs[:MAX_DIFFS]) + (f"; and {len(diffs) - MAX_DIFFS} more" if len(diffs) > MAX_DIFFS else "")


def _recompute_comparisons(bundle: JSONDoc, engine: Callable[..., Any]) -> tuple[list[Check], dict[str, Rederived]]:
    try:
        runs = rebuild_runs(bundle)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [Check("recompute", False, f"cannot rebuild runs from the bundle: {exc}")], {}
    try:
        recorded = {c.get("ref"): c.get("result") for c in map(obj, listed(content(bundle, "results"), "comparisons"))}
        specs = [dict(obj(spec)) for spec in listed(content(bundle, "recipe"), "comparisons")]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [
            Check("recompute", False, f"the recipe or results have an unexpected shape ({type(exc).__name__}: {exc})")
        ], {}
    out, fresh_by_ref = [], {}
    for unmade in sorted(set(map(str, recorded)) - {str(spec.get("ref")) for spec in specs}):
        out.append(
            Check(
                f"results.comparisons {unmade}", False, "cannot be re-derived: the recipe does not say how it was made"
            )
        )
    for i, spec in enumerate(specs):
        ref = spec.get("ref")
        part = f"results.comparisons[{i}] {ref}"
        try:
            doc = spec.get("parameters")
            if doc and not isinstance(doc, dict):
                raise TypeError(f"expected an object, not {type(doc).__name__}")
            params = ComparisonParameters.from_json(doc if isinstance(doc, dict) else None)
        except (msgspec.ValidationError, TypeError, ValueError) as exc:
            out.append(Check(part, False, f"the recorded parameters cannot be read: {exc}"))
            continue
        try:
            base_refs, cand_refs = _refs(runs, spec.get("baseline", [])), _refs(runs, spec.get("candidate", []))
            base, cand = [runs[r] for r in base_refs], [runs[r] for r in cand_refs]
            control = [runs[r] for r in _refs(runs, spec.get("control") or [])]
        except (KeyError, TypeError) as exc:
            out.append(Check(part, False, f"run {exc} has no embedded samples"))
            continue
        if "declarations" in spec:  # the runs as this comparison saw them (a bundle from before: as they are now)
            import workbench.compare.contract as contract  # numpy and the store's records: only --recompute loads them

            try:
                in_force = declarations_in_force(bundle, spec["declarations"])
            except ValueError as exc:
                out.append(Check(part, False, f"the recipe's declarations cannot be used: {exc}"))
                continue
            base = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in base_refs]
            cand = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in cand_refs]
        try:
            result = engine(
                base,
                cand,
                **params.engine_arguments(),
                **({"control": control} if control else {}),
            )
        except Exception as exc:  # noqa: BLE001 - a bundle the engine cannot digest is a failed check
            out.append(
                Check(part, False, f"cannot be re-derived: the compare engine failed: {type(exc).__name__}: {exc}")
            )
            continue
        fresh = bundle_value(result.to_json())
        diffs = list(differences(recorded.get(ref), fresh, "result"))
        if diffs:
            out.append(Check(part, False, f"recorded result differs from the recomputed one: {_shown(diffs)}"))
        else:
            fresh_by_ref[str(ref)] = Rederived(
                comparable=bool(fresh.get("comparable")), verdict=primary_verdict(fresh), result=fresh
            )
            runs_used = f"{len(base)}+{len(cand)}" + (f"+{len(control)} control" if control else "")
            out.append(
                Check(
                    part,
                    True,
                    f"recomputed from {runs_used} runs' samples; equal within tolerance (rel "
                    f"{REL_TOL:g}){_engine_note(spec)}",
                )
            )
    return out, fresh_by_ref


def _refs(runs: Mapping[str, RunRecord], given: object) -> list[str]:
    """The run refs a side of a comparison lists (``KeyError`` names one with no rebuilt run)."""
    if not isinstance(given, list):
        raise TypeError(f"{type(given).__name__!r} object is not a list of run refs")
    for ref in given:
        if not isinstance(ref, str) or ref not in runs:
            raise KeyError(ref)
    return given


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


def _engine_note(spec: Mapping[str, object]) -> str:
    engine = spec.get("engine")
    recorded = engine.get("version") if isinstance(engine, dict) else None
    return "" if recorded in (None, __version__) else f"; recorded with wb {recorded}, recomputed with wb {__version__}"


def _number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def differences(recorded: object, fresh: object, where: str) -> Iterator[str]:
    """Yield ``where: recorded X, recomputed Y`` for each leaf that differs."""
    if _number(recorded) and _number(fresh):
        if not math.isclose(recorded, fresh, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            yield f"{where}: recorded {recorded!r}, recomputed {fresh!r}"
    elif isinstance(recorded, dict) and isinstance(fresh, dict):
        for key in sorted(set(recorded) | set(fresh)):
            if key not in fresh:
                yield f"{where}.{key}: recorded but not recomputed"
            elif key not in recorded:
                yield f"{where}.{key}: recomputed but not recorded"
            else:
                yield from differences(recorded[key], fresh[key], f"{where}.{key}")
    elif isinstance(recorded, list) and isinstance(fresh, list):
        if len(recorded) != len(fresh):
            yield f"{where}: {len(recorded)} items recorded, {len(fresh)} recomputed"
        for i, (a, b) in enumerate(zip(recorded, fresh)):
            yield from differences(a, b, f"{where}[{i}]")
    elif recorded != fresh or type(recorded) is not type(fresh):
        yield f"{where}: recorded {str(recorded)[:60]!r}, recomputed {str(fresh)[:60]!r}"
