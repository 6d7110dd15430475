"""The year of a stamp that has none (vLLM's ``INFO 10-21 12:39:26``, syslog, glog), from the
file it is in: the nearest line of the same file whose own stamp carries a year.

Of the years around that line's (one before, its own, one after), the stamp takes the one
that puts it closest in time to that line: a log that runs over New Year gets December and
January right. The file's modification time is never used: copying, unpacking an archive
or ``touch`` changes it, and nothing in the file says it is right. Stamps no line of their
file dates stay without a year for the timeline (``--year``, or other inputs).
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timezone

from workbench.diagnostics.events import Event


def date_partials(events: list[Event], anchors: list[tuple[int, float]]) -> None:
    """Give the events of one file whose stamps lack a year the year of their nearest dated line.

    ``anchors``: (line, epoch seconds) of lines whose stamp has a year, beside the events of
    the file that have one."""
    marks = sorted([*anchors, *((e.line, e.time) for e in events if e.time is not None and e.line is not None)])
    if not marks:
        return
    lines = [line for line, _ in marks]
    for e in events:
        if e.time is not None or e.partial is None or e.line is None:
            continue
        at = e.line
        i = bisect_right(lines, at)
        near = [marks[j] for j in (i - 1, i) if 0 <= j < len(marks)]
        line, anchor = min(near, key=lambda m: abs(m[0] - at))
        year = datetime.fromtimestamp(anchor, timezone.utc).year
        best: tuple[float, int, float] | None = None  # (distance, year, time)
        for y in (year - 1, year, year + 1):
            try:
                t = e.partial.at(y)
            except ValueError:  # 02-29 in a year without one
                continue
            if best is None or abs(t - anchor) < best[0]:
                best = (abs(t - anchor), y, t)
        if best is not None:
            e.time, e.naive = best[2], True
            e.notes.append(f"year {best[1]} taken from line {line} of this file")
