"""Compare and Inspect: comparability first, then the delta, observations and the
per-phase detail. Pure functions over ``RunRecord`` lists, for the CLI, the TUI and
bundles alike::

    from workbench.compare import compare, inspect
    result = compare(baseline_runs, candidate_runs, lens=None,
                     changes={"engine_revision": ("v0.8.2", "v0.8.3")},
                     accepts={"power_policy": "set by the site, not by us"})
    result.to_json()   # the `wb compare --json` contract

Modules: ``contract.py`` the one comparability, work and guardrail contract every stage
calls; ``results.py`` and ``model.py`` the typed comparison; ``render.py`` and
``findings_render.py`` its text; ``charts.py`` bars, box lines and sparklines; ``plots.py``
plotext line and scatter plots (``--plot``, the TUI, the sweep curve); ``sweep.py``,
``sweep_result.py``, ``sweep_render.py`` load sweeps at matched load; ``host_activity.py`` a
recorder's stacks, CPU and GC in a slow window against a normal one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from lenses import LENS_NAMES, get_lens, lens_names
from workbench.errors import BadInput, UsageError

if TYPE_CHECKING:
    from lenses.base import GuardrailSpec, Lens
    from store.records import RunRecord
    from workbench.compare.inspect_data import InspectResult
    from workbench.compare.model import Comparison
    from workbench.compare.results import Observation, Primary, Runs
    from workbench.training.op_rates import Reduced


def resolve_lens(
    runs: Sequence["RunRecord"], lens: "str | Lens | None" = None, extensions: Iterable[str | Path] = ()
) -> "Lens":
    """The lens to use: the one named, else the runs' own (they must agree)."""
    from lenses.base import Lens  # numpy: with the engine
    from lenses.extensions import ExtensionError  # lenses.base: numpy

    if isinstance(lens, Lens):
        return lens
    names = sorted({r.lens for r in runs})
    if lens is None:
        if len(names) != 1:
            by_lens = {n: [r.id if r.id is not None else repr(r.label) for r in runs if r.lens == n] for n in names}
            shown = "; ".join(f"{n}: run {', '.join(map(str, ids))}" for n, ids in by_lens.items())
            raise UsageError(
                f"the runs are of different lenses ({shown}) and cannot be compared: "
                "baseline and candidate must be runs of one lens"
            )
        lens = names[0]
    if lens not in LENS_NAMES and lens not in lens_names():  # plug-ins are looked up only when needed
        raise UsageError(f"unknown lens {lens!r} (one of {', '.join(lens_names())})")
    others = [r for r in runs if r.lens != lens]
    if others:
        r = others[0]
        ref = r.id if r.id is not None else repr(r.label)
        raise UsageError(
            f"run {ref} is {'an' if r.lens[:1] in 'aeiou' else 'a'} {r.lens} run: the {lens} lens cannot read it"
        )
    try:
        return get_lens(lens, extensions)
    except ExtensionError as exc:
        raise BadInput(exc.file, exc.detail, where=exc.where) from None


def lens_with_metric(
    runs: Sequence["RunRecord"], lens: "str | Lens | None", extensions: Iterable[str | Path], metric: str | None
) -> "str | Lens | None":
    """The lens a comparison reads: ``lens`` as named or, with ``metric`` (``--metric``), the
    runs' lens made with that primary (the inference lens's statistics: ``ttft_p99``,
    ``tpot_mean`` ...). The one reading of ``--metric`` for ``wb compare``, ``wb inspect`` and
    the server."""
    if not metric:
        return lens
    the_lens = resolve_lens(runs, lens, extensions)
    try:
        made = the_lens.with_metric(metric)
    except ValueError as exc:
        raise UsageError(f"--metric: {exc}") from None
    if made is None:
        raise UsageError(f"--metric applies to the inference lens, not {the_lens.name}")
    return made


