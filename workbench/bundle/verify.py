"""Verifying a bundle offline: no store, no GPU, no network, no Textual.

This module (and everything it imports) must stay importable with ``store``,
``sqlmodel`` and ``textual`` unavailable; a test enforces it in a subprocess.
Recompute (``--recompute``) is the exception: it needs the compare engine, and loads
it only when asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from workbench.bundle.format import (
    CANONICALIZATION,
    CHECKSUM_COVERS,
    DIGEST_ALG,
    DIGESTED_PARTS,
    FORMAT,
    SUPPORTED_MAJOR,
    UNSIGNED_NOTE,
    CanonicalParts,
    Check,
)
from workbench.bundle.decisions import Problem, history_problems
from workbench.bundle.schema import RerunEngine, typed_or_problem
from workbench.compare.parameters import ComparisonParameters
from workbench.errors import BadInput, UsageError
from workbench.inputs import open_regular
from workbench.textsafe import clean
from workbench.vocabulary import JSONDoc

REQUIRED_MEMBERS = ("format", "format_version", "tool", "investigation", "recipe", "results", "checksum")


@dataclass
class VerifyReport:
    source: str
    format_version: str
    tool: JSONDoc
    checks: list[Check] = field(default_factory=list)
    recompute: list[Check] | None = None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks) and all(c.ok for c in self.recompute or [])

    @property
    def mismatched(self) -> list[str]:
        return [c.part for c in [*self.checks, *(self.recompute or [])] if not c.ok]

    def to_json(self) -> dict[str, object]:
        return {
            "bundle": self.source,
            "format": FORMAT,
            "format_version": self.format_version,
            "tool": self.tool,
            "valid": self.ok,
            "integrity": "ok" if self.ok else "mismatch",
            "mismatched": self.mismatched,
            "checks": [c.to_json() for c in self.checks],
            "recompute": None if self.recompute is None else [c.to_json() for c in self.recompute],
            "signed": False,
            "authenticity": "not signed",
            "note": UNSIGNED_NOTE,
        }


def check_format(bundle: JSONDoc, *, source: str | Path | None = None) -> str:
    """Fail closed on anything that is not a bundle version we understand."""
    if bundle.get("format") != FORMAT:
        raise BadInput(
            source, f"not a wb evidence bundle (format is {str(bundle.get('format'))[:60]!r}, expected {FORMAT!r})"
        )
    version = bundle.get("format_version")
    major = str(version).split(".")[0] if isinstance(version, str) else ""
    if not isinstance(version, str) or not major.isdigit() or int(major) != SUPPORTED_MAJOR:
        raise BadInput(
            source, f"unsupported bundle format version {str(version)[:20]!r} (this wb reads {SUPPORTED_MAJOR}.x)"
        )
    return version


def verify_bundle(
    bundle: JSONDoc,
    *,
    source: str | Path = "bundle",
    captures_dir: str | Path | None = None,
    recompute: bool = False,
    engine: Callable[..., Any] | None = None,
    rerun_engine: RerunEngine | None = None,
) -> VerifyReport:
    """Recheck the checksum, every part's digest, optionally the capture files and the results."""
    version = check_format(bundle, source=source)
    tool = found if isinstance(found := bundle.get("tool"), dict) else {}
    report = VerifyReport(source=str(source), format_version=version, tool=tool)
    checks = report.checks
    missing = [m for m in REQUIRED_MEMBERS if m not in bundle]
    if missing:
        checks.append(Check("structure", False, f"missing member(s): {', '.join(missing)}"))
    try:
        parts = CanonicalParts(bundle)
    except Exception as exc:  # noqa: BLE001 - rfc8785.CanonicalizationError: only an unchecked in-memory dict gets here
        raise BadInput(source, f"cannot canonicalize: {exc}") from None
    checks.extend(_checksum_checks(bundle.get("checksum"), parts))
    for name in DIGESTED_PARTS:
        if name in bundle:
            checks.append(_digest_check(name, bundle[name], parts))
    checks.extend(_parameter_checks(bundle.get("recipe")))
    shape = _shape_checks(bundle)
    checks.extend(shape)
    if captures_dir is not None:
        checks.extend(check_captures(bundle.get("subject"), Path(captures_dir)))
    if recompute:
        from workbench.bundle.rederive import recompute_results  # the compare engine (numpy): only --recompute

        report.recompute = (
            [Check("recompute", False, "not run: the bundle's records do not have the shape wb writes (above)")]
            if shape
            else recompute_results(bundle, engine=engine, rerun_engine=rerun_engine)
        )
    return report


def _shape_checks(bundle: JSONDoc) -> list[Check]:
    """The bundle read with the typed readers export writes with (``bundle.schema``): a value
    of another type is refused here, with its place, never an error in a later reader; and
    each action's decisions checked as inputs (``bundle.decisions``)."""
    typed = typed_or_problem(bundle)
    if isinstance(typed, Problem):
        return [Check(typed.where, False, f"not the shape wb writes: {clean(typed.why)[:200]}")]
    out = []
    for i, action in enumerate(typed.recipe.actions):
        doc = msgspec.to_builtins(action)
        for p in history_problems(action.created_at, doc["decisions"], doc["verifications"]):
            out.append(Check(f"recipe.actions[{i}].{p.where}", False, f"{action.ref}: {p.why}"))
    return out


