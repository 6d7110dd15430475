"""Every number wb prints comes from ``workbench/numbers.py``: the formats pinned here, and no
module beside it keeps a formatter of its own (``_pct``, ``_fmt``, ``_num``, ``_size`` ...)."""

import ast
import math
import re
from pathlib import Path

from workbench import numbers as n

REPO = Path(__file__).resolve().parents[2]
# Function names that format numbers: a second place to print a percentage or a size.
FORMATTER = re.compile(r"_?(pct|percent|fmt|num|num_g|size|mib|n|signed_pct)")
# lenses/ sits below the application (it never imports workbench): its one message formats a share itself.
BESIDE = {"lenses/request_check.py": "_pct"}


def test_the_formats():
    assert n.num(0.012345) == "0.0123" and n.num(123.4) == "123" and n.num(None) == "unknown"
    assert n.qty(0.25, "fraction") == "25 %" and n.qty(math.nan, "ms") == "unknown"
    assert n.signed(-3.0, "%") == "−3 %" and n.signed(None, "ms") == "unknown"
    assert n.change(110.0, 230.0, "ms") == "110 ms → 230 ms, +120 ms (+109 %)"
    assert n.fixed(0.1234567, 4) == "0.1235" and n.fixed(None, 6, missing="n/a") == "n/a"
    assert n.signed_percent(1.2345, 2) == "+1.23 %" and n.signed_percent(-1.25, 1, minus=n.MINUS) == "−1.2 %"
    assert n.signed_percent(math.nan, 1, missing="") == ""
    assert (
        n.percent(0.125, 1) == "12.5 %" and n.percent(-0.0123, 1, sign=True) == "-1.2 %" and n.percent(0.5, 0) == "50 %"
    )
    assert n.percent_change(80.0, 92.0) == "+15 %" and n.percent_change(92.0, 80.0) == "−13 %"
    assert n.percent_change(0.0, 1.0) == "n/a"
    assert n.significant(12345.678) == "1.235e+04" and n.significant(0.5, sign=True) == "+0.5"
    assert n.significant(1234.5, grouped=True) == "1,234" and n.significant(2.5e6, grouped=True) == "2,500,000"
    assert n.significant("x") == "unknown" and n.significant(True) == "unknown" and n.significant(math.inf) == "unknown"
    assert n.share(0.456) == "46%" and n.share(None) == "unknown"
    assert n.size(3 * 2**20 // 2) == "1.5 MiB" and n.size(12 * 2**10) == "12.0 KiB" and n.size(512) == "512 bytes"
    assert n.figure(1234.5) == "1,234" and n.figure(3) == "3" and n.figure(None) == "unknown"
    t = 1764800199.1234  # 2025-12-03 22:16:39.123 UTC
    assert n.utc_time(t) == "2025-12-03 22:16:39.123 UTC" and n.utc_time(t, ms=False) == "2025-12-03 22:16:39 UTC"
    assert n.utc_time(t, year=False, zone=False) == "12-03 22:16:39.123"
    assert n.mib(2**30) == "1,024.0 MiB" and n.count(12345) == "12,345" and n.count(None) == "unknown"


def test_no_formatter_beside_the_numbers_module():
    found = {}
    for folder in ("workbench", "lenses"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel == "workbench/numbers.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                returns_text = (
                    isinstance(node, ast.FunctionDef)
                    and node.returns is not None
                    and ast.unparse(node.returns) == "str"
                )
                if returns_text and FORMATTER.fullmatch(node.name):  # a parser (returns a number) is not one
                    found.setdefault(rel, []).append(node.name)
    assert {p: names for p, names in found.items() if BESIDE.get(p) not in names} == {}
