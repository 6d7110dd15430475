"""wb import: bring captures into the store."""

from __future__ import annotations

from pathlib import Path

import click

PROGRESS_MIN_BYTES = 8 << 20


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--label", help="Label for the imported run(s) instead of the file's own.")
@click.option("--dim", "dims", multiple=True, metavar="NAME=VALUE", help="Declare a dimension the file does not carry (repeatable).")
@click.option("--dims-file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Dimensions for every imported run, as in a wb.toml ([dimensions] NAME = VALUE); default: a wb.toml beside each file.")
@click.option("--scrape-pair", is_flag=True, help="Treat two Prometheus scrapes as before/after one run.")
@click.option("--tz", help="Time zone of naive timestamps (e.g. sacct output), e.g. UTC or Europe/Paris.")
@click.option("--from", "window_from", metavar="TIME", help="Start of the observation window (fleet).")
@click.option("--to", "window_to", metavar="TIME", help="End of the observation window (fleet).")
@click.option("--wait-target", "wait_target_s", type=float, metavar="SECONDS", help="Queue-wait target for service attainment (fleet).")
@click.option("--warmup-steps", type=click.IntRange(min=0), help="Steps to drop as warm-up from training traces (default 1).")
@click.option("--step-pattern", metavar="REGEX", help="NVTX range name that marks a step in Nsight exports.")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes for reading rank traces (default: by input size).")
@click.option("--cluster", envvar="WB_CLUSTER", metavar="ADDRESS",
              help="Read rank traces on a Dask cluster: a scheduler address (tcp://host:8786), a scheduler file, "
                   "or local:N to try it on N local workers. Needs wb[cluster]; see docs/scale.md.")
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@click.pass_context
def command(ctx: click.Context, paths: tuple[Path, ...], label: str | None, dims: tuple[str, ...], dims_file: Path | None, scrape_pair: bool,
            tz: str | None, window_from: str | None, window_to: str | None, wait_target_s: float | None,
            warmup_steps: int | None, step_pattern: str | None, jobs: int | None, cluster: str | None, as_json: bool) -> None:
    """Import capture files or directories (format detected from content).

    An import is one transaction: if any file is bad, nothing is written. A file
    already in the store (same SHA-256) is not read again; with --dim (or a wb.toml)
    the declarations go on its runs, as 'wb declare' would.
    """
    from workbench.cli.context import emit_json, open_store_from, stderr_console
    from workbench.importers.base import ImportOptions
    from workbench.dims_file import FolderDimensions
    from workbench.ingest import import_files, parse_dim_options
    from workbench.textsafe import clean, markup_safe

    declared = FolderDimensions(parse_dim_options(dims), dims_file)
    params = {k: v for k, v in {"scrape_pair": scrape_pair or None, "tz": tz, "window_from": window_from,
                                "window_to": window_to, "wait_target_s": wait_target_s, "warmup_steps": warmup_steps,
                                "step_pattern": step_pattern, "jobs": jobs}.items() if v is not None}
    err = stderr_console()
    store = open_store_from(ctx)
    store.prepare_writes()  # SQLAlchemy and the tables load while the files are read
    if cluster and jobs:
        from workbench.errors import UsageError

        raise UsageError("--jobs sets local worker processes and --cluster a Dask cluster: give one of them")
    if cluster:
        report, remote = _import_on_cluster(cluster, err, store, paths, ImportOptions(label=label, params=params), declared)
    else:
        with _Progress(err, paths) as on_progress:
            report = import_files(store, paths, ImportOptions(label=label, params=params, progress=on_progress), dims=declared)
        remote = None
    if as_json:
        emit_json({**report.to_json(), **({"cluster": remote} if remote else {})})
        return
    if remote:
        err.print(f"cluster: {remote['ranks']} rank files, {_size(remote['read_bytes'])} read on {remote['workers']} workers, "
                  f"{_size(remote['returned_bytes'])} returned")
    for path, why in report.skipped:
        err.print(f"skipped {markup_safe(path)}: {markup_safe(why)}")
    for path, run_ids in report.imported:
        runs = ", ".join(map(str, run_ids)) if run_ids else "no runs"
        click.echo(f"imported {clean(path)} -> run {runs}")  # a file name found in a directory is untrusted
    for path, run_ids in report.linked:
        err.print(f"read again with the new files (already stored): {markup_safe(path)} -> run {', '.join(map(str, run_ids))}")
    for path, done in report.declared:
        changed = [d for d in done if d.changed]
        what = ", ".join(f"run {d.run_id} {d.name}={d.value}" for d in changed) or "nothing new (the runs already say so)"
        click.echo(f"already stored {clean(path)}: declared {clean(what)}")
    if not report.imported and not report.declared:
        err.print("nothing new imported")


def _import_on_cluster(spec, err, store, paths, options, declared):
    """The import with rank traces read on the Dask cluster ``spec``; also what travelled."""
    from workbench.cli.cluster_progress import ClusterBar
    from workbench.ingest import import_files
    from workbench.training.cluster import open_cluster

    bar = ClusterBar(err)
    try:
        with open_cluster(spec, progress=bar) as remote:
            options.rank_executor = remote
            report = import_files(store, paths, options, dims=declared)
            workers = remote.workers
    finally:
        bar.close()
    return report, {"address": spec, "workers": workers, **remote.transfer.to_json()}


def _size(nbytes: int) -> str:
    from rich.filesize import decimal

    return decimal(nbytes)


class _Progress:
    """A progress bar on stderr for files big enough to wait for."""

    def __init__(self, console, paths: tuple[Path, ...]) -> None:
        self.console = console
        self.big = any(p.is_file() and p.stat().st_size >= PROGRESS_MIN_BYTES for p in paths)
        self.bar = None
        self.tasks: dict[Path, int] = {}

    def __enter__(self):
        if not self.big:
            return None
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=self.console, transient=True)
        self.bar.__enter__()
        return self._update

    def _update(self, path: Path, done: int, total: int) -> None:
        if path not in self.tasks:
            from workbench.textsafe import markup_safe

            self.tasks[path] = self.bar.add_task(markup_safe(path.name), total=total or None)
        self.bar.update(self.tasks[path], completed=done)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
