"""Every shell example in README.md and docs/*.md runs, so none can walk into a refusal
or a renamed option again.

Fenced blocks tagged ``sh``, ``bash`` or ``console`` are examples; their ``wb``
commands run in order, in-process, on a copy of one demo store built once for the
module, from a scratch directory where ``captures/``, ``tests/`` and ``docs/`` are the
repository's (so ``-o file`` writes land there, never in the repository). In
``console`` blocks only ``$ `` lines are commands (the rest is output). ``NAME=VALUE``
and ``export`` lines set variables. A ``compare``/``inspect`` that is refused fails the
test unless its line says ``# refused``. A block that cannot run here (it needs a GPU,
a PostgreSQL server, the user's own files, a minute of workload runs) is marked on the
line before its fence: ``<!-- doc-test: skip (the reason) -->``; those stay few.
Synopses are tagged ``text``; an untagged block may not hold a ``wb`` command.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "console"}
BLOCK = re.compile(
    r"^(?:<!--\s*doc-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->\n)?```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.S | re.M
)
MAX_SKIPPED = 12  # docs/server.md adds two: a server that runs until stopped, and a client of one


def blocks(path: Path):
    text = path.read_text(encoding="utf-8")
    for m in BLOCK.finditer(text):
        yield text[: m.start()].count("\n") + 1, m.group("lang"), m.group("body"), m.group("why")


def commands(lang: str, body: str) -> list[str]:
    """The commands of a block, continuation lines joined."""
    out: list[str] = []
    pending = ""
    for line in body.splitlines():
        if not pending and lang == "console":
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if not pending and not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        out.append(pending.strip())
        pending = ""
    return out


def all_examples():
    for path in DOCS:
        for line, lang, body, why in blocks(path):
            if lang in SHELL:
                yield path, line, lang, body, why


def test_examples_are_tagged_and_skips_are_few():
    untagged = [
        f"{p.relative_to(REPO)}:{line}"
        for p in DOCS
        for line, lang, body, _ in blocks(p)
        if not lang and any(c.split()[:1] in (["wb"], ["$"]) for c in body.splitlines() if c.strip())
    ]
    assert not untagged, f"tag shell examples sh/console (synopses: text): {untagged}"
    skipped = [(p.name, line, why) for p, line, _l, _b, why in all_examples() if why]
    assert len(skipped) <= MAX_SKIPPED, skipped
    assert sum(1 for *_x, why in all_examples() if not why) >= 10


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    from tests.conftest import run_wb

    root = tmp_path_factory.mktemp("demo-store")
    url = f"sqlite:///{root / 'wb.sqlite'}"
    out = run_wb("--store", url, "demo", "--headless", env={"XDG_DATA_HOME": str(root / "xdg")})
    assert out.returncode == 0, out.stderr
    return root / "wb.sqlite"


def _run(words: list[str], capsys) -> tuple[int, str, str]:
    from workbench.cli import main

    capsys.readouterr()
    try:
        main(words)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "doc", [p for p in DOCS if any(not why for q, *_r, why in all_examples() if q == p)], ids=lambda p: p.name
)
def test_doc_examples_run(doc, demo_store, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    for name in ("captures", "tests", "docs"):
        (work / name).symlink_to(REPO / name)
    shutil.copy(demo_store, tmp_path / "wb.sqlite")
    monkeypatch.chdir(work)
    monkeypatch.setenv("WB_STORE", f"sqlite:///{tmp_path / 'wb.sqlite'}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "100")
    variables = {"PWD": str(work)}
    ran = 0
    for path, line, lang, body, why in all_examples():
        if path != doc or why:
            continue
        for cmd in commands(lang, body):
            where = f"{doc.name}:{line}: {cmd}"
            words = shlex.split(
                re.sub(r"\$(\w+)|\$\{(\w+)\}", lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), cmd),
                comments=True,
            )
            if words and words[0] == "export":
                words = words[1:]
            if words and all(re.fullmatch(r"[A-Za-z_]\w*=.*", w) for w in words):
                for w in words:
                    name, _, value = w.partition("=")
                    if name != "WB_STORE":  # the test owns the store
                        variables[name] = value
                continue
            assert words and words[0] == "wb", (
                f"{where}: not a wb command (mark the block <!-- doc-test: skip (why) -->)"
            )
            if ">" in words:
                words = words[: words.index(">")]
            code, out, err = _run(words[1:], capsys)
            assert code == 0, f"{where}: exit {code}: {err.strip()[-400:]}"
            refused = "REFUSED" in out or '"comparable": false' in out
            if words[1:2] in (["compare"], ["inspect"]):
                assert refused == ("# refused" in cmd), (
                    f"{where}: {'refused' if refused else 'compared'}, the doc says otherwise"
                )
            ran += 1
    assert ran
