"""Issue 45 item 2: every regular expression in the codebase does linear work on any line.

Each pattern (tests/hardening/regex_work.py finds them in the source) is applied as the code
applies it (``search`` from every position unless only ever ``match``ed) to lines made of
adversarial units; the unit that costs it most on a 16 KB line is then repeated to 1 MB, and
the time over that line is bounded as a ratio to a linear scan of the same line. A linear
pattern stays within a constant of the scan whatever the size (the worst here, a bounded
window over every position, is ~1,000x the scan); a quadratic one on 1 MB is 100,000x and more,
and is stopped at the bound rather than waited for. The ratio is measured in one process a
moment apart, so a loaded machine slows both sides.
"""

from __future__ import annotations

import pytest

from tests.hardening import regex_work

MAX_RATIO = 10_000  # a linear pattern's constant, with room for noise; quadratic is past 100,000 at 1 MB
SCREEN = 16 << 10
LINE = 1 << 20


def _worst_unit(found: regex_work.Found) -> str:
    """The unit whose 16 KB line costs ``found`` most, relative to the scan of that line."""
    worst, worst_ratio = "a", -1.0
    for unit in regex_work.adversarial_units(found):
        line = regex_work.line_of(unit, SCREEN)
        base = regex_work.linear_scan_seconds(line, repeats=3)
        try:
            ratio = found.seconds(line, limit=max(0.5, MAX_RATIO * base)) / base
        except regex_work.TooSlow:
            return unit
        if ratio > worst_ratio:
            worst, worst_ratio = unit, ratio
    return worst


def test_the_finder_sees_the_patterns_of_the_source():
    found = {f.where.rsplit(":", 1)[0] for f in regex_work.patterns()}
    # literals, f-strings of module constants (textsafe), and patterns of every package
    assert {"workbench/formats/engine_flags.py", "workbench/textsafe.py", "lenses/inference.py"} <= found
    anchored = [f for f in regex_work.patterns() if f.how != "search"]
    assert anchored and all(f.how in ("match", "fullmatch") for f in anchored)


def test_a_quadratic_pattern_is_caught():
    """The harness itself: the secret-hiding pattern of old (minutes on one long engine argument)."""
    old = regex_work.Found(
        r"(?i)(--?[\w.-]*?(?:token|key|secret|passw(?:or)?d|credentials?)(?![a-z])[\w.-]*)(=|\s+)(\S+)", 0, "old"
    )
    assert _worst_unit(old) in ("-", "--", "-a", "a-", "--a")
    line = regex_work.line_of("-a", 64 << 10)  # already past the bound at 64 KB: quick to show
    base = regex_work.linear_scan_seconds(line)
    with pytest.raises(regex_work.TooSlow):
        old.seconds(line, limit=MAX_RATIO * base)


@pytest.mark.slow
def test_every_pattern_is_linear_on_a_1_mb_adversarial_line():
    slow = []
    for found in regex_work.patterns():
        unit = _worst_unit(found)
        line = regex_work.line_of(unit, LINE)
        base = regex_work.linear_scan_seconds(line)
        try:
            ratio = found.seconds(line, limit=MAX_RATIO * base) / base
        except regex_work.TooSlow:
            ratio = float("inf")
        if ratio > MAX_RATIO:
            slow.append(f"{found.where} ({found.how}) on {unit!r} x {LINE:,}: {ratio:,.0f}x a linear scan")
    assert not slow, "patterns that are not linear:\n" + "\n".join(slow)
