"""How a golden document is compared with what ``wb`` prints now: by structure, not bytes.

The last bits of a float depend on the machine (the BLAS kernel chosen for the CPU, SIMD
width, a library's summation order), so a byte-exact golden would test the CPU, not the
code. What the code decides is compared exactly; what arithmetic produced is compared
within a tolerance:

- every key, string, integer, boolean and null exactly, and every list's length;
  an integer never stands in for a float or the reverse (the JSON type is the contract);
- every float within a relative 1e-9 (absolute 1e-12 near zero);
- a digest or checksum that covers computed floats (a bundle's ``results``, its checksum
  and the checksum parts of members holding floats) is not compared: the case re-derives
  it from the document being compared and checks that the bundle as written verifies
  (tests/golden/cases.py ``resealed_bundle``). Digests over bytes that involve no
  arithmetic (capture files, the recipe of parameters, the embedded samples as imported)
  stay exact.

Bytes are still compared exactly where the bytes themselves are the contract and no
arithmetic is involved: the recorder's capture files (tests/recorder) and the canonical
JSON of fixed input (tests/bundle/test_canonical.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

REL_TOL = 1e-9
ABS_TOL = 1e-12

_HEX64 = re.compile(r"[0-9a-f]{64}")


def differences(
    expected: Any, actual: Any, *, rederived: frozenset[str] = frozenset(), path: str = "$"
) -> Iterator[str]:
    """Each place where ``actual`` departs from ``expected``, as ``"PATH: what"``.

    ``rederived``: paths of digests recomputed from the document itself; there both sides
    must hold a SHA-256 hex digest, whatever its value.
    """
    if path in rederived:
        if not (
            isinstance(expected, str)
            and isinstance(actual, str)
            and _HEX64.fullmatch(expected)
            and _HEX64.fullmatch(actual)
        ):
            yield f"{path}: a re-derived digest must be a SHA-256 hex string on both sides ({expected!r}, {actual!r})"
        return
    if type(expected) is not type(actual):
        yield f"{path}: {type(expected).__name__} {_short(expected)} became {type(actual).__name__} {_short(actual)}"
        return
    if isinstance(expected, dict):
        for key in expected.keys() - actual.keys():
            yield f"{path}.{key}: missing now"
        for key in actual.keys() - expected.keys():
            yield f"{path}.{key}: new ({_short(actual[key])})"
        if list(expected) != list(actual) and expected.keys() == actual.keys():
            yield f"{path}: key order changed ({list(expected)} -> {list(actual)})"
        for key in expected.keys() & actual.keys():
            yield from differences(expected[key], actual[key], rederived=rederived, path=f"{path}.{key}")
    elif isinstance(expected, list):
        if len(expected) != len(actual):
            yield f"{path}: {len(expected)} items became {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            yield from differences(e, a, rederived=rederived, path=f"{path}[{i}]")
    elif isinstance(expected, float):
        if not math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            yield f"{path}: {expected!r} became {actual!r} (beyond a relative {REL_TOL:g})"
    elif expected != actual:
        yield f"{path}: {_short(expected)} became {_short(actual)}"


def holds_float(value: Any) -> bool:
    """Whether a float appears anywhere in ``value`` (then digests over it are re-derived)."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(holds_float(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_float(v) for v in value)
    return False


def rederived_digests(bundle: dict[str, Any]) -> frozenset[str]:
    """The digest paths of a bundle that cover computed floats (see the module docstring)."""
    paths = set()
    for member in ("recipe", "results"):
        section = bundle.get(member)
        if isinstance(section, dict) and holds_float(section.get("content")):
            paths.add(f"$.{member}.digest.sha256")
    checksum = bundle.get("checksum")
    if isinstance(checksum, dict):
        body = {k: v for k, v in bundle.items() if k != "checksum"}
        if holds_float(body):
            paths.add("$.checksum.value")
        for part in checksum.get("parts") or {}:
            if holds_float(bundle.get(part)):
                paths.add(f"$.checksum.parts.{part}")
    return frozenset(paths)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
