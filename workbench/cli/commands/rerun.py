"""``wb rerun``: plan, run, resume and report interleaved reruns with an A/A control."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click

from workbench.cli.context import emit_json, stderr_console, workbench_from
from workbench.compare import parse_accepts, parse_change
from workbench.errors import EXIT_REFUSED, UsageError, WbError
from workbench.rerun import workflow as plans
from workbench.rerun.execute import Blocked, Executor
from workbench.rerun.plan import ARTIFACT_ROLES, build_plan, load_plan_file
from workbench.rerun.plan_summary import DryRun
from workbench.rerun.preflight import render_preflight, run_preflight
from workbench.rerun.report import render_rerun_report
from workbench.textsafe import clean, markup_safe
from workbench.usecases.reruns import ListPlans, LoadPlan, PlanReport, SavePlan, WorkbenchLedger
from workbench.usecases.transport import Workbench


@click.group("rerun")
def command() -> None:
    """Verify a change with interleaved reruns: A, B and an A/A control A′ in every round.

    \b
    wb rerun plan NAME --lens training --baseline "./bench --old" --candidate "./bench --new" \\
        --artifact ./bench --rounds 10
    wb rerun plan --from-file plan.toml
    wb rerun run NAME [--dry-run]      (Ctrl-C keeps finished runs)
    wb rerun resume NAME
    wb rerun report NAME [--json]

    Each run gets WB_CAPTURE_OUT and must write a native capture there (docs/verify.md).
    """


# -- plan ---------------------------------------------------------------------------------


def _parse_env(values: tuple[str, ...], what: str) -> dict[str, str]:
    env = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{what} expects NAME=VALUE, got {item!r}")
        env[key] = value
    return env


def _argv(text: str | None, what: str) -> list[str] | None:
    if text is None:
        return None
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{what}: cannot split {text!r} into arguments ({exc})") from None
    if not argv:
        raise UsageError(f"{what}: empty command")
    return argv


def _artifact_options(values: tuple[str, ...]) -> list[dict[str, str]]:
    out = []
    for item in values:
        path, sep, role = item.rpartition(":")
        if sep and role in ARTIFACT_ROLES and path:
            out.append({"path": path, "role": role})
        else:
            out.append({"path": item, "role": "input"})
    return out


@command.command("plan")
@click.argument("name", required=False)
@click.option(
    "--from-file",
    "from_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the plan from a TOML file (options below override it).",
)
@click.option("--lens", type=click.Choice(["training", "inference", "fleet"]), help="The lens the captures belong to.")
@click.option("--baseline", help='Baseline command, split like a shell would (no shell runs it): "./bench --old".')
@click.option("--candidate", help="Candidate command.")
@click.option("--control", help="A′ command: an independent build of the baseline (default: the baseline command).")
@click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), help="Working directory of every arm.")
@click.option("--env", "env_all", multiple=True, metavar="NAME=VALUE", help="Extra environment for every arm.")
@click.option("--baseline-env", multiple=True, metavar="NAME=VALUE", help="Extra environment for A and A′.")
@click.option("--candidate-env", multiple=True, metavar="NAME=VALUE", help="Extra environment for B.")
@click.option(
    "--artifact",
    "artifacts",
    multiple=True,
    metavar="PATH[:ROLE]",
    help="A file the experiment depends on (pinned by SHA-256); role: executable, library, input, model, source, "
    "other.",
)
@click.option(
    "--rounds",
    type=int,
    help="Rounds of A, B, A′ (default 10; warns below 5, refuses below 3); the maximum with --stopping sequential.",
)
@click.option(
    "--stopping",
    type=click.Choice(["fixed", "sequential"]),
    help="fixed (default): run every round; sequential: look after each round from 3 and stop once decided, α held "
    "over all looks.",
)
@click.option(
    "--spending",
    type=click.Choice(["obrien-fleming", "pocock"]),
    help="Alpha-spending function of a sequential plan (default obrien-fleming).",
)
@click.option(
    "--order", type=click.Choice(["random", "abba"]), help="Arm order in each round (default random, seeded)."
)
@click.option("--seed", type=int, help="Seed of the random order (default: drawn and recorded).")
@click.option("--timeout", "timeout_s", type=float, help="Per-run timeout in seconds (default 600).")
@click.option("--metric", help="Sample column to compare (default: step_ms for training, ttft_ms for inference).")
@click.option(
    "--statistic",
    type=click.Choice(["mean", "median", "p95"]),
    help="Per-run statistic (default mean; p95 for inference).",
)
@click.option("--higher-is-better", is_flag=True, default=None, help="The metric is a rate (higher is better).")
@click.option("--delta", type=float, help="Equivalence band δ as a fraction (default 0.02).")
@click.option("--warmup-runs", type=int, help="Untimed runs of each command before round 1 (default 0).")
@click.option(
    "--warmup-steps",
    help='Leading samples to drop per run: "capture" (default: the capture already excludes warm-up), "auto", or a '
    "number.",
)
@click.option(
    "--change",
    "changes",
    multiple=True,
    metavar="DIM[=FROM:TO]",
    help="The change under test, as for wb compare: any other must-match difference between A and B refuses the "
    "verdict.",
)
@click.option(
    "--accept",
    "accepts",
    multiple=True,
    metavar="DIM[,DIM...]",
    help="Accept a must-match difference between A and B (needs a --why; recorded in the plan).",
)
@click.option("--why", "whys", multiple=True, metavar="TEXT", help="The reason for the --accept before it.")
@click.option("--list", "list_", is_flag=True, help="List the plans in the store.")
@click.option(
    "--investigation",
    "investigation",
    metavar="ID",
    help="The investigation the plan verifies: only its plans' results can decide its hypotheses.",
)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.pass_context
def plan_cmd(
    ctx: click.Context,
    name: str | None,
    from_file: Path | None,
    lens: str | None,
    baseline: str | None,
    candidate: str | None,
    control: str | None,
    cwd: Path | None,
    env_all: tuple[str, ...],
    baseline_env: tuple[str, ...],
    candidate_env: tuple[str, ...],
    artifacts: tuple[str, ...],
    rounds: int | None,
    order: str | None,
    seed: int | None,
    timeout_s: float | None,
    metric: str | None,
    statistic: str | None,
    higher_is_better: bool | None,
    delta: float | None,
    warmup_runs: int | None,
    warmup_steps: str | None,
    list_: bool,
    as_json: bool,
    stopping: str | None = None,
    spending: str | None = None,
    changes: tuple[str, ...] = (),
    accepts: tuple[str, ...] = (),
    whys: tuple[str, ...] = (),
    investigation: str | None = None,
) -> None:
    """Create a rerun plan (or --list them). A plan is immutable once it has run.

    With --investigation ID the plan belongs to that investigation: its executions'
    comparisons are evidence there (wb hypothesis status N supported --evidence plan=NAME),
    and the investigation's frame guardrails are judged on it.
    """
    with plans.plan_errors():
        _plan(
            ctx,
            name,
            from_file,
            lens,
            baseline,
            candidate,
            control,
            cwd,
            env_all,
            baseline_env,
            candidate_env,
            artifacts,
            rounds,
            order,
            seed,
            timeout_s,
            metric,
            statistic,
            higher_is_better,
            delta,
            warmup_runs,
            warmup_steps,
            list_,
            as_json,
            stopping,
            spending,
            changes,
            accepts,
            whys,
            investigation,
        )


def _plan(
    ctx: click.Context,
    name: str | None,
    from_file: Path | None,
    lens: str | None,
    baseline: str | None,
    candidate: str | None,
    control: str | None,
    cwd: Path | None,
    env_all: tuple[str, ...],
    baseline_env: tuple[str, ...],
    candidate_env: tuple[str, ...],
    artifacts: tuple[str, ...],
    rounds: int | None,
    order: str | None,
    seed: int | None,
    timeout_s: float | None,
    metric: str | None,
    statistic: str | None,
    higher_is_better: bool | None,
    delta: float | None,
    warmup_runs: int | None,
    warmup_steps: str | None,
    list_: bool,
    as_json: bool,
    stopping: str | None,
    spending: str | None,
    changes: tuple[str, ...] = (),
    accepts: tuple[str, ...] = (),
    whys: tuple[str, ...] = (),
    investigation: str | None = None,
) -> None:
    if list_:
        with workbench_from(ctx) as wb:
            listing = wb.call(ListPlans(investigation=investigation)).listing
        if as_json:
            emit_json(listing.to_json())
        else:
            for r in listing.plans:
                click.echo(f"{r.id:>4}  {clean(r.name)[:40]:<40} {r.lens:<10} {r.digest[:12]}")
            if not listing.plans:
                click.echo("no rerun plans (make one with 'wb rerun plan NAME ...')", err=True)
        return

    def command_table(argv: list[str] | None, extra_env: dict[str, str]) -> dict[str, object] | None:
        if argv is None:
            return None
        table: dict[str, object] = {"argv": argv, "env": {**_parse_env(env_all, "--env"), **extra_env}}
        if cwd is not None:
            table["cwd"] = str(cwd)
        return table

    options: dict[str, object] = {
        "name": name,
        "lens": lens,
        "rounds": rounds,
        "order": order,
        "seed": seed,
        "timeout_s": timeout_s,
        "metric": metric,
        "statistic": statistic,
        "higher_is_better": higher_is_better,
        "delta": delta,
        "stopping": stopping,
        "spending": spending,
        "baseline": command_table(_argv(baseline, "--baseline"), _parse_env(baseline_env, "--baseline-env")),
        "candidate": command_table(_argv(candidate, "--candidate"), _parse_env(candidate_env, "--candidate-env")),
        "control": command_table(_argv(control, "--control"), _parse_env(baseline_env, "--baseline-env")),
    }
    if artifacts:
        options["artifacts"] = _artifact_options(artifacts)
    if changes:  # the plan's form of wb compare's --change: DIM = [FROM, TO] or []
        options["change"] = {dim: [v or "" for v in pair] if pair else [] for dim, pair in map(parse_change, changes)}
    if accepts or whys:
        options["accept"] = parse_accepts(accepts, whys)
    if warmup_runs is not None or warmup_steps is not None:
        steps: Any = (
            warmup_steps if warmup_steps in (None, "capture", "auto") else _int_option(warmup_steps, "--warmup-steps")
        )
        options["warmup"] = {k: v for k, v in (("runs", warmup_runs), ("steps", steps)) if v is not None}
    if from_file is not None:
        plan = load_plan_file(from_file, options)
    else:
        if not name:
            raise UsageError("wb rerun plan needs a NAME (or --from-file, or --list)")
        plan = build_plan({k: v for k, v in options.items() if v is not None})
    # The machine the plan is for: later executions must find the same one. Saved where the store is,
    # with the investigation's frame guardrails (judged at Verify too).
    plan = plan.with_environment(run_preflight().environment)
    with workbench_from(ctx) as wb:
        summary = wb.call(SavePlan(plan=plan, investigation=investigation)).saved
    plan = summary.plan
    err = stderr_console()
    for w in summary.warnings:
        err.print(f"[yellow]warning:[/] {markup_safe(w)}")
    if as_json:
        emit_json(summary.to_json())
        return
    verb = {"added": "saved", "unchanged": "unchanged (same digest)", "replaced": "replaced (it had not run yet)"}[
        summary.status
    ]
    click.echo(f"plan {summary.id} {clean(plan.name)}: {verb}; digest {summary.digest[:16]}")
    for label, cmd in (("A ", plan.baseline), ("B ", plan.candidate), ("A′", plan.command("A'"))):
        click.echo(f"  {label} {_show_argv(cmd.argv)}")
    click.echo(
        f"  {plan.rounds} rounds, {plan.order} order (seed {plan.seed}), timeout {plan.timeout_s:g} s, "
        f"{len(plan.artifacts)} artifact(s), {len(plan.guardrails)} guardrail(s)"
    )
    click.echo(f"next: wb rerun run {clean(plan.name)} --dry-run")


def _int_option(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f'{what}: "capture", "auto" or a number, got {text!r}') from None


def _show_argv(argv: Any) -> str:
    return clean(shlex.join(list(argv)))


# -- run / resume -------------------------------------------------------------------------


class _Display:
    """The progress display on stderr: round, arm, run, elapsed and the live effect."""

    def __init__(self) -> None:
        self.console = stderr_console()
        self.live = self.console.is_terminal
        self.progress: Any = None
        self.task: Any = None
        self.total = 0
        self.rounds = 0
        self.effect = ""

    def begin(self, plan: Any, execution_id: int, total: int, done: int) -> None:
        # Rich: only to draw
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.total, self.rounds = total, plan.rounds
        self.console.print(
            f"execution {execution_id} of plan {markup_safe(plan.name)}: {total - done} of {total} runs to go"
        )
        if self.live:
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=10),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
            self.task = self.progress.add_task("starting", total=total, completed=done)

    def run_started(self, index: int, round_: int, arm: str, argv: list[str]) -> None:
        where = "warm-up" if round_ == 0 else f"round {round_}/{self.rounds}"
        text = f"{where} · {arm:<2} · run {index + 1}/{self.total}{self.effect}"
        if self.progress is not None:
            self.progress.update(self.task, description=text)

    def run_finished(self, outcome: Any, live: dict[str, float]) -> None:
        if live.get("rounds"):
            n = live["rounds"]
            self.effect = (
                f" · B/A {live['b_over_a']:.3f} A′/A {live['aprime_over_a']:.3f} ({n} round{'s' if n > 1 else ''})"
            )
        value = f"{outcome.statistic:.4g}" if outcome.statistic is not None else "-"
        line = (
            f"round {outcome.round} {outcome.arm:<2} {outcome.status:<6} {value:>9}  {outcome.wall_s or 0:6.2f} s"
            + (f"  {markup_safe(outcome.reason)}" if outcome.reason else "")
        )
        if self.progress is not None:
            self.progress.advance(self.task)
            self.progress.update(self.task, description=f"run {outcome.slot + 1}/{self.total}{self.effect}")
            if outcome.status != "ok":
                self.progress.console.print(f"[red]{line}[/]")
        else:
            self.console.print(line)

    def end(self, status: str) -> None:
        if self.progress is not None:
            self.progress.stop()


def _finish(wb: Workbench, plan_ref: str, execution_id: int | None, as_json: bool) -> None:
    done = wb.call(PlanReport(plan=str(plan_ref), execution=execution_id))
    if as_json:
        emit_json(done.report.with_id(done.comparison_id).to_json())
    else:
        click.echo(render_rerun_report(done.report))


def _execute(
    ctx: click.Context, plan_ref: str, *, resume: bool, new: bool, yes: bool, workdir: Path | None, as_json: bool
) -> None:
    """Run here, on this machine; every record goes where the store is (a server's, through it)."""
    with workbench_from(ctx) as wb:
        _execute_with(wb, plan_ref, resume=resume, new=new, yes=yes, workdir=workdir, as_json=as_json)


def _execute_with(
    wb: Workbench, plan_ref: str, *, resume: bool, new: bool, yes: bool, workdir: Path | None, as_json: bool
) -> None:
    err = stderr_console()
    plan = wb.call(LoadPlan(plan=plan_ref)).plan
    # Always show what will be launched; a plan from elsewhere needs an explicit yes.
    for label, arm in (("A ", "A"), ("B ", "B"), ("A′", "A'")):
        cmd = plan.command(arm)
        err.print(
            f"{label} {markup_safe(_show_argv(cmd.argv))}" + (f"  (cwd {markup_safe(cmd.cwd)})" if cmd.cwd else ""),
            soft_wrap=True,
        )
    confirmed = yes
    if plan.origin != "user" and not yes:
        if not err.is_terminal:
            raise WbError(
                f"plan {plan.name!r} came from {plan.origin}: confirm the commands above with --yes",
                exit_code=EXIT_REFUSED,
            )
        confirmed = click.confirm(f"plan came from {plan.origin}; run these commands?", default=False, err=True)
        if not confirmed:
            raise WbError("not confirmed; nothing was run", exit_code=EXIT_REFUSED)
    display = _Display()
    executor = Executor(WorkbenchLedger(wb), plan_ref, observer=display, workdir=workdir, confirmed=confirmed)
    try:
        execution_id = executor.reopen() if resume else executor.start(new=new)
    except Blocked as exc:
        if as_json:
            emit_json({"blocked": exc.preflight.blockers, "preflight": exc.preflight.to_json()})
        raise
    try:
        executor.run(execution_id)
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted:[/] finished runs are kept; continue with: wb rerun resume {markup_safe(plan.name)}"
        )
        raise
    _finish(wb, plan_ref, execution_id, as_json)


