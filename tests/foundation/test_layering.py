"""The layering rules of docs/architecture.md, checked from the source.

The import-linter contracts in pyproject.toml are the rules; the AST checks below are a
second, dependency-free reading of the most important ones."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _violations(folder: str, forbidden: tuple[str, ...], skip: str | None = None) -> list[str]:
    bad = []
    for path in sorted((REPO / folder).rglob("*.py")):
        if skip and skip in path.parts:
            continue
        for name in _imports(path):
            if name.split(".")[0] in forbidden or name in forbidden:
                bad.append(f"{path.relative_to(REPO)} imports {name}")
    return bad


def test_store_imports_neither_workbench_nor_lenses():
    assert _violations("store", ("workbench", "lenses")) == []


def test_lenses_never_import_workbench():
    assert _violations("lenses", ("workbench",)) == []


def test_only_the_tui_imports_textual():
    assert _violations("workbench", ("textual",), skip="tui") == []
    assert _violations("store", ("textual",)) == []
    assert _violations("lenses", ("textual",)) == []


def test_import_linter_contracts_hold():
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True) == 0


def test_the_vocabulary_is_the_bottom_layer():
    """workbench/vocabulary.py (the one record base, RunRef, Side, the JSON helpers) imports the
    standard library and msgspec only, so the recorder and the store-free paths can use it."""
    allowed = {"__future__", "math", "collections", "enum", "typing", "msgspec"}
    names = _imports(REPO / "workbench" / "vocabulary.py")
    assert {n.split(".")[0] for n in names} <= allowed, names


def _orm_uses(path: Path) -> list[str]:
    """Where a module opens a session (``x.session``, ``Session``) or builds ORM queries
    (imports sqlmodel or sqlalchemy)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr == "session" and isinstance(node.ctx, ast.Load):
            found.append(f"{node.lineno}: .session")
        elif isinstance(node, ast.Name) and node.id == "Session":
            found.append(f"{node.lineno}: Session")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] in ("sqlmodel", "sqlalchemy")]
    return found


def test_only_the_store_opens_sessions():
    """Every read and write of a table is a typed function in store/ (``store.rerun.load_plan``,
    ``store.bisect.add_bisection``, ``store.actions.action_records`` ...): a session or an ORM query
    outside it is the store's insides leaking."""
    opened = {}
    for folder in ("workbench", "lenses"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if uses := _orm_uses(path):
                opened[path.relative_to(REPO).as_posix()] = uses
    assert opened == {}, "open sessions and build queries in a typed function in store/"
