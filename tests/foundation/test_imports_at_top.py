"""Imports sit at the top of a module; one inside a function is the exception, with its
reason on its line (or the line above): a heavy third-party module (SQLAlchemy, numpy,
Rich, Textual, Dask) that a light path must not load, or the store-free path of
``wb evidence verify``.

Scope: the modules cleared of function-level imports so far (issue 14 item 4): the CLI
(``wb import``'s module aside, which the importer-options work owns), the top-level
``workbench/*.py`` modules, ``workbench/training`` and ``workbench/formats`` (``formats/sacct*``
aside), the TUI, ``compare``
(the load sweep modules aside, for now), ``investigations``, ``rerun``, ``bisect``,
``bundle`` and ``diagnostics``. Widen ``SCOPE`` as other packages are cleared.

An import of the project's own modules (``workbench``, ``store``, ``lenses``) inside a
function must be listed in ``OWN_LAZY`` with why; ``heavy`` entries are checked: the
module must really load what the reason says, so an entry goes stale loudly once that
module gets lighter.
"""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OWN = ("workbench", "store", "lenses")

SCOPE = [
    "workbench/cli/**/*.py",
    "workbench/*.py",
    "workbench/training/**/*.py",
    "workbench/formats/**/*.py",
    "workbench/tui/**/*.py",
    "workbench/compare/**/*.py",
    "workbench/investigations/**/*.py",
    "workbench/rerun/**/*.py",
    "workbench/bisect/**/*.py",
    "workbench/bundle/**/*.py",
    "workbench/diagnostics/**/*.py",
    "workbench/report/**/*.py",
    "workbench/usecases/**/*.py",
    "workbench/server/**/*.py",
]
OUT_OF_SCOPE = (
    "workbench/cli/commands/import_.py",
    "workbench/formats/sacct",
    "workbench/compare/sweep",
)

