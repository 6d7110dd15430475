"""Building and writing a bundle from plain data (no store here: the caller gathers it).

``workbench.investigations`` collects an investigation's records from the store and
hands them to :func:`build_bundle` as dicts; this module decides the bundle's shape,
applies :func:`bundle_value` (NFC, big integers as strings, no NaN), computes the
recipe / results / samples digests and the checksum.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench import TOOL_NAME, __version__
from workbench.bundle.action_status import status_in_bundle
from workbench.bundle.canonical import bundle_value
from workbench.bundle.columns import encode_tables
from workbench.bundle.format import (
    DIGESTED_PARTS,
    FORMAT,
    FORMAT_VERSION,
    OBSERVATION_LABEL,
    CanonicalParts,
    checksum_member,
)
from workbench.compare.model import verdict_of
from workbench.compare.parameters import ComparisonParameters
from workbench.outputs import write_atomically
from workbench.vocabulary import JSONDoc


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _digested(content: Any) -> JSONDoc:
    # The digest is filled in by seal(), which canonicalizes each part once.
    return {"digest": None, "content": content}


def build_bundle(
    *,
    investigation: Mapping[str, Any],
    runs: Iterable[Mapping[str, Any]],
    captures: Iterable[Mapping[str, Any]],
    comparisons: Iterable[Mapping[str, Any]],
    observations: Iterable[Mapping[str, Any]],
    hypotheses: Iterable[Mapping[str, Any]],
    rerun_plans: Iterable[Mapping[str, Any]] = (),
    rerun_comparisons: Iterable[Mapping[str, Any]] = (),
    samples: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    bisections: Iterable[Mapping[str, Any]] = (),
    actions: Iterable[Mapping[str, Any]] = (),
    tool: Mapping[str, str] | None = None,
    created_at: str | None = None,
) -> JSONDoc:
    """A complete bundle, checksum included.

    ``comparisons``: ``{"ref", "baseline": [run refs], "candidate": [...], ["control": [...]],
    "parameters": {"lens", "changes", "accepts"[, "control"]}, "engine": {...},
    ["declarations": [{"run": ref, "dimension", "value", "declaration"}]], "result": {...}}``.
    ``captures``: ``{"sha256", "size", "name", "format", "importer", "importer_version",
    "imported_at"}``. ``samples``: ``{run ref: {table: {column: array}}}`` or None.
    """
    if tool is None:
        tool = {"name": TOOL_NAME, "version": __version__}
    comparisons = [dict(c) for c in comparisons]
    actions, rerun_plans, rerun_comparisons = [dict(a) for a in actions], list(rerun_plans), list(rerun_comparisons)
    frame = bundle_value(dict(investigation))
    recipe = bundle_value(
        {
            "comparisons": [
                {k: c.get(k) for k in ("ref", "baseline", "candidate", "parameters", "engine")}
                | ({"control": c["control"]} if c.get("control") else {})  # A/A control run refs
                # the `wb declare` values in force for it, where its runs have any (recompute's input)
                | ({"declarations": c["declarations"]} if "declarations" in c else {})
                for c in comparisons
            ],
            "declared_changes": frame.get("intended_change"),
            "acceptances": [
                {"comparison": c.get("ref"), "dimension": dim, "why": why}
                for c in comparisons
                for dim, why in sorted(ComparisonParameters.from_json(c.get("parameters")).accepts.items())
            ],
            "guardrails": frame.get("guardrails"),
            "rerun_plans": list(rerun_plans),
            # What each carried rerun comparison was made of (its rebuild's inputs; only when any).
            **({"rerun_comparisons": [rerun_inputs(c) for c in rerun_comparisons]} if rerun_comparisons else {}),
            # Only when there are any, so bundles without bisections keep their bytes.
            **({"bisections": [dict(b) for b in bisections]} if bisections else {}),
            # Proposed actions with their decisions and verifications (likewise only when any).
            **({"actions": [dict(a) for a in actions]} if actions else {}),
        }
    )
    results = bundle_value(
        {
            "comparisons": [{"ref": c.get("ref"), "result": c.get("result")} for c in comparisons],
            "verdicts": [
                {
                    "comparison": c.get("ref"),
                    "comparable": bool((c.get("result") or {}).get("comparable")),
                    "verdict": verdict_of(c.get("result") or {}),
                }
                for c in comparisons
            ],
            "rerun_comparisons": list(rerun_comparisons),
            # Each action's status, derived from the carried records (--recompute derives it again).
            **({"actions": _action_statuses(actions, rerun_plans, rerun_comparisons)} if actions else {}),
        }
    )
    subject = [
        {
            "name": c.get("name"),
            "digest": {"sha256": c.get("sha256")},
            "size": c.get("size"),
            "annotations": {
                "format": c.get("format"),
                "importer": c.get("importer"),
                "importer_version": c.get("importer_version"),
                "imported_at": c.get("imported_at"),
            },
        }
        for c in _unique_captures(captures)
    ]
    bundle: JSONDoc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "tool": bundle_value(dict(tool)),
        "created_at": created_at or utc_now(),
        "text_normalization": "NFC",
        "investigation": frame,
        "runs": bundle_value(list(runs)),
        "subject": bundle_value(subject),
        "recipe": _digested(recipe),
        "results": _digested(results),
        "observations": bundle_value([{**o, "label": OBSERVATION_LABEL} for o in observations]),
        "hypotheses": bundle_value(list(hypotheses)),
    }
    if samples is not None:
        bundle["samples"] = _digested({"runs": {ref: encode_tables(t) for ref, t in samples.items()}})
    return seal(bundle, fill_digests=True)


# A logged run's fields the rerun harness reads as they were (the rest of a report's row is derived).
_LOGGED = ("round", "arm", "slot", "status", "reason", "started_at", "wall_s", "exit_status")


def rerun_inputs(carried: Mapping[str, Any]) -> JSONDoc:
    """What a carried rerun comparison (``{"ref", "record"}``, the stored row) was made of: its
    plan, its execution and the run log as they were when it was taken (its body says), each
    logged run by the bundle's ref of the run it imported. ``--recompute`` rebuilds the
    comparison from these and the arms' runs, which the bundle carries in ``runs``."""
    record = carried.get("record") or {}
    body = record.get("body") if isinstance(record, Mapping) else None
    if not isinstance(body, Mapping) or not isinstance(body.get("execution"), Mapping):
        why = record.get("unavailable") if isinstance(record, Mapping) else None
        return {"ref": carried.get("ref"), "unavailable": str(why or "it carries no run log")}
    return {
        "ref": carried.get("ref"),
        "id": record.get("id"),
        "plan": f"rerun-plan/{record.get('plan_id')}",
        "execution": dict(body["execution"]),
        "runs": [
            {k: row.get(k) for k in _LOGGED}
            | {"run": None if row.get("run_id") is None else f"run/{row.get('run_id')}"}
            | ({"stderr_tail": row["stderr_tail"]} if row.get("stderr_tail") is not None else {})
            for row in body.get("runs") or []
        ],
        "created_at": record.get("created_at"),
    }


