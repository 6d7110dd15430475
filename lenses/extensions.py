"""Lens extension files: a team adds guardrails and metrics to a lens without code.

A TOML file (see docs/lenses.md)::

    lens = "inference"

    [[metric]]
    name = "e2e_p99"
    title = "End-to-end latency, p99"
    column = "e2e_ms"          # a samples column ...
    statistic = "p99"          # ... reduced per run: mean, median, p50, p90, p95, p99, min, max, sum, count
    unit = "ms"

    [[guardrail]]
    name = "e2e_p99"
    metric = "e2e_p99"         # an extension metric, a lens metric or a quality key
    rule = "max_increase_pct"  # max, min, max_increase, max_increase_pct, within, within_pct
    limit = 5.0

Everything is checked when the file is read; a fault is one ``ExtensionError`` naming the
file and the place in it.

The same guardrail vocabulary, written on one line, is an investigation's frame guardrail
(``wb investigate new --guardrail "eval_loss max_increase_pct 1"``): ``parse_guardrail``.
"""

from __future__ import annotations

import math
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lenses import lens_names
from lenses.base import GUARDRAIL_RULES, STATISTICS, ExtraMetric, GuardrailSpec, Lens

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
_TOP_KEYS = {"lens", "description", "metric", "guardrail"}
_METRIC_KEYS = {"name", "title", "unit", "column", "statistic", "quality", "table", "lower_is_better"}
_GUARDRAIL_KEYS = {"name", "title", "metric", "rule", "limit", "unit"}


class ExtensionError(ValueError):
    """A lens extension file that cannot be used: ``file``, ``where`` and what is wrong."""

    def __init__(self, file: str | Path, message: str, where: str | None = None) -> None:
        self.file, self.where, self.detail = str(file), where or None, message
        super().__init__(": ".join(p for p in (str(file), where, message) if p))


@dataclass(frozen=True)
class Extension:
    path: str
    lens: str
    metrics: tuple[ExtraMetric, ...]
    guardrails: tuple[GuardrailSpec, ...]


def _text(file: Path, where: str, table: dict[str, object], key: str, *, required: bool = False) -> str | None:
    value = table.get(key)
    if value is None:
        if required:
            raise ExtensionError(file, f"'{key}' is required", where)
        return None
    if not isinstance(value, str) or not value.strip():
        raise ExtensionError(file, f"'{key}' must be a non-empty string", where)
    return value


def _name(file: Path, where: str, table: dict[str, object]) -> str:
    name = _text(file, where, table, "name", required=True)
    assert name is not None
    if not _NAME.match(name):
        raise ExtensionError(file, f"name {name!r} must be letters, digits, '_', '-' or '.' (at most 64)", where)
    return name


def _unknown_keys(file: Path, where: str, table: dict[str, object], allowed: set[str]) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ExtensionError(file, f"unknown key '{extra[0]}' (allowed: {', '.join(sorted(allowed))})", where)


def _metric(file: Path, where: str, table: Any) -> ExtraMetric:
    if not isinstance(table, dict):
        raise ExtensionError(file, "must be a table", where)
    _unknown_keys(file, where, table, _METRIC_KEYS)
    name = _name(file, where, table)
    col, quality = _text(file, where, table, "column"), _text(file, where, table, "quality")
    if (col is None) == (quality is None):
        raise ExtensionError(
            file, "give exactly one of 'column' (a samples column) or 'quality' (a quality value)", where
        )
    statistic = _text(file, where, table, "statistic") or "mean"
    if statistic not in STATISTICS:
        raise ExtensionError(file, f"unknown statistic {statistic!r} (one of {', '.join(STATISTICS)})", where)
    lower = table.get("lower_is_better", True)
    if not isinstance(lower, bool):
        raise ExtensionError(file, "'lower_is_better' must be true or false", where)
    return ExtraMetric(
        name=name,
        title=_text(file, where, table, "title") or name,
        unit=_text(file, where, table, "unit") or "",
        column=col,
        statistic=statistic,
        quality=quality,
        table=_text(file, where, table, "table") or "samples",
        lower_is_better=lower,
    )


def _guardrail(file: Path, where: str, table: Any) -> GuardrailSpec:
    if not isinstance(table, dict):
        raise ExtensionError(file, "must be a table", where)
    _unknown_keys(file, where, table, _GUARDRAIL_KEYS)
    name = _name(file, where, table)
    rule = _text(file, where, table, "rule", required=True)
    if rule not in GUARDRAIL_RULES:
        raise ExtensionError(file, f"unknown rule {rule!r} (one of {', '.join(GUARDRAIL_RULES)})", where)
    limit = table.get("limit")
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
        raise ExtensionError(file, "'limit' must be a finite number", where)
    return GuardrailSpec(
        name=name,
        title=_text(file, where, table, "title") or name,
        metric=_text(file, where, table, "metric") or name,
        rule=rule,
        limit=float(limit),
        unit=_text(file, where, table, "unit") or "",
    )


