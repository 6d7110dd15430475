"""mypy over workbench/, lenses/ and store/ ([tool.mypy] in pyproject.toml), against a baseline.

The strict modules (``[[tool.mypy.overrides]]`` with ``disallow_untyped_defs``: the doors and the
vocabulary) must have no error at all; elsewhere the count of errors is printed and may only fall:
more than ``.ci/mypy-baseline`` holds fails; fewer passes, with a note to lower the file (``--update``)
so that the gain is kept. Run from the repository root: ``.venv/bin/python .ci/typecheck.py [--update]``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline"
ERROR = re.compile(r"^(?P<file>[^:]+\.py):\d+: error: ")


def strict_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    names: list[str] = []
    for override in config.get("overrides", []):
        if override.get("disallow_untyped_defs"):
            module = override["module"]
            names.extend([module] if isinstance(module, str) else module)
    return names


def as_module(file: str) -> str:
    return file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def main() -> int:
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    if run.returncode not in (0, 1) or "error: " in run.stderr:
        print(run.stdout + run.stderr, file=sys.stderr)
        print("ci: mypy did not run", file=sys.stderr)
        return 2
    errors = [m for m in (ERROR.match(line) for line in run.stdout.splitlines()) if m]
    strict = strict_modules()
    in_strict = [m.string for m in errors if as_module(m["file"]) in strict]
    if in_strict:
        print("\n".join(in_strict))
        print(f"ci: mypy: {len(in_strict)} error(s) in the strict modules (none allowed)", file=sys.stderr)
        return 1
    count = len(errors)
    if "--update" in sys.argv[1:]:
        BASELINE.write_text(f"{count}\n")
        print(f"ci: mypy baseline set to {count}")
        return 0
    baseline = int(BASELINE.read_text().split()[0])
    print(f"ci: mypy: {count} error(s) outside the strict modules (baseline {baseline}); none in {len(strict)} strict")
    if count > baseline:
        print(run.stdout)
        print(f"ci: mypy: {count - baseline} error(s) more than the baseline: fix them (the count may only fall)",
              file=sys.stderr)
        return 1
    if count < baseline:
        print(f"ci: mypy: {baseline - count} fewer than the baseline: lower it to keep the gain "
              "(python .ci/typecheck.py --update)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
