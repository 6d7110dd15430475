"""Branch density bounded the way mypy is (.ci/typecheck.py): ruff's C901 against a per-function baseline.

ruff measures every function's McCabe complexity (``[tool.ruff.lint.mccabe] max-complexity`` in
pyproject.toml, 15). A function above the limit fails unless ``.ci/complexity-baseline`` lists it, and a
listed one may not grow; one that fell or left the list passes, with a note to lower the file (``--update``,
which refuses to raise anything). C901 is not in ruff's ``select``: a per-file ignore would let a new
function in a listed file through, and a ``noqa`` cannot say "no bigger than now"; this script can.
Run from the repository root: ``.venv/bin/python .ci/complexity.py [--update]``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "complexity-baseline"
MESSAGE = re.compile(r"^`(?P<name>.+)` is too complex \((?P<value>\d+) > \d+\)$")


def limit() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return int(config["tool"]["ruff"]["lint"]["mccabe"]["max-complexity"])


def measure() -> dict[str, int] | None:
    """file::function -> complexity for every function over the limit (a repeated name gets #2, #3...)."""
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--output-format", "json", "--no-cache", "."],
        cwd=ROOT, capture_output=True, text=True,
    )
    if run.returncode not in (0, 1):
        print(run.stdout + run.stderr, file=sys.stderr)
        return None
    found: dict[str, int] = {}
    seen: Counter[str] = Counter()
    for item in sorted(json.loads(run.stdout), key=lambda i: (i["filename"], i["location"]["row"])):
        match = MESSAGE.match(item["message"])
        if item["code"] != "C901" or match is None:
            print(f"ci: complexity: unexpected ruff output: {item}", file=sys.stderr)
            return None
        key = f"{Path(item['filename']).resolve().relative_to(ROOT)}::{match['name']}"
        seen[key] += 1
        found[key if seen[key] == 1 else f"{key}#{seen[key]}"] = int(match["value"])
    return found


def read_baseline() -> dict[str, int]:
    listed: dict[str, int] = {}
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, value = line.rsplit(maxsplit=1)
            listed[key] = int(value)
    return listed


def write_baseline(found: dict[str, int], bound: int) -> None:
    head = (f"# .ci/complexity.py: functions above ruff's C901 limit ({bound}) and their complexity now.\n"
            "# May only fall: lower it with `python .ci/complexity.py --update`; never add a line by hand.\n")
    BASELINE.write_text(head + "".join(f"{key} {value}\n" for key, value in sorted(found.items())))


def main() -> int:
    bound = limit()
    found = measure()
    if found is None:
        print("ci: complexity: ruff did not run", file=sys.stderr)
        return 2
    listed = read_baseline()
    worse = [f"{key}: {value} (limit {bound}, not in the baseline)" for key, value in found.items() if key not in listed]
    worse += [f"{key}: {value} (baseline {listed[key]})" for key, value in found.items()
              if key in listed and value > listed[key]]
    if worse:
        print("\n".join(sorted(worse)))
        print(f"ci: complexity: {len(worse)} function(s) above the limit or grown: split them by the decisions "
              "they make (the baseline may only fall)", file=sys.stderr)
        return 1
    fell = sum(1 for key, value in listed.items() if found.get(key, 0) < value)
    if "--update" in sys.argv[1:]:
        write_baseline(found, bound)
        print(f"ci: complexity baseline set: {len(found)} function(s) above {bound}")
        return 0
    print(f"ci: complexity: {len(found)} function(s) above {bound}, none grown, none new")
    if fell:
        print(f"ci: complexity: {fell} fell or left the list: lower the baseline to keep the gain "
              "(python .ci/complexity.py --update)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
