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
from collections.abc import Callable
from typing import Any

import msgspec

from workbench import __version__
from workbench.bundle.canonical import bundle_value
from workbench.bundle.columns import decode_tables
from workbench.bundle.format import Check
from workbench.bundle.recheck import Rederived, primary_verdict, recheck_outputs
from workbench.compare import compare
from workbench.compare.parameters import ComparisonParameters

REL_TOL = 1e-9
ABS_TOL = 1e-12
MAX_DIFFS = 5


def default_engine() -> Callable[..., Any]:
    return compare


def rebuild_runs(bundle: dict[str, Any]) -> dict[str, Any]:
    """RunRecords keyed by ref, from ``runs`` and the embedded ``samples``."""
    from store.records import Dimension, RunRecord, Work  # verify without --recompute never loads the store package

    tables_by_ref = ((bundle.get("samples") or {}).get("content") or {}).get("runs") or {}
    runs = {}
    for entry in bundle.get("runs") or []:
        ref = entry["ref"]
        work = entry.get("work")
        runs[ref] = RunRecord(
            lens=entry.get("lens", ""),
            label=entry.get("label", ""),
            dimensions={
                k: Dimension(d.get("value"), d.get("source", "declared"), d.get("declaration"))
                for k, d in (entry.get("dimensions") or {}).items()
            },
            window=dict(entry.get("window") or {"kind": "steady"}),
            work=Work(work.get("unit", ""), work.get("amount")) if isinstance(work, dict) else None,
            quality={k: (math.nan if v is None else v) for k, v in (entry.get("quality") or {}).items()},
            meta=dict(entry.get("meta") or {}),
            tables=decode_tables(tables_by_ref.get(ref) or {}, where=f"samples.{ref}"),
            id=entry.get("id"),
        )
    return runs


def recompute_results(
    bundle: dict[str, Any],
    *,
    engine: Callable[..., Any] | None = None,
    rerun_engine: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
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


def recompute_reruns(
    bundle: dict[str, Any], rerun_engine: Callable[[dict[str, Any]], dict[str, Any]] | None
) -> tuple[list[Check], dict[str, Rederived]]:
    """Each carried rerun comparison's analysis, verdict and sequential decision, again, and
    what was re-derived of each (by ref). A record with nothing to re-derive it from fails
    with its name."""
    try:
        carried = (bundle["results"]["content"] or {}).get("rerun_comparisons") or []
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
        rounds = len((body.get("rounds") or {}).get("used") or [])
        execution = body.get("execution") if isinstance(body.get("execution"), dict) else {}
        fresh_by_ref[str(ref)] = Rederived(
            comparable=True, verdict=fresh.get("verdict"), rounds=rounds, status=execution.get("status"), result=fresh
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


def _recompute_comparisons(
    bundle: dict[str, Any], engine: Callable[..., Any]
) -> tuple[list[Check], dict[str, Rederived]]:
    try:
        runs = rebuild_runs(bundle)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [Check("recompute", False, f"cannot rebuild runs from the bundle: {exc}")], {}
    try:
        recorded = {c.get("ref"): c.get("result") for c in bundle["results"]["content"].get("comparisons", [])}
        specs = [dict(spec) for spec in bundle["recipe"]["content"].get("comparisons", [])]
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [
            Check("recompute", False, f"the recipe or results have an unexpected shape ({type(exc).__name__}: {exc})")
        ], {}
    out, fresh_by_ref = [], {}
    for ref in sorted(set(map(str, recorded)) - {str(spec.get("ref")) for spec in specs}):
        out.append(
            Check(f"results.comparisons {ref}", False, "cannot be re-derived: the recipe does not say how it was made")
        )
    for i, spec in enumerate(specs):
        ref = spec.get("ref")
        part = f"results.comparisons[{i}] {ref}"
        try:
            params = ComparisonParameters.from_json(spec.get("parameters"))
        except (msgspec.ValidationError, TypeError, ValueError) as exc:
            out.append(Check(part, False, f"the recorded parameters cannot be read: {exc}"))
            continue
        try:
            base = [runs[r] for r in spec.get("baseline", [])]
            cand = [runs[r] for r in spec.get("candidate", [])]
            control = [runs[r] for r in spec.get("control") or []]
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
            base = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in spec.get("baseline", [])]
            cand = [contract.as_declared(runs[ref], in_force.get(ref, ())) for ref in spec.get("candidate", [])]
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


def declarations_in_force(bundle: dict[str, Any], listed: Any) -> dict[str, list[tuple[str, Any, int]]]:
    """A comparison's recipe ``declarations`` by run ref, each checked against that run's own
    declaration history in the bundle (``ValueError`` names the first that is not in it)."""
    history = {
        entry.get("ref"): {
            (d.get("id"), d.get("name"), str(d.get("value")))
            for d in entry.get("declarations") or []
            if isinstance(d, dict) and d.get("action") == "set"
        }
        for entry in bundle.get("runs") or []
        if isinstance(entry, dict)
    }
    if not isinstance(listed, list):
        raise ValueError("not a list")
    out: dict[str, list[tuple[str, Any, int]]] = {}
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


def _engine_note(spec: dict[str, Any]) -> str:
    recorded = (spec.get("engine") or {}).get("version") if isinstance(spec.get("engine"), dict) else None
    return "" if recorded in (None, __version__) else f"; recorded with wb {recorded}, recomputed with wb {__version__}"


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def differences(recorded: Any, fresh: Any, where: str):
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
