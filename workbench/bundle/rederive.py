"""``verify --recompute`` in two steps: :func:`rebuild` makes, from the inputs alone (the
recipe, the runs and their samples, observations, hypotheses' histories), everything the
bundle derives; :func:`judge` derives the claims (statuses, links, bisection steps) and
compares the rebuilt document whole with the one the bundle states.
(``workbench.bundle.recompute`` rebuilds the results, ``workbench.bundle.claims`` the
claims, ``workbench.bundle.whole`` compares.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.bundle.claims import Evidence, action_statuses, bisections, hypotheses
from workbench.bundle.format import Check
from workbench.bundle.reader import array, obj
from workbench.bundle.recompute import (
    REL_TOL,
    Rebuilt,
    RerunEngine,
    default_engine,
    rebuild_results,
    rebuild_runs,
    typed_bundle,
    with_stated_digests,
)
from workbench.bundle.whole import Unrebuilt, differences, leaves
from workbench.vocabulary import JSONDoc

if TYPE_CHECKING:
    from store.records import RunRecord

MAX_SHOWN = 200  # differences reported one by one; the rest are counted


@dataclass(frozen=True)
class Rebuild:
    """What the bundle's inputs give: its results rebuilt (or why the bundle cannot be read)."""

    results: Rebuilt | Unrebuilt


def rebuild(
    bundle: JSONDoc, *, engine: Callable[..., Any] | None = None, rerun_engine: RerunEngine | None = None
) -> Rebuild:
    """The expensive step: runs rebuilt from their samples, every comparison and rerun comparison
    made again. Reads nothing the results state."""
    typed = typed_bundle(bundle)
    if isinstance(typed, Unrebuilt):
        return Rebuild(typed)
    return Rebuild(
        rebuild_results(bundle, typed, _runs(bundle), engine=engine or default_engine(), rerun_engine=rerun_engine)
    )


def judge(bundle: JSONDoc, made: Rebuild) -> list[Check]:
    """The claims derived from ``made`` and the inputs, and the whole rebuilt document compared
    with the stated one: one failed check per difference, named by its path; a part that could
    not be rebuilt fails with its reason."""
    typed = typed_bundle(bundle)
    if isinstance(made.results, Unrebuilt) or isinstance(typed, Unrebuilt):
        why = made.results.reason if isinstance(made.results, Unrebuilt) else typed.reason  # type: ignore[union-attr]
        return [Check("recompute", False, why)]
    stated_results = obj(obj(bundle.get("results")).get("content"))
    results = dict(made.results.results)
    results["rerun_comparisons"] = with_stated_digests(
        made.results.rerun_records, array(stated_results.get("rerun_comparisons"))
    )
    evidence = Evidence(typed, results, made.results.reruns)
    if typed.recipe.actions:
        results["actions"] = action_statuses(evidence)
    recipe = obj(obj(bundle.get("recipe")).get("content"))
    stated_hypotheses = array(bundle.get("hypotheses"))
    fresh_hypotheses, decisions = hypotheses(evidence, stated_hypotheses)
    stated: dict[str, Any] = {"results": stated_results, "hypotheses": stated_hypotheses}
    fresh: dict[str, object] = {"results": results, "hypotheses": fresh_hypotheses}
    if "bisections" in recipe:
        stated["recipe"] = {"bisections": recipe["bisections"]}
        fresh["recipe"] = {"bisections": bisections(evidence, array(recipe["bisections"]))}
    diffs = list(differences(stated, fresh, ""))
    notes = [*made.results.notes, *_claim_notes(results.get("actions"), "results.actions", "action", "status")]
    notes += _claim_notes(fresh_hypotheses, "hypotheses", "ref", "status")
    out = [_noted(note, diffs) for note in notes] + decisions
    out += [Check(path, False, why) for path, why in diffs[:MAX_SHOWN]]
    if len(diffs) > MAX_SHOWN:
        out.append(Check("rebuilt", False, f"and {len(diffs) - MAX_SHOWN} more differences"))
    compared = leaves(stated)
    if diffs or decisions:
        out.append(
            Check("rebuilt", False, f"{len(diffs)} of {compared} stated leaves differ from the rebuilt document")
        )
    else:
        out.append(
            Check(
                "rebuilt",
                True,
                f"results, hypotheses and bisection steps rebuilt whole: {compared} leaves equal within tolerance "
                f"(rel {REL_TOL:g})",
            )
        )
    return out


def _claim_notes(claims: object, where: str, name: str, status: str) -> list[Check]:
    """A note per derived claim (an action's status, a hypothesis's): what it was derived as."""
    out = []
    for i, claim in enumerate(claims if isinstance(claims, list) else []):
        if isinstance(claim, dict):
            out.append(Check(f"{where}[{i}] {claim.get(name)}", True, f"{status} {claim.get(status)}, derived again"))
    return out


def _noted(note: Check, diffs: list[tuple[str, str]]) -> Check:
    """A record's note (``results.comparisons[0] comparison/1``), failed when what it states differs."""
    where = note.part.split(" ")[0]
    differing = sum(1 for path, _ in diffs if path == where or path.startswith((where + ".", where + "[")))
    if not differing:
        return note
    return Check(note.part, False, f"{note.detail}; {differing} of its stated leaves differ (below)")


def recompute_results(
    bundle: JSONDoc, *, engine: Callable[..., Any] | None = None, rerun_engine: RerunEngine | None = None
) -> list[Check]:
    """:func:`judge` of :func:`rebuild`: every derived part of ``bundle`` rebuilt and compared whole."""
    return judge(bundle, rebuild(bundle, engine=engine, rerun_engine=rerun_engine))


def _runs(bundle: JSONDoc) -> Mapping[str, RunRecord] | Unrebuilt:
    """The bundle's runs rebuilt with their samples, or why they cannot be."""
    if not isinstance(bundle.get("samples"), dict):
        return Unrebuilt("the bundle embeds no samples (export it with --embed-samples to recheck its results)")
    try:
        return rebuild_runs(bundle)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return Unrebuilt(f"the runs cannot be rebuilt from the bundle: {exc}")