def _parameter_checks(recipe: object) -> list[Check]:
    """Each comparison's parameters have the shape readers decode (a sealed bundle whose
    ``changes`` is a string would import, then fail every ``wb investigate show``)."""
    content = recipe.get("content") if isinstance(recipe, dict) else None
    comparisons = content.get("comparisons") if isinstance(content, dict) else None
    if not isinstance(comparisons, list):
        return []
    out = []
    for i, comparison in enumerate(comparisons):
        params = comparison.get("parameters") if isinstance(comparison, dict) else None
        where = f"recipe.comparisons[{i}].parameters"
        if not isinstance(params, dict):
            out.append(Check(where, False, "expected an object"))
            continue
        try:
            ComparisonParameters.from_json(params)
        except msgspec.ValidationError as exc:
            out.append(Check(where, False, f"not the shape wb reads: {clean(str(exc))[:200]}"))
    return out


def _checksum_checks(member: object, parts: CanonicalParts) -> list[Check]:
    if not isinstance(member, dict):
        return [Check("checksum", False, "checksum member missing or not an object")]
    expected = {"alg": DIGEST_ALG, "canonicalization": CANONICALIZATION, "covers": CHECKSUM_COVERS, "signed": False}
    odd = [k for k, v in expected.items() if member.get(k) != v or type(member.get(k)) is not type(v)]
    if odd:
        return [Check("checksum", False, f"unsupported checksum settings: {', '.join(odd)}")]
    out = []
    computed = parts.checksum
    recorded = member.get("value")
    recorded_parts = listed if isinstance(listed := member.get("parts"), dict) else {}
    computed_parts = parts.part_digests
    changed = sorted(
        name
        for name in set(recorded_parts) | set(computed_parts)
        if recorded_parts.get(name) != computed_parts.get(name)
    )
    if recorded == computed:
        out.append(Check("checksum", True, f"sha256 {computed} over the RFC 8785 form without the checksum"))
    else:
        where = f"; changed part(s): {', '.join(changed)}" if changed else ""
        out.append(Check("checksum", False, f"recorded {str(recorded)[:64]}, computed {computed}{where}"))
    for name in changed:
        if name not in computed_parts:
            detail = "listed in the checksum but absent from the bundle"
        elif name not in recorded_parts:
            detail = "present in the bundle but not covered by the recorded part digests"
        else:
            detail = f"part digest differs (recorded {str(recorded_parts[name])[:64]}, computed {computed_parts[name]})"
        out.append(Check(f"checksum.parts.{name}", False, detail))
    if not changed and recorded == computed:
        out.append(
            Check("parts", True, f"{len(computed_parts)} part digests match: {', '.join(sorted(computed_parts))}")
        )
    return out


def _digest_check(name: str, member: object, parts: CanonicalParts) -> Check:
    if name not in parts.content_digests or not isinstance(member, dict):  # content digests: such objects only
        return Check(name, False, "expected an object with exactly 'digest' and 'content'")
    digest = member.get("digest")
    recorded = digest.get("sha256") if isinstance(digest, dict) and set(digest) == {"sha256"} else None
    computed = parts.content_digests[name]
    if recorded == computed:
        return Check(name, True, f"content sha256 {computed}")
    return Check(name, False, f"content digest mismatch: recorded {str(recorded)[:64]}, computed {computed}")


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open_regular(path) as fh:  # a FIFO among the captures would never end
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_captures(subject: object, directory: Path) -> list[Check]:
    """Match each recorded capture to a file under ``directory`` by content digest.

    Files are matched by digest, so a renamed copy still counts; a file with the
    recorded name but other content is reported as changed.
    """
    if not directory.is_dir():
        raise UsageError(f"{directory}: not a directory")
    if not isinstance(subject, list):
        return [Check("captures", False, "the bundle lists no captures (subject)")]
    by_digest: dict[str, Path] = {}
    by_name: dict[str, Path] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        by_name.setdefault(path.name, path)
        by_digest.setdefault(_file_sha256(path), path)
    out = []
    for i, entry in enumerate(subject):
        entry = entry if isinstance(entry, dict) else {}
        name = str(entry.get("name"))
        want = (entry.get("digest") or {}).get("sha256") if isinstance(entry.get("digest"), dict) else None
        part = f"captures[{i}] {name}"
        if want in by_digest:
            found = by_digest[want]
            size_ok = entry.get("size") in (None, found.stat().st_size)
            out.append(Check(part, size_ok, f"{found} sha256 matches" + ("" if size_ok else "; size differs")))
        elif Path(name).name in by_name:
            out.append(
                Check(
                    part,
                    False,
                    f"{by_name[Path(name).name]} has other content than recorded (sha256 {str(want)[:16]}…)",
                )
            )
        else:
            out.append(Check(part, False, f"no file under {directory} has the recorded sha256 {str(want)[:16]}…"))
    return out


def render_verify(report: VerifyReport) -> str:
    """The human-readable report (the caller escapes nothing: every string is cleaned here)."""
    tool = report.tool
    lines = [
        f"{clean(report.source)}: {FORMAT} {clean(report.format_version)}, "
        f"made by {clean(tool.get('name', '?'))} {clean(tool.get('version', '?'))}"
    ]
    width = max([len(c.part) for c in [*report.checks, *(report.recompute or [])]] + [8])
    for title, checks in (("integrity", report.checks), ("recompute", report.recompute)):
        if checks is None:
            continue
        lines.append(f"{title}:")
        for c in checks:
            lines.append(f"  {'ok  ' if c.ok else 'FAIL'}  {clean(c.part):<{width}}  {clean(c.detail)}")
    if report.ok:
        lines.append(
            "result: VALID — every checked digest matches"
            + (" and the results recompute within tolerance" if report.recompute else "")
        )
    else:
        lines.append(f"result: MISMATCH in {clean(', '.join(report.mismatched))}")
    lines.append("authenticity: not signed. " + UNSIGNED_NOTE)
    return "\n".join(lines)
