"""``wb bisect``: the first bad change, found with controlled, sequentially stopped reruns."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from store.engine import work_dir
from workbench.bisect.bisection import run, start
from workbench.bisect.format import render_bisection
from workbench.bisect.result import BisectionReport, Spec
from workbench.bisect.workflow import bisect_errors
from workbench.cli.commands.rerun import _Display, _argv
from workbench.cli.context import emit_json, stderr_console, workbench_from
from workbench.errors import UsageError
from workbench.textsafe import markup_safe
from workbench.rerun.plan import check_rounds, check_timeout
from workbench.usecases.reruns import ShowBisection, WorkbenchBisectRecords


@click.group("bisect")
def command() -> None:
    """Find the first bad change: each step an interleaved A/B/A′ rerun that stops once decided.

    \b
    wb bisect start --repo . --good v0.8.2 --bad v0.8.3 \\
        --build "make -j8" --bench "./bench --steps 50" [--max-rounds 20] [--delta 0.02]
    wb bisect start --candidates versions.txt \\
        --build "pip install --target . torch=={version}" --bench "python bench.py"
    wb bisect status [NAME]     wb bisect resume [NAME]     wb bisect report [NAME] [--json]

    Every step compares a candidate (B) with the good endpoint (A, and A′ = A again) under
    sequential stopping; the bench command writes a native capture to $WB_CAPTURE_OUT.
    {rev}, {version} and {workspace} in the commands are replaced per candidate; builds and
    benchmarks run in the candidate's workspace (a clean git worktree, or a directory).
    """


@command.command("start")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Git repository (default: the current directory, unless --candidates).",
)
@click.option("--good", help="A commit (or ref) known to be fast.")
@click.option("--bad", help="A later commit known to be slow.")
@click.option(
    "--candidates",
    "candidates_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Ordered versions, one a line, good first and bad last (instead of git).",
)
@click.option(
    "--build",
    help="Build command, run once per candidate in its workspace (split like a shell would; no shell runs it).",
)
@click.option("--bench", required=True, help="Benchmark command; writes a native capture to $WB_CAPTURE_OUT.")
@click.option("--lens", type=click.Choice(["training", "inference", "fleet"]), default="training", show_default=True)
@click.option("--metric", help="Sample column to compare (default: the lens's rerun metric).")
@click.option("--statistic", type=click.Choice(["mean", "median", "p95"]), help="Per-run statistic.")
@click.option("--higher-is-better", is_flag=True, help="The metric is a rate.")
@click.option(
    "--delta", type=float, default=0.02, show_default=True, help="Practical band: effects within ±δ count as no change."
)
@click.option(
    "--max-rounds",
    type=int,
    default=20,
    show_default=True,
    help="Round cap of each step (each stops as soon as decided).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=600.0,
    show_default=True,
    help="Per build and per run timeout, seconds.",
)
@click.option(
    "--spending", type=click.Choice(["obrien-fleming", "pocock"]), default="obrien-fleming", show_default=True
)
@click.option("--name", help="A name for this bisection (default: from good and bad).")
@click.option(
    "--investigation", type=int, help="Pin the result to this investigation (an observation with its evidence)."
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Workspaces, builds and captures (default: under the wb data directory).",
)
@click.option(
    "--keep-workspaces",
    is_flag=True,
    help="Keep each candidate's workspace (worktree and build) when the bisection ends; listed in the report.",
)
@click.option("--json", "as_json", is_flag=True, help="Write the report as one JSON document to stdout.")
@click.pass_context
def start_cmd(
    ctx: click.Context,
    repo: Path | None,
    good: str | None,
    bad: str | None,
    candidates_file: Path | None,
    build: str | None,
    bench: str,
    lens: str,
    metric: str | None,
    statistic: str | None,
    higher_is_better: bool,
    delta: float,
    max_rounds: int,
    timeout_s: float,
    spending: str,
    name: str | None,
    investigation: int | None,
    workdir: Path | None,
    keep_workspaces: bool,
    as_json: bool,
) -> None:
    """Check the endpoints, then bisect to the first bad change."""
    if candidates_file is None:
        if not good or not bad:
            raise UsageError("wb bisect start needs --good and --bad (or --candidates FILE)")
        repo = (repo or Path.cwd()).resolve()
    elif good or bad or repo:
        raise UsageError("--candidates gives the versions itself: leave out --repo, --good and --bad")
    check_rounds(max_rounds, "--max-rounds")
    check_timeout(timeout_s, "--timeout")
    default = f"bisect-{good}..{bad}" if candidates_file is None else f"bisect-{candidates_file.stem}"
    name = name or re.sub(r"[^A-Za-z0-9_.-]+", "_", default)[:60]
    with workbench_from(ctx) as wb:
        # Built and benchmarked here; its records go where the store is (a server's, through it).
        records = WorkbenchBisectRecords(wb)
        root = (workdir or work_dir(wb.url) / "bisect" / name).resolve()  # beside its store
        spec = Spec(
            name=name,
            bench=tuple(_argv(bench, "--bench") or ()),
            build=_tuple(_argv(build, "--build")),
            workdir=str(root),
            repo=str(repo) if repo else None,
            good=good or "",
            bad=bad or "",
            candidates_file=str(candidates_file.resolve()) if candidates_file else None,
            lens=lens,
            metric=metric,
            statistic=statistic,
            higher_is_better=higher_is_better,
            delta=delta,
            max_rounds=max_rounds,
            timeout_s=timeout_s,
            spending=spending,
            investigation=investigation,
            keep_workspaces=keep_workspaces,
        )
        with bisect_errors():
            bisection_id = start(records, spec)
            click.echo(f"bisection {bisection_id} ({name}): workspaces under {root}", err=True)
            _run(records, bisection_id, as_json)


@command.command("resume")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Write the report as one JSON document to stdout.")
@click.pass_context
def resume_cmd(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Continue a bisection (the latest by default) where it stopped."""
    with bisect_errors(), workbench_from(ctx) as wb:
        _run(WorkbenchBisectRecords(wb), name, as_json)


@command.command("status")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.pass_context
def status_cmd(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """The open range and the steps done so far."""
    _stored(ctx, name, as_json)


@command.command("report")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
@click.pass_context
def report_cmd(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """The result: the first bad change, its effect, splits and skips."""
    _stored(ctx, name, as_json)


def _stored(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """A bisection as stored (status and report read the same record; the text leads with
    the open range while it runs, and with the result once it has ended)."""
    with workbench_from(ctx) as wb:
        result = wb.call(ShowBisection(bisection=name))
    _show(result, as_json)


def _run(store: Any, ref: Any, as_json: bool) -> None:
    try:
        result = run(store, ref, observer=_Display())
    except KeyboardInterrupt:
        stderr_console().print(
            f"[yellow]interrupted:[/] finished steps and runs are kept; continue with: wb bisect resume "
            f"{markup_safe(str(ref or ''))}"
        )
        raise
    _show(result, as_json)


def _show(result: BisectionReport, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(render_bisection(result))


def _tuple(argv: list[str] | None) -> tuple[str, ...] | None:
    return tuple(argv) if argv is not None else None
