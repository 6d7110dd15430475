"""Prometheus text exposition: parse one scrape, difference two.

Only what a before/after window needs: ``# TYPE`` lines, samples with labels (parsed
as a set, since label order differs between engine versions), histogram buckets
summed across series per ``le`` (several ``engine`` label values are one server),
and ``_created`` series ignored. Names, types and ``le`` edges are read from the data;
nothing here knows which engine version uses which name, except the documented
rename table used to *report* renames (never to merge them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from workbench.errors import BadInput
from workbench.stats.histogram import histogram_quantile as shared_histogram_quantile

MAX_LINE_BYTES = 64 * 1024

# Documented renames between vLLM/SGLang releases: old family -> new family. Used to
# say "renamed", never to treat the two as the same metric.
RENAMES: dict[str, str] = {
    "vllm:time_per_output_token_seconds": "vllm:inter_token_latency_seconds",
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_hits",
    "vllm:time_in_queue_requests": "vllm:request_queue_time_seconds",
    "sglang:time_per_output_token_seconds": "sglang:inter_token_latency_seconds",
}

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(\{{.*\}})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?[ \t]*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created", "_gsum", "_gcount", "_info")

Labels = tuple[tuple[str, str], ...]


@dataclass
class Histogram:
    """One histogram family, summed over every series: cumulative counts per ``le``."""

    edges: tuple[float, ...]
    cumulative: tuple[float, ...]
    sum: float
    count: float


@dataclass
class Scrape:
    """One parsed scrape. ``series`` maps ``(sample name, labels)`` to the value."""

    path: Path | None
    types: dict[str, str] = field(default_factory=dict)
    series: dict[tuple[str, Labels], float] = field(default_factory=dict)
    # Series by sample name, built once per content (``kind`` and ``values`` are called per
    # family: scanning every series each time was quadratic, 40k untyped series > 300 s).
    _index: dict[str, list[tuple[Labels, float]]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _indexed: int = field(default=-1, init=False, repr=False, compare=False)

    def _by_name(self) -> dict[str, list[tuple[Labels, float]]]:
        if self._indexed != len(self.series):  # series only grow (parse, then read-only)
            index: dict[str, list[tuple[Labels, float]]] = {}
            for (name, labels), value in self.series.items():
                index.setdefault(name, []).append((labels, value))
            self._index, self._indexed = index, len(self.series)
        return self._index

    def family_of(self, sample_name: str) -> str:
        """The family a sample belongs to (``x_bucket`` -> ``x`` when ``x`` is typed)."""
        if sample_name in self.types:
            return sample_name
        for suffix in _SUFFIXES:
            if sample_name.endswith(suffix):
                base = sample_name[: -len(suffix)]
                if base in self.types:
                    return base
        return sample_name

    def families(self) -> set[str]:
        found = set(self.types)
        for name, _ in self.series:
            if not name.endswith("_created"):
                found.add(self.family_of(name))
        return found

    def kind(self, family: str) -> str:
        if family in self.types:
            return self.types[family]
        names = self._by_name()
        if f"{family}_bucket" in names:
            return "histogram"
        if f"{family}_total" in names or family.endswith("_total"):
            return "counter"
        return "untyped"

    def values(self, sample_name: str) -> list[tuple[Labels, float]]:
        return list(self._by_name().get(sample_name, ()))

    def counter_total(self, family: str) -> float | None:
        """A counter summed over its series; ``None`` when the family is absent."""
        for name in (f"{family}_total", family):
            vals = self.values(name)
            if vals:
                return math.fsum(v for _, v in vals)
        return None

    def gauge_values(self, family: str) -> list[tuple[Labels, float]]:
        return self.values(family)

    def histogram(self, family: str) -> Histogram | None:
        """Buckets summed per ``le`` across every series; ``None`` when absent."""
        buckets: dict[float, float] = {}
        for labels, value in self.values(f"{family}_bucket"):
            le = dict(labels).get("le")
            if le is None:
                raise BadInput(self.path, f"histogram bucket {family}_bucket has no 'le' label")
            edge = _float(le)
            if edge is None:
                raise BadInput(self.path, f"histogram {family}: bad le value {le!r}")
            buckets[edge] = buckets.get(edge, 0.0) + value
        if not buckets:
            return None
        sums = self.values(f"{family}_sum")
        counts = self.values(f"{family}_count")
        edges = tuple(sorted(buckets))
        if edges[-1] != math.inf:
            raise BadInput(self.path, f"histogram {family} has no +Inf bucket (truncated scrape?)")
        if not sums or not counts:
            raise BadInput(self.path, f"histogram {family} lacks _sum or _count (truncated scrape?)")
        cumulative = tuple(buckets[e] for e in edges)
        if any(b < a for a, b in zip(cumulative, cumulative[1:])):
            raise BadInput(self.path, f"histogram {family}: bucket counts decrease with le (corrupt scrape)")
        return Histogram(edges, cumulative, math.fsum(v for _, v in sums), math.fsum(v for _, v in counts))


def _float(text: str) -> float | None:
    t = text.strip()
    lowered = t.lower()
    if lowered in ("+inf", "inf"):
        return math.inf
    if lowered == "-inf":
        return -math.inf
    if lowered == "nan":
        return math.nan
    try:
        return float(t)
    except ValueError:
        return None


def _labels(text: str, path: Path | None, line: int) -> Labels:
    inner = text[1:-1].strip()
    pairs: list[tuple[str, str]] = []
    pos = 0
    while pos < len(inner):
        m = _LABEL.match(inner, pos)
        if not m:
            raise BadInput(path, "malformed label set", where=f"line {line}")
        value = re.sub(r"\\[\\\"n]", lambda e: _ESCAPES[e.group(0)], m.group(2))
        pairs.append((m.group(1), value))
        pos = m.end()
    return tuple(sorted(pairs))


def parse(stream: IO[bytes], path: Path | None = None) -> Scrape:
    """Parse a whole scrape from a binary stream (bounded line length)."""
    scrape = Scrape(path)
    line_no = 0
    saw_sample = False
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        line_no += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise BadInput(
                path, f"line longer than {MAX_LINE_BYTES} bytes (not a Prometheus scrape?)", where=f"line {line_no}"
            )
        if not raw.endswith(b"\n"):
            # The exposition format ends every line with a newline; without one the
            # scrape was cut off and the last value may be a truncated number.
            raise BadInput(path, "ends in the middle of a line (truncated scrape)", where=f"line {line_no}")
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                scrape.types[parts[2]] = parts[3].strip()
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise BadInput(path, "not a Prometheus sample line", where=f"line {line_no}")
        name, label_text, value_text = m.group(1), m.group(2), m.group(3)
        if name.endswith("_created"):
            continue
        value = _float(value_text)
        if value is None:
            raise BadInput(path, f"bad sample value {value_text[:40]!r}", where=f"line {line_no}")
        labels = _labels(label_text, path, line_no) if label_text else ()
        key = (name, labels)
        if key in scrape.series:
            raise BadInput(path, f"duplicate series {name}", where=f"line {line_no}")
        scrape.series[key] = value
        saw_sample = True
    if not saw_sample:
        raise BadInput(path, "no samples (empty or comment-only scrape)")
    for family in scrape.families():
        if scrape.kind(family) == "histogram":
            scrape.histogram(family)  # validate now, so the error names this file
    return scrape


def looks_like_exposition(text: str) -> bool:
    """A cheap content test: ``# TYPE`` / ``# HELP`` lines or ``name{...} value`` lines."""
    lines = [ln.strip() for ln in text.splitlines()[:200] if ln.strip()]
    if not lines:
        return False
    typed = sum(1 for ln in lines if ln.startswith(("# TYPE ", "# HELP ")))
    samples = sum(
        1 for ln in lines if not ln.startswith("#") and (m := _SAMPLE.match(ln)) and _float(m.group(3)) is not None
    )
    other = len(lines) - typed - samples - sum(1 for ln in lines if ln.startswith("#"))
    # A final line may be cut at the probe's 64 KiB boundary.
    return (typed > 0 or samples >= 3) and other <= 1 and samples > 0


