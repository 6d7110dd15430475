"""``wb --help`` lists the commands from ``workbench.cli.commands.SUMMARIES`` without
importing their modules; the table must say what the modules say."""

import importlib
import pkgutil
import subprocess
import sys

import click

from workbench.cli import cli, commands
from workbench.cli.commands import SUMMARIES, module_name


def _modules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(commands.__path__) if not info.name.startswith("_")}


def test_every_command_module_has_a_summary_and_every_summary_a_module():
    assert {module_name(name) for name in SUMMARIES} == _modules()


def test_summaries_are_the_commands_own_first_sentence():
    for name, summary in SUMMARIES.items():
        command = importlib.import_module(f"workbench.cli.commands.{module_name(name)}").command
        assert command.name == name
        assert not command.hidden
        assert command.get_short_help_str(10**6) == summary, f"SUMMARIES[{name!r}] differs from the command's help"


def test_help_lists_what_the_commands_would_list_at_any_width():
    eager = {name: importlib.import_module(f"workbench.cli.commands.{module_name(name)}").command for name in SUMMARIES}
    for width in (40, 60, 80, 100):
        lazy_text = cli.get_help(click.Context(cli, max_content_width=width, terminal_width=width))
        listed = [line.split(None, 1) for line in lazy_text.split("Commands:\n", 1)[1].splitlines() if line.strip()]
        limit = min(width, 100) - 6 - max(map(len, SUMMARIES))
        want = [[name, eager[name].get_short_help_str(limit)] for name in sorted(SUMMARIES)]
        assert [row[0] for row in listed] == [row[0] for row in want]
        for (name, shown), (_, expected) in zip(listed, want):
            assert " ".join(shown.split()) == expected, (width, name)


def test_help_imports_no_command_module():
    probe = (
        "import sys\nfrom workbench.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED:' + ','.join(sorted(m for m in sys.modules if m.startswith('workbench.cli.commands.'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert "LOADED:\n" in out.stdout or out.stdout.rstrip().endswith("LOADED:"), out.stdout + out.stderr
    assert "compare" in out.stdout and "rerun" in out.stdout


def test_unknown_command_is_a_usage_error():
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "no-such-command"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "No such command" in out.stderr