SQLALCHEMY = (
    "heavy",
    "sqlalchemy",
)  # SQLModel tables: `wb CMD --help`, `wb import` into SQLite and the TUI's first frame stay without it
NUMPY = ("heavy", "numpy")  # the compare engine: `wb --help` imports the `workbench.compare` package, not the engine
# (file, module imported inside a function) -> why
OWN_LAZY = {
    ("workbench/cli/tui_launch.py", "workbench.tui.app"): ("heavy", "textual"),
    ("workbench/cli/commands/evidence.py", "workbench.rerun.report"): ("heavy", "numpy"),  # only for --recompute
    ("workbench/cli/commands/report.py", "workbench.report.gather"): NUMPY,  # not for `wb report --help`
    ("workbench/cli/commands/report.py", "workbench.report.render"): ("heavy", "matplotlib"),
    ("workbench/tui/share_jobs.py", "workbench.report.gather"): NUMPY,  # only when a report is asked for
    ("workbench/tui/share_jobs.py", "workbench.report.render"): ("heavy", "matplotlib"),
    ("workbench/dims_file.py", "workbench.importers.sacct"): NUMPY,  # only for a wb.toml with [sacct] fields
    ("workbench/dims_file.py", "workbench.formats.record_map"): NUMPY,  # only for a wb.toml with a [map]
    ("workbench/cli/commands/remove.py", "store.tidy"): SQLALCHEMY,
    ("workbench/cli/commands/rename.py", "store.tidy"): SQLALCHEMY,
    ("workbench/run_documents.py", "store.declarations"): SQLALCHEMY,
    ("workbench/cli/commands/token.py", "workbench.usecases.tokens"): SQLALCHEMY,
    (
        "workbench/cli/commands/serve.py",
        "workbench.server.app",
    ): SQLALCHEMY,  # (and Starlette): not for 'wb serve --help'
    ("workbench/cli/context.py", "workbench.usecases.remote"): ("heavy", "httpx"),  # only when a server is named
    ("workbench/tui/app.py", "workbench.usecases.remote"): ("heavy", "httpx"),  # only against a server
    ("workbench/tui/app.py", "workbench.tui.panes"): NUMPY,  # the panes: loaded behind the first frame
    ("workbench/cli/commands/serve.py", "workbench.server.guard"): ("heavy", "uvicorn"),  # not for 'wb serve --help'
    ("workbench/usecases/comparisons.py", "workbench.compare.plots"): NUMPY,  # only with --plot (plotext when drawn)
    ("workbench/usecases/comparisons.py", "workbench.compare.sweep"): (
        "why",
        "the load sweep readers (lenses.inference, formats.load_sweep) are for sweeps: not every compare",
    ),
    ("workbench/declare.py", "store.declarations"): SQLALCHEMY,
    ("workbench/compare/__init__.py", "lenses.base"): NUMPY,
    ("workbench/compare/__init__.py", "lenses.extensions"): NUMPY,
    ("workbench/compare/parameters.py", "lenses.extensions"): NUMPY,  # only for frame guardrails
    ("workbench/investigations/frame.py", "lenses.extensions"): NUMPY,  # only when guardrails are read
    ("workbench/compare/__init__.py", "workbench.compare"): (
        "why",
        "its engine modules (comparability, delta, ...) load numpy",
    ),
    ("workbench/compare/__init__.py", "workbench.compare.control"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.compare.observations"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.compare.model"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.compare.results"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.compare.inspect_data"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.training.pair_findings"): NUMPY,
    ("workbench/compare/__init__.py", "workbench.training.window_kind"): NUMPY,
    ("workbench/investigations/bundling.py", "store.declarations"): SQLALCHEMY,
    ("workbench/investigations/bundling.py", "store.bisect"): SQLALCHEMY,
    ("workbench/investigations/bundling.py", "store.investigations"): SQLALCHEMY,
    ("workbench/investigations/bundling.py", "store.actions"): SQLALCHEMY,
    ("workbench/investigations/bundling.py", "store.rerun"): SQLALCHEMY,
    (
        "workbench/bundle/action_status.py",
        "workbench.compare.contract",
    ): NUMPY,  # the contract: only once a comparison is judged
    ("workbench/investigations/common.py", "store.investigations"): SQLALCHEMY,
    ("workbench/investigations/comparisons.py", "store.investigations"): SQLALCHEMY,
    ("workbench/investigations/frame.py", "store.investigations"): SQLALCHEMY,
    ("workbench/investigations/hypotheses.py", "store.investigations"): SQLALCHEMY,
    ("workbench/investigations/hypotheses.py", "store.bisect"): SQLALCHEMY,
    ("workbench/investigations/hypotheses.py", "store.evidence"): SQLALCHEMY,
    ("workbench/investigations/observations.py", "store.investigations"): SQLALCHEMY,
    ("workbench/rerun/execute.py", "store.rerun"): SQLALCHEMY,
    ("workbench/rerun/workflow.py", "store.rerun"): SQLALCHEMY,
    ("workbench/bisect/workflow.py", "store.bisect"): SQLALCHEMY,
    ("workbench/rerun/report.py", "store.rerun"): SQLALCHEMY,
    ("workbench/bundle/verify.py", "workbench.bundle.rederive"): NUMPY,  # only --recompute
    ("workbench/bisect/records.py", "store.bisect"): SQLALCHEMY,
    ("workbench/bisect/records.py", "store.rerun"): SQLALCHEMY,
    ("workbench/rerun/ledger.py", "store.rerun"): SQLALCHEMY,
    ("workbench/bundle/recompute.py", "workbench.compare.contract"): NUMPY,  # only --recompute
    ("workbench/bundle/recompute.py", "store.records"): (
        "why",
        "`wb evidence verify` without --recompute runs where `store` cannot be imported",
    ),
}


def _scoped() -> list[Path]:
    found = {p for pattern in SCOPE for p in REPO.glob(pattern)}
    return sorted(p for p in found if not str(p.relative_to(REPO)).startswith(OUT_OF_SCOPE))


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append(child)
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return ["." * node.level + (node.module or "")]


def _is_own(module: str) -> bool:
    return module.startswith(".") or module.split(".")[0] in OWN


def _inside_imports() -> list[tuple[str, int, str, list[str]]]:
    """(file, line, module, the file's lines) for every import inside a function in scope."""
    found = []
    for path in _scoped():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in _function_imports(ast.parse(text, filename=str(path))):
            for module in _modules(node):
                found.append((str(path.relative_to(REPO)), node.lineno, module, lines))
    return found


def test_the_scope_is_what_it_says():
    names = {str(p.relative_to(REPO)) for p in _scoped()}
    assert "workbench/cli/commands/compare.py" in names and "workbench/ingest.py" in names
    assert "workbench/training/cluster.py" in names and "workbench/formats/prom_text.py" in names
    assert not [n for n in names if n.startswith(OUT_OF_SCOPE)]


def test_the_tuis_first_frame_loads_no_orm_numpy_or_lenses():
    """The TUI's first frame loads without the ORM, numpy, the lenses or the compare engine: the
    start-up worker imports the panes (workbench/tui/panes.py) behind it (issue 47)."""
    heavy = ("sqlalchemy", "sqlmodel", "pydantic", "numpy", "scipy", "lenses", "workbench.compare")
    heavy += ("workbench.tui.panes",)
    probe = f"import sys, workbench.tui.app; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_own_modules_are_imported_inside_functions_only_where_listed():
    found = {(path, module) for path, _line, module, _lines in _inside_imports() if _is_own(module)}
    unlisted = sorted(found - set(OWN_LAZY))
    assert not unlisted, (
        "import these at the top of the module (or list them in OWN_LAZY with the reason): "
        + ", ".join(f"{p}: {m}" for p, m in unlisted)
    )
    stale = sorted(set(OWN_LAZY) - found)
    assert not stale, f"no longer imported inside a function; drop from OWN_LAZY: {stale}"


def test_every_import_inside_a_function_says_why():
    bare = []
    for path, line, module, lines in _inside_imports():
        here = lines[line - 1]
        above = lines[line - 2].strip() if line > 1 else ""
        # a group of imports shares the reason on its first line
        if "#" in here or above.startswith("#") or (above.startswith(("from ", "import ")) and "#" in above):
            continue
        bare.append(f"{path}:{line} {module}")
    assert not bare, (
        "an import inside a function needs a one-line reason (a comment on its line or above): " + ", ".join(bare)
    )


def test_the_heavy_reasons_are_true():
    """Each module kept lazy for weight really loads that weight when imported alone."""
    for (path, module), (kind, what) in sorted(OWN_LAZY.items()):
        if kind != "heavy":
            continue
        probe = f"import sys, {module}; print({what!r} in sys.modules)"
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
        assert out.stdout.strip() == "True", (
            f"{module} (lazy in {path}) no longer loads {what}: import it at the top{out.stderr}"
        )