@dataclass
class FamilyDelta:
    """One family over a window (after − before)."""

    family: str
    kind: str
    delta: float | None = None  # counters
    histogram: Histogram | None = None  # histograms (window counts)
    problem: str | None = None
    went_down: str | None = None  # "500 -> 20": a counter or count fell, so the scrapes are of two processes


def difference(before: Scrape, after: Scrape) -> tuple[dict[str, FamilyDelta], list[str]]:
    """Window deltas for every counter and histogram in both scrapes, plus problems found.

    A family in only one scrape, a counter that went down (reset: the server
    restarted), or histogram ``le`` edges that differ leave that family without a
    value and add a problem line; a missing family is never read as zero.
    """
    problems: list[str] = []
    out: dict[str, FamilyDelta] = {}
    fams_b, fams_a = before.families(), after.families()
    for old, new in RENAMES.items():
        if old in fams_b and new in fams_a and new not in fams_b:
            problems.append(f"{old} (before) was renamed {new} (after): engine changed inside the window; both unknown")
        elif new in fams_b and old in fams_a and old not in fams_b:
            problems.append(
                f"{new} (before) appears as old name {old} (after): engine changed inside the window; both unknown"
            )
    for family in sorted(fams_b | fams_a):
        kind = after.kind(family) if family in fams_a else before.kind(family)
        if kind not in ("counter", "histogram"):
            continue
        if family not in fams_b or family not in fams_a:
            side = "before" if family not in fams_b else "after"
            out[family] = FamilyDelta(family, kind, problem=f"{family}: missing from the {side} scrape (unknown)")
            problems.append(out[family].problem)  # type: ignore[arg-type]
            continue
        if kind == "counter":
            out[family] = _counter_delta(family, before, after, problems)
        else:
            out[family] = _histogram_delta(family, before, after, problems)
    return out, problems