def compare(
    baseline: Sequence["RunRecord"],
    candidate: Sequence["RunRecord"],
    lens: "str | Lens | None" = None,
    changes: dict[str, tuple[str | None, str | None] | None] | None = None,
    accepts: dict[str, str] | None = None,
    extensions: Iterable[str | Path] = (),
    control: Sequence["RunRecord"] | None = None,
    guardrails: Sequence["GuardrailSpec"] = (),
) -> "Comparison":
    """Compare baseline runs with candidate runs through a lens.

    Comparability is checked first; a refused pair gets no delta at all.
    ``changes``: the intended change, ``{dim: (from, to)}`` (either may be ``None``);
    ``accepts``: ``{dim: why}``, the only override of a refusal, recorded in the result.
    ``control``: baseline-again (A′) runs, the A/A noise floor of every effect (see
    ``workbench.compare.control``); they must match the baseline, changed dimensions included.
    ``guardrails``: more guardrails (an investigation's frame): with the lens's, judged by
    ``workbench.compare.contract``; a stated one that cannot be judged withholds IMPROVEMENT.
    """
    # The engine's modules load numpy, the lenses and the statistics engine: imported
    # here, so that the CLI's ``parse_change`` (and ``wb --help``) does not pay for them.
    from workbench.compare import contract, delta, dict_diff, observations  # numpy
    from workbench.compare.control import check_control  # numpy
    from workbench.compare.model import Comparison  # numpy
    from workbench.compare.results import Declaration, Evidence, Observation, Runs  # workbench.stats: numpy
    from workbench.training.pair_findings import host_time  # numpy

    if not baseline or not candidate:
        raise UsageError("compare needs at least one baseline run and one candidate run")
    control = list(control or [])
    the_lens = resolve_lens([*baseline, *candidate, *control], lens, extensions)
    if guardrails:  # the investigation's frame guardrails, beside the lens's own
        the_lens = the_lens.extended(guardrails=tuple(guardrails))
    check = contract.pair(the_lens, baseline, candidate, changes, accepts)
    base_refs, cand_refs = tuple(_ref(r) for r in baseline), tuple(_ref(r) for r in candidate)
    runs = Runs(baseline=base_refs, candidate=cand_refs)
    if control:
        runs = Runs(baseline=base_refs, candidate=cand_refs, control=tuple(_ref(r) for r in control))
        shared = [r.id for r in control if r.id is not None and (r.id in base_refs or r.id in cand_refs)]
        if shared:
            raise UsageError(
                f"--control: run {shared[0]} is also compared: a control run is a separate baseline-again run"
            )
        check_control(the_lens, baseline, control, changes, accepts)
    declarations = tuple(
        Declaration(run=_ref(run), dimension=name, value=dim.value, declaration=dim.declaration)
        for run in [*baseline, *candidate]
        for name, dim in sorted(run.dimensions.items())
        if dim.declaration is not None
    )
    if not check.comparable:
        return Comparison(lens=the_lens, runs=runs, comparability=check, declarations=declarations)
    fallback = getattr(
        the_lens, "fallback_primary", None
    )  # a lens whose primary may be missing from summary-only files
    chosen = fallback(list(baseline), list(candidate)) if fallback is not None else None
    if chosen is not None:
        the_lens = chosen[0]
    judged = contract.guardrails(the_lens, baseline, candidate, control)
    timing_effect = contract.work(the_lens, baseline, candidate, None).same is not False
    primary = delta.primary(the_lens, baseline, candidate, timing_effect=timing_effect, control=control)
    primary = _withhold(primary, contract.unknown_stated(the_lens, judged))
    phases = delta.phases(the_lens, baseline, candidate, control)
    found = observations.observations(the_lens, baseline, candidate, primary, phases, judged)
    # Host time leads when the GPU idles (runs with per-step GPU idle figures: training traces).
    lead = host_time(baseline, candidate)
    if lead is not None:
        found.insert(
            0,
            Observation(
                text=lead.summary,
                kind=observations.NOT_CAUSE,
                evidence=observations._evidence(baseline, candidate, "host time per step", dict(lead.evidence)),
            ),
        )
    first: list[Observation] = _sample_findings(baseline, candidate, runs)
    if chosen is not None:
        first.append(
            Observation(
                text=chosen[1], evidence=Evidence(metric=the_lens.primary.name, runs=runs), kind=observations.NOT_CAUSE
            )
        )
    if check.unrealized_changes:
        first.append(
            Observation(
                text=f"Declared change that did not happen: {', '.join(check.unrealized_changes)} is the same on both "
                f"sides.",
                evidence=Evidence(dimensions=tuple(check.unrealized_changes), runs=runs),
                kind=observations.NOT_CAUSE,
            )
        )
    for row in reversed(check.rows):  # several settings of one mapping changed at once (engine flags)
        several = dict_diff.mapping_diff(row.name, row.state, row.baseline.value, row.candidate.value).several_changed
        if several:
            first.append(
                Observation(
                    text=several[:1].upper() + several[1:] + ".",
                    evidence=Evidence(dimensions=(row.name,), runs=runs),
                    kind=observations.NOT_CAUSE,
                )
            )
    return Comparison(
        lens=the_lens,
        runs=runs,
        comparability=check,
        primary=primary,
        phases=tuple(phases),
        observations=(*first, *found),
        guardrails=tuple(judged),
        work=contract.work(the_lens, baseline, candidate, primary),
        metrics=tuple(delta.extra_metrics(the_lens, baseline, candidate, control)),
        declarations=declarations,
    )


def _sample_findings(
    baseline: Sequence["RunRecord"], candidate: Sequence["RunRecord"], runs: "Runs"
) -> list["Observation"]:
    """What the lens check found in each compared run (failed requests, values kept as unknown,
    steps without a boundary, jobs without times), said before any figure that stands on them."""
    from workbench.compare.observations import NOT_CAUSE  # numpy: see compare()
    from workbench.compare.results import Evidence, Observation  # numpy: see compare()

    out = []
    for side, side_runs in (("Baseline", baseline), ("Candidate", candidate)):
        for run in side_runs:
            for finding in run.typed_meta.sample_check:
                text = f"{side} run {_ref(run)}: {finding.text[:1].upper()}{finding.text[1:]}."
                out.append(Observation(text=text, evidence=Evidence(runs=runs), kind=NOT_CAUSE))
    return out