def rerun_run_ids(rerun_comparisons: Iterable[Mapping[str, Any]]) -> list[int]:
    """The runs the carried rerun comparisons' logs imported (the bundle carries them)."""
    ids: list[int] = []
    for carried in rerun_comparisons:
        body = (carried.get("record") or {}).get("body") or {}
        for row in body.get("runs") or []:
            if isinstance(row.get("run_id"), int) and row["run_id"] not in ids:
                ids.append(row["run_id"])
    return ids


def _action_statuses(
    actions: Iterable[Mapping[str, Any]], plans: Iterable[Mapping[str, Any]], comparisons: Iterable[Mapping[str, Any]]
) -> list[JSONDoc]:
    plans, comparisons = list(plans), list(comparisons)
    return [{"action": a.get("ref"), **status_in_bundle(a, plans, comparisons)} for a in actions]


def _unique_captures(captures: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    seen: dict[str, Mapping[str, Any]] = {}
    for c in captures:
        seen.setdefault(str(c.get("sha256")), c)
    return [seen[k] for k in sorted(seen)]


def seal(bundle: JSONDoc, *, fill_digests: bool = False) -> JSONDoc:
    """``bundle`` with its checksum member (re)computed; with ``fill_digests`` the
    recipe / results / samples digests are (re)computed too, otherwise left as they are."""
    body = {
        k: (dict(v) if k in DIGESTED_PARTS and isinstance(v, dict) else v) for k, v in bundle.items() if k != "checksum"
    }
    body["checksum"] = checksum_member(CanonicalParts(body, fill_digests=fill_digests))
    return body


def reseal_digests(bundle: JSONDoc) -> JSONDoc:
    """Recompute every content digest and the checksum (what a forger would do; tests use it)."""
    return seal(bundle, fill_digests=True)


def dumps(bundle: Mapping[str, Any]) -> str:
    """Readable JSON text (verification recanonicalizes, so layout does not matter)."""
    return json.dumps(bundle, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write_bundle(bundle: Mapping[str, Any], path: str | Path) -> Path:
    """Write atomically: a failed write (a full disk) leaves no partial bundle behind."""
    return write_atomically(path, dumps(bundle).encode("utf-8"))
