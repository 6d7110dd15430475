"""wb import: bring captures into the store."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from workbench.cli.cluster_progress import ClusterBar
from workbench.cli.import_progress import ImportBar
from workbench.cli.context import emit_json, open_store_from, stderr_console
from workbench.dims_file import FolderDimensions
from workbench.errors import UsageError
from workbench.importers import all_importers, import_options
from workbench.inputs import ImportOptions
from workbench.ingest import import_files, parse_dim_options
from workbench.numbers import size
from workbench.textsafe import clean, markup_safe


class _ImportCommand(click.Command):
    """``wb import`` with each importer's own flags (``Importer.options``), added from the
    registry when the command runs or shows its help, not when ``wb --help`` lists it."""

    _built_for: tuple | None = None

    @property
    def params(self) -> list[click.Parameter]:
        importers = all_importers()  # cached: rebuilt only when the registry is (tests add plug-ins)
        if self._built_for is not importers:
            self._built_for = importers
            at = next(i for i, p in enumerate(self._own) if p.name == "cluster")
            taken = {n for p in self._own for n in (p.name, *p.opts)}
            self._params = [*self._own[:at], *_registry_options(taken), *self._own[at:]]
        return self._params

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._own, self._built_for = list(value), None


def _registry_options(taken: set[str | None]) -> list[click.Option]:
    """A click option per importer option; one taken by ``wb import`` itself is left out
    with one line (it can only come from a plug-in: the built-ins are tested)."""
    out = []
    for option, formats in import_options():
        if option.flag in taken or option.param in taken:
            logging.getLogger("wb.plugins").warning(
                "wb: option %s of %s is taken by wb import; left out", option.flag, ", ".join(formats)
            )
            continue
        taken.update((option.flag, option.param))
        kind = click.IntRange(min=option.minimum) if option.type is int and option.minimum is not None else option.type
        # is_flag None, not False: an explicit False makes click take a value like "-1" for an option.
        out.append(
            click.Option(
                [option.flag, option.param],
                is_flag=True if option.type is bool else None,
                type=None if option.type is bool else kind,
                metavar=option.metavar,
                help=f"{option.help} [{', '.join(formats)}]",
            )
        )
    return out


@click.command("import", cls=_ImportCommand)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--label", help="Label for the imported run(s) instead of the file's own.")
@click.option(
    "--dim",
    "dims",
    multiple=True,
    metavar="NAME=VALUE",
    help="Declare a dimension the file does not carry (repeatable).",
)
@click.option(
    "--dims-file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Dimensions for every imported run, as in a wb.toml ([dimensions] NAME = VALUE); default: a wb.toml beside "
    "each file.",
)
@click.option(
    "--cluster",
    envvar="WB_CLUSTER",
    metavar="ADDRESS",
    help="Read rank traces on a Dask cluster: a scheduler address (tcp://host:8786), a scheduler file, "
    "or local:N to try it on N local workers. Needs wb[cluster]; see docs/scale.md.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the import report as JSON.")
@click.pass_context
def command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    label: str | None,
    dims: tuple[str, ...],
    dims_file: Path | None,
    cluster: str | None,
    as_json: bool,
    **given: object,
) -> None:
    """Import capture files or directories (format detected from content).

    An import is one transaction: if any file is bad, nothing is written. A file
    already in the store (same SHA-256) is not read again; with --dim (or a wb.toml)
    the declarations go on its runs, as 'wb declare' would. The options marked [format]
    are read by the importers of those formats.
    """
    declared = FolderDimensions(parse_dim_options(dims), dims_file, roots=paths)
    # What the user gave, for the importers (a flag only when set), as they always got it.
    params = {k: v for k, v in given.items() if v is not None and v is not False}
    jobs = params.get("jobs")
    err = stderr_console()
    store = open_store_from(ctx)
    if cluster and jobs:
        raise UsageError("--jobs sets local worker processes and --cluster a Dask cluster: give one of them")
    if cluster:
        report, remote = _import_on_cluster(
            cluster, err, store, paths, ImportOptions(label=label, params=params), declared
        )
    else:
        with ImportBar(err, paths) as on_progress:
            report = import_files(
                store, paths, ImportOptions(label=label, params=params, progress=on_progress), dims=declared
            )
        remote = None
    if as_json:
        emit_json({**report.to_json(), **({"cluster": remote} if remote else {})})
        return
    if remote:
        err.print(
            f"cluster: {remote['ranks']} rank files, {size(remote['read_bytes'])} read on {remote['workers']} "
            f"workers, "
            f"{size(remote['returned_bytes'])} returned"
        )
    for path, why in report.skipped:
        err.print(f"skipped {markup_safe(path)}: {markup_safe(why)}")
    notes = dict(report.notes)
    for path, run_ids in report.imported:
        runs = ", ".join(map(str, run_ids)) if run_ids else "no runs"
        click.echo(f"imported {clean(path)} -> run {runs}")  # a file name found in a directory is untrusted
        for run in store.load_runs(list(run_ids), tables=[]) if run_ids else ():
            if run.window.get("step_is"):  # a training trace that is not training steps (docs/training.md)
                err.print(
                    f"  run {run.id}: each step is {markup_safe(run.window['step_is'])}; compare it only with "
                    f"forward-only traces"
                )
        for run_id in run_ids:  # what the lens check found, and the importer's warnings (docs/lenses.md)
            for note in notes.pop(run_id, ()):
                err.print(f"  run {run_id}: {markup_safe(note)}", highlight=False)
    for path, run_ids in report.linked:
        err.print(
            f"read again with the new files (already stored): {markup_safe(path)} -> run {', '.join(map(str, run_ids))}"
        )
    for path, done in report.declared:
        changed = [d for d in done if d.changed]
        what = (
            ", ".join(f"run {d.run_id} {d.name}={d.value}" for d in changed) or "nothing new (the runs already say so)"
        )
        click.echo(f"already stored {clean(path)}: declared {clean(what)}")
    if not report.imported and not report.declared:
        err.print("nothing new imported")


def _import_on_cluster(spec, err, store, paths, options, declared):
    """The import with rank traces read on the Dask cluster ``spec``; also what travelled."""
    from workbench.training.cluster import open_cluster  # numpy (the rank readers), Dask later: only for --cluster

    bar = ClusterBar(err)
    try:
        with open_cluster(spec, progress=bar) as remote:
            options.rank_executor = remote
            report = import_files(store, paths, options, dims=declared)
            workers = remote.workers
    finally:
        bar.close()
    return report, {"address": spec, "workers": workers, **remote.transfer.to_json()}