def parse_extension(text: str, file: str | Path = "<extension>") -> Extension:
    file = Path(file)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExtensionError(file, f"not valid TOML: {exc}") from None
    _unknown_keys(file, "", doc, _TOP_KEYS)
    lens = doc.get("lens")
    if lens not in lens_names():
        raise ExtensionError(file, f"'lens' must be one of {', '.join(lens_names())}, not {lens!r}")
    metrics_raw, guards_raw = doc.get("metric", []), doc.get("guardrail", [])
    if not isinstance(metrics_raw, list) or not isinstance(guards_raw, list):
        raise ExtensionError(file, "use [[metric]] and [[guardrail]] (arrays of tables)")
    metrics = tuple(_metric(file, f"metric[{i}]", t) for i, t in enumerate(metrics_raw))
    guardrails = tuple(_guardrail(file, f"guardrail[{i}]", t) for i, t in enumerate(guards_raw))
    for kind, items in (("metric", metrics), ("guardrail", guardrails)):
        names = [x.name for x in items]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise ExtensionError(file, f"{kind} {dup!r} is defined twice")
    if not metrics and not guardrails:
        raise ExtensionError(file, "defines no [[metric]] and no [[guardrail]]")
    return Extension(str(file), lens, metrics, guardrails)


MAX_EXTENSION_BYTES = 1 << 20  # a page of TOML


def _read_regular(path: Path) -> bytes:
    """The file's bytes, as ``workbench.inputs.open_regular`` would give them (lenses may
    not import the application): opened non-blocking, a FIFO, a device or a file of /proc
    or /sys refused on the descriptor, the size checked before a byte is read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExtensionError(
                path, "is not a regular file (a FIFO, a device or a socket); wb reads only regular files"
            )
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = str(path.resolve())
        if any(real == m or real.startswith(m + "/") for m in ("/proc", "/sys")):
            raise ExtensionError(
                path, "is a file of /proc or /sys (a kernel interface, not data); wb reads only regular files"
            )
        if st.st_size > MAX_EXTENSION_BYTES:
            raise ExtensionError(path, f"is over the {MAX_EXTENSION_BYTES >> 20} MiB limit for a lens extension")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(MAX_EXTENSION_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > MAX_EXTENSION_BYTES:
        raise ExtensionError(path, f"is over the {MAX_EXTENSION_BYTES >> 20} MiB limit for a lens extension")
    return data


def load_extension(path: str | Path) -> Extension:
    path = Path(path)
    try:
        text = _read_regular(path).decode("utf-8")
    except OSError as exc:
        raise ExtensionError(path, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ExtensionError(path, f"not UTF-8 text (byte {exc.start})") from None
    return parse_extension(text, path)


GUARDRAIL_GRAMMAR = (
    f"METRIC RULE LIMIT, RULE one of {', '.join(GUARDRAIL_RULES)} "
    "(e.g. 'eval_loss max_increase_pct 1', 'error_rate max 0.01', 'eval_loss within 0.02')"
)


def guardrail_metrics(lens: Lens) -> list[str]:
    """The metrics a guardrail of ``lens`` can name: its guardrails' and its extra metrics."""
    return sorted({g.metric for g in lens.guardrails} | {m.name for m in lens.metrics})


def parse_guardrail(text: str, lens: Lens) -> GuardrailSpec:
    """One guardrail line, ``METRIC RULE LIMIT`` (``GUARDRAIL_GRAMMAR``), checked against
    the lens's metrics; ``ValueError`` says what is wrong, with the grammar."""
    words = str(text).split()
    if len(words) != 3:
        raise ValueError(f"guardrail {text!r}: expected {GUARDRAIL_GRAMMAR}")
    metric, rule, limit_text = words
    known = guardrail_metrics(lens)
    if metric not in known:
        shown = ", ".join(known) if known else "none (add one in a lens extension file)"
        raise ValueError(f"guardrail {text!r}: {metric!r} is not a metric of the {lens.name} lens (known: {shown})")
    if rule not in GUARDRAIL_RULES:
        raise ValueError(f"guardrail {text!r}: unknown rule {rule!r}; expected {GUARDRAIL_GRAMMAR}")
    try:
        limit = float(limit_text)
    except ValueError:
        limit = math.nan
    if not math.isfinite(limit):
        raise ValueError(
            f"guardrail {text!r}: the limit {limit_text!r} must be a finite number; expected {GUARDRAIL_GRAMMAR}"
        )
    unit = next((g.unit for g in lens.guardrails if g.metric == metric), "") or next(
        (m.unit for m in lens.metrics if m.name == metric), ""
    )
    title = next((g.title for g in lens.guardrails if g.metric == metric), "") or next(
        (m.title for m in lens.metrics if m.name == metric), metric
    )
    return GuardrailSpec(
        name=metric, title=f"{title} (frame: {rule} {limit:g})", metric=metric, rule=rule, limit=limit, unit=unit
    )
