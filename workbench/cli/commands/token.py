"""wb token: the API tokens of 'wb serve'."""

from __future__ import annotations

import click

from workbench.cli.context import emit_json, workbench_from
from workbench.textsafe import clean

ROLES = ("read", "upload", "admin")


@click.group("token")
def command() -> None:
    """API tokens for 'wb serve': add (shown once), list, revoke.

    Roles: read (runs, show, compare, bundles), upload (also captures, declarations,
    comparisons stored in an investigation), admin (everything). The store keeps only a
    token's SHA-256.
    """


def _usecases():
    import workbench.usecases.tokens  # the token table (SQLAlchemy): not for 'wb token --help'

    return workbench.usecases.tokens


@command.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ROLES), required=True, help="What the token may do.")
@click.option("--json", "as_json", is_flag=True, help="Print {name, role, token} as JSON.")
@click.pass_context
def add(ctx: click.Context, name: str, role: str, as_json: bool) -> None:
    """Make a token for NAME (a node, a CI job) and print it, once."""
    with workbench_from(ctx) as wb:
        token = wb.call(_usecases().AddToken(name=name, role=role)).token
    if as_json:
        emit_json({"name": name, "role": role, "token": token})
        return
    click.echo(token)
    click.echo(f"token {clean(name)!r} ({role}): shown once, only its SHA-256 is kept; give it as WB_TOKEN", err=True)


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> None:
    """List tokens: name, role, created, revoked (never the token)."""
    with workbench_from(ctx) as wb:
        found = wb.call(_usecases().ListTokens()).items
    if as_json:
        emit_json([t.to_json() for t in found])
        return
    if not found:
        click.echo("no tokens yet: 'wb token add NAME --role read|upload|admin'")
        return
    for t in found:
        state = f"revoked {t.revoked_at}" if t.revoked_at else "active"
        click.echo(f"{clean(t.name):<24} {t.role:<7} created {t.created_at}  {state}")


@command.command("revoke")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print {name, revoked} as JSON.")
@click.pass_context
def revoke(ctx: click.Context, name: str, as_json: bool) -> None:
    """Revoke NAME's token: the next request with it is refused (401)."""
    with workbench_from(ctx) as wb:
        count = wb.call(_usecases().RevokeToken(name=name)).revoked
    if as_json:
        emit_json({"name": name, "revoked": count})
        return
    click.echo(f"revoked {clean(name)!r}" if count else f"{clean(name)!r} was already revoked")
