"""wb demo: load the bundled examples into the demo store and open them."""

from __future__ import annotations

import sys

import click

from captures import SYNTHETIC_NOTICE
from store import open_store
from store.engine import demo_store_url
from store.errors import StoreError
from workbench.cli.context import emit_json, store_url_from
from workbench.cli.tui_launch import launch_tui
from workbench.demo import load_demo
from workbench.demo_report import print_demo_report
from workbench.errors import WbError


@click.command("demo")
@click.option("--headless", is_flag=True, help="Print the demo comparisons instead of opening the TUI.")
@click.option("--json", "as_json", is_flag=True, help="Print what was loaded as JSON (implies --headless).")
@click.pass_context
def command(ctx: click.Context, headless: bool, as_json: bool) -> None:
    """Load the seed's three worked examples (inference, training, fleet) into a
    separate demo store ($XDG_DATA_HOME/wb/demo.sqlite, or --store), idempotently."""
    url = store_url_from(ctx) or demo_store_url()
    try:
        store = open_store(url)
    except StoreError as exc:
        raise WbError(str(exc)) from None
    loaded = load_demo(store)
    if as_json:
        emit_json(
            {
                "note": SYNTHETIC_NOTICE,
                "store": store.display_url,
                "imported_runs": loaded.imported_runs,
                "already_loaded_files": loaded.already_there,
                "runs_by_lens": loaded.runs_by_lens,
                "investigations": loaded.investigations,
            }
        )
        return
    say = click.echo if headless or not sys.stdout.isatty() else (lambda m: click.echo(m, err=True))
    if loaded.imported_runs:
        say(f"demo: loaded {len(loaded.imported_runs)} runs into {store.display_url}")
    else:
        say(f"demo: already loaded ({loaded.already_there} captures) in {store.display_url}")
    say("demo: runs by lens: " + ", ".join(f"{lens} {n}" for lens, n in sorted(loaded.runs_by_lens.items())))
    if not headless and sys.stdout.isatty() and sys.stdin.isatty():
        launch_tui(store_url=store.url, demo=True)
        return

    print_demo_report(store)