def _dry_run(ctx: click.Context, plan_ref: str, as_json: bool) -> None:
    with workbench_from(ctx) as wb:
        stored = wb.call(LoadPlan(plan=plan_ref))
    plan, digest = stored.plan, stored.digest
    pf = run_preflight(plan)
    dry = DryRun.of(plan, digest, pf)
    if as_json:
        emit_json(dry.to_json())
    else:
        click.echo(render_preflight(pf))
        click.echo("Schedule (nothing is run in a dry run)")
        by_round: dict[int, list[str]] = {}
        for slot in dry.schedule:
            by_round.setdefault(slot.round, []).append(slot.arm)
        for r, arms in by_round.items():
            click.echo(f"  {'warm-up' if r == 0 else f'round {r:>3}'}: {' '.join(arms)}")
        for arm in ("A", "B", "A'"):
            cmd = plan.command(arm)
            click.echo(f"  {arm:<2} {_show_argv(cmd.argv)}")
            for k, v in cmd.env.items():
                click.echo(f"       env {k}={_show_argv([v])}")
    if pf.blockers:
        raise WbError(f"plan {plan.name!r} would be blocked: {'; '.join(pf.blockers)}", exit_code=EXIT_REFUSED)


@command.command("run")
@click.argument("plan")
@click.option("--dry-run", is_flag=True, help="Show the preflight, the schedule and the commands; run nothing.")
@click.option("--yes", is_flag=True, help="Confirm the commands of a plan that came from a bundle.")
@click.option("--new", is_flag=True, help="Abandon an unfinished execution and start a fresh one.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to keep captures and logs (default: under the wb data directory).",
)
@click.option("--json", "as_json", is_flag=True, help="Write the comparison as one JSON document to stdout.")
@click.pass_context
def run_cmd(
    ctx: click.Context, plan: str, dry_run: bool, yes: bool, new: bool, workdir: Path | None, as_json: bool
) -> None:
    """Preflight, then run every round of PLAN (id or name) and report."""
    with plans.plan_errors():
        if dry_run:
            _dry_run(ctx, plan, as_json)
            return
        _execute(ctx, plan, resume=False, new=new, yes=yes, workdir=workdir, as_json=as_json)


@command.command("resume")
@click.argument("plan")
@click.option("--yes", is_flag=True, help="Confirm the commands of a plan that came from a bundle.")
@click.option("--json", "as_json", is_flag=True, help="Write the comparison as one JSON document to stdout.")
@click.pass_context
def resume_cmd(ctx: click.Context, plan: str, yes: bool, as_json: bool) -> None:
    """Continue PLAN's interrupted execution where it stopped (preflight again first)."""
    with plans.plan_errors():
        _execute(ctx, plan, resume=True, new=False, yes=yes, workdir=None, as_json=as_json)


@command.command("report")
@click.argument("plan")
@click.option("--execution", "execution_id", type=int, help="Which execution (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.pass_context
def report_cmd(ctx: click.Context, plan: str, execution_id: int | None, as_json: bool) -> None:
    """The comparison of PLAN's latest execution (or --execution N), even while it runs."""
    with workbench_from(ctx) as wb:
        _finish(wb, plan, execution_id, as_json)
