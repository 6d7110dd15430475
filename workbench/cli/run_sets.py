"""One way to name run sets on the command line: ``BASE... --vs CAND... [--control APRIME...]``.

``RunSetCommand`` reads the values after ``--vs`` (and ``--control``), up to the next
option, as that side's runs, and refuses a run named after the lists (it would
otherwise silently join the baseline). ``run_set_arguments`` declares the three sides;
``wb compare``, ``wb inspect`` and ``wb investigate compare`` use both, ``wb stats`` the
command class for its value lists. What the runs resolve to is checked by
``workbench.compare.run_sets.check_run_sets`` (the TUI's selection goes through it too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import click

from workbench.compare.run_sets import SHAPE
from workbench.errors import UsageError


def _is_option(token: str) -> bool:
    """An option word, not a value: ``-5`` and ``-0.5`` are values (``wb stats``), ``-`` is stdin."""
    if not token.startswith("-") or token == "-":
        return False
    try:
        float(token)
    except ValueError:
        return True
    return False


class RunSetCommand(click.Command):
    """A command whose list options (``LISTS``) take every value up to the next option."""

    LISTS: ClassVar[dict[str, str]] = {"--vs": "candidate run", "--control": "control run"}  # option: what it lists
    # Positional arguments (the baseline) must come before the first list.
    POSITIONALS_FIRST: ClassVar[bool] = True

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        arity = self._arity(ctx)
        out: list[str] = []
        after: str | None = None  # the last list option seen
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                out.extend(args[i:])
                break
            name, eq, inline = arg.partition("=")
            if name in self.LISTS and _is_option(name):
                values = [inline] if eq else []
                i += 1
                while i < len(args) and not _is_option(args[i]) and args[i] != "--":
                    values.append(args[i])
                    i += 1
                if not values:
                    raise UsageError(f"{name} needs at least one {self.LISTS[name]}")
                for value in values:
                    out += [name, value]
                after = name
                continue
            if _is_option(arg):
                takes = 0 if eq else arity.get(name, 0)
                out.extend(args[i : i + 1 + takes])
                i += 1 + takes
                continue
            if after is not None and self.POSITIONALS_FIRST:
                raise UsageError(
                    f"{arg!r} comes after the {after} list, past another option: name the baseline before --vs and "
                    f"each side's runs together ({SHAPE})"
                )
            out.append(arg)
            i += 1
        return super().parse_args(ctx, out)

    def _arity(self, ctx: click.Context) -> dict[str, int]:
        """How many values each option word takes (0 for flags)."""
        out: dict[str, int] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                takes = 0 if (param.is_flag or param.count) else param.nargs
                for word in [*param.opts, *param.secondary_opts]:
                    out[word] = takes
        return out


def run_set_arguments(f: Callable[..., Any]) -> Callable[..., Any]:
    """The three sides: BASELINE... (positional), ``--vs CAND...``, ``--control APRIME...``."""
    options = [
        click.argument("baseline", nargs=-1, required=True),
        click.option(
            "--vs",
            "candidate",
            multiple=True,
            metavar="CAND...",
            help="Candidate runs (ids or labels), after the baseline runs.",
        ),
        click.option(
            "--control",
            "control",
            multiple=True,
            metavar="APRIME...",
            help="A/A control: baseline-again runs (ids or labels), the noise floor of every effect.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f