def _withhold(primary: "Primary", unknown: list[str]) -> "Primary":
    """The primary with IMPROVEMENT withheld while a stated guardrail is unknown."""
    import msgspec  # with the engine (numpy): see compare()

    from workbench.compare import contract  # numpy: see compare()

    effect = primary.effect
    verdict, why = contract.withhold(effect.verdict, unknown)
    if not why:
        return primary
    reason = f"{effect.reason}; {why}" if isinstance(effect.reason, str) and effect.reason else why
    effect = msgspec.structs.replace(effect, verdict=verdict, reason=reason)
    return msgspec.structs.replace(primary, effect=effect)


def _ref(run: "RunRecord") -> int | str:
    """A run by store id, or by label before it is stored."""
    return run.id if run.id is not None else run.label


def inspect(
    baseline: Sequence["RunRecord"],
    candidate: Sequence["RunRecord"],
    lens: "str | Lens | None" = None,
    changes: dict[str, tuple[str | None, str | None] | None] | None = None,
    accepts: dict[str, str] | None = None,
    extensions: Iterable[str | Path] = (),
    windows: int = 8,
    top: int = 10,
    control: Sequence["RunRecord"] | None = None,
    guardrails: Sequence["GuardrailSpec"] = (),
    steps: str = "all",
    top_ranks: int = 8,
    reduced: "tuple[Sequence[Reduced], Sequence[Reduced]] | None" = None,
) -> "InspectResult":
    """Per-phase distributions, the change over time inside the runs, and the operations
    that moved most; refused pairs (see ``compare``) get no detail. ``steps="steady"``
    restricts both sides to their steady steps (training), listing what was left out.
    ``reduced``: runs loaded without their operations tables, those reduced already over the
    same steps (``workbench.training.op_rates``)."""
    from workbench.compare.inspect_data import StepRestriction, build_inspect  # numpy
    from workbench.training.window_kind import steady_steps  # numpy

    restriction = None
    if steps == "steady":
        excluded: list[dict[str, object]] = []
        sides = []
        for runs in (baseline, candidate):
            kept = []
            for run in runs:
                clone, out = steady_steps(run)
                kept.append(clone)
                excluded.append(
                    {
                        "run": _ref(run),
                        "steps": out,
                        **({} if "kind_evidence" in run.window else {"note": "no step classification: kept as it is"}),
                    }
                )
            sides.append(kept)
        baseline, candidate = sides
        restriction = StepRestriction(kept="steady", excluded=tuple(excluded))
    elif steps != "all":
        raise UsageError(f"--steps {steps!r}: expected all or steady")
    if reduced is not None and any(r.steps != steps for side in reduced for r in side):
        raise ValueError(f"operations tables reduced over other steps than {steps!r}")
    comparison = compare(
        baseline, candidate, lens, changes, accepts, extensions, control=control, guardrails=guardrails
    )
    return build_inspect(
        comparison,
        baseline,
        candidate,
        windows=windows,
        top=top,
        steps=restriction,
        top_ranks=top_ranks,
        reduced=reduced,
    )


def parse_change(text: str) -> tuple[str, tuple[str | None, str | None] | None]:
    """``DIM``, ``DIM=FROM:TO`` or ``DIM=FROM->TO`` (use ``->`` when a value has ``:``)."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not name:
        raise UsageError(f"--change {text!r}: expected DIM=FROM:TO")
    if not sep:
        return name, None
    if "->" in rest:
        frm, _, to = rest.partition("->")
    elif rest.count(":") == 1:
        frm, _, to = rest.partition(":")
    else:
        raise UsageError(f"--change {text!r}: expected DIM=FROM:TO (or DIM=FROM->TO when a value contains ':')")
    return name, (frm.strip() or None, to.strip() or None)


def parse_accepts(accepts: tuple[str, ...], whys: tuple[str, ...]) -> dict[str, str]:
    """``--accept a,b --why TEXT``: one reason for several dimensions, or one --why per
    --accept, in order; every dimension gets its own recorded acceptance."""
    if len(whys) == 1 and accepts:
        whys = whys * len(accepts)
    if len(accepts) != len(whys):
        raise UsageError(
            f"every --accept needs its own --why TEXT, or one --why for all ({len(accepts)} --accept, {len(whys)} "
            f"--why)"
        )
    out: dict[str, str] = {}
    for names, why in zip(accepts, whys):
        for name in (n.strip() for n in names.split(",")):
            if not name:
                raise UsageError(f"--accept {names!r}: an empty dimension name")
            out[name] = why
    return out


__all__ = ["compare", "inspect", "parse_accepts", "parse_change", "resolve_lens"]
