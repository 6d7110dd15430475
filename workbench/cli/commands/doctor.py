"""``wb doctor``: this machine's preflight (GPU identity and settings, toolkit, software)."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json
from workbench.rerun.preflight import render_preflight, run_preflight


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document to stdout.")
def command(as_json: bool) -> None:
    """Show what the rerun preflight sees on this machine, in 80 columns or --json.

    Every GPU field says how it was read: ran, no data (the device did not say) or
    unavailable (no NVML, no driver, no GPU). No GPU is not an error: fields are unknown.
    """
    pf = run_preflight()
    if as_json:
        emit_json(pf.to_json())
        return
    click.echo(render_preflight(pf))