def _counter_delta(family: str, before: Scrape, after: Scrape, problems: list[str]) -> FamilyDelta:
    name = f"{family}_total" if before.values(f"{family}_total") or after.values(f"{family}_total") else family
    b = dict(before.values(name))
    a = dict(after.values(name))
    for labels, value in a.items():
        if labels in b and value < b[labels]:
            msg = (
                f"{family}: counter went down ({b[labels]:g} -> {value:g}): reset (server restart) inside the "
                f"window; unknown"
            )
            problems.append(msg)
            return FamilyDelta(family, "counter", problem=msg, went_down=f"{b[labels]:g} -> {value:g}")
    # A series that appears only after (a new label value) started at zero.
    delta = math.fsum(a.values()) - math.fsum(v for k, v in b.items() if k in a)
    return FamilyDelta(family, "counter", delta=delta)


def _histogram_delta(family: str, before: Scrape, after: Scrape, problems: list[str]) -> FamilyDelta:
    hb, ha = before.histogram(family), after.histogram(family)
    if hb is None or ha is None:
        msg = f"{family}: no buckets in one scrape (unknown)"
        problems.append(msg)
        return FamilyDelta(family, "histogram", problem=msg)
    if hb.edges != ha.edges:
        only_b = sorted(set(hb.edges) - set(ha.edges))
        only_a = sorted(set(ha.edges) - set(hb.edges))
        msg = (
            f"{family}: bucket edges differ between scrapes (before only {only_b[:5]}, after only {only_a[:5]}); "
            f"quantiles unknown"
        )
        problems.append(msg)
        # Sum and count still difference exactly: the mean survives an edge change.
        return FamilyDelta(
            family, "histogram", histogram=Histogram((), (), ha.sum - hb.sum, ha.count - hb.count), problem=msg
        )
    cum = tuple(a - b for a, b in zip(ha.cumulative, hb.cumulative))
    if ha.count < hb.count or any(c < 0 for c in cum):
        msg = f"{family}: counts went down between scrapes: reset (server restart) inside the window; unknown"
        problems.append(msg)
        return FamilyDelta(family, "histogram", problem=msg, went_down=f"count {hb.count:g} -> {ha.count:g}")
    return FamilyDelta(family, "histogram", histogram=Histogram(ha.edges, cum, ha.sum - hb.sum, ha.count - hb.count))


@dataclass(frozen=True)
class Quantile:
    """A histogram quantile with the bucket that must contain the true value."""

    value: float
    lo: float
    hi: float
    lower_bound_only: bool = False  # rank fell in the +Inf bucket: value is ">= lo"


def histogram_quantile(edges: Iterable[float], cumulative: Iterable[float], q: float) -> Quantile | None:
    """PromQL ``histogram_quantile`` with its bucket bounds; ``None`` when undefined.

    The estimate is ``workbench.stats.histogram_quantile``'s, so the two never disagree.
    """
    try:
        est = shared_histogram_quantile(list(edges), list(cumulative), q)
    except ValueError:
        return None
    if math.isnan(est.value):
        return None
    return Quantile(float(est.value), float(est.low), float(est.high), math.isinf(est.high))
