"""The conditions a retry depends on: what a diagnosis blamed, and what a retry ran under.

"A retry is useful only if the conditions that caused the failure have changed." From a
``wb diagnose`` document: the node(s) the failure class names, the GPU (index, PCI
address or serial) and Xid of the first failure, the memory limit it hit, the driver
where a line states it. From a rerun execution's preflight: its host, driver and GPU
serials. A condition the data do not state is left out: unknown, never "changed".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# Condition name -> what it was: one value (driver, gpu, xid, memory_limit) or several (node, gpu_serial).
Conditions = dict[str, str | list[str]]

_CAPACITY = re.compile(r"total capacity of ([0-9.]+ ?[KMGT]i?B)")
_CGROUP_LIMIT = re.compile(r"(?:memory limit|limit)[ =:]+([0-9.]+ ?[KMGT]i?B|[0-9]+kB)", re.I)


def blamed_conditions(diagnosis: Mapping[str, Any]) -> Conditions:
    """What the diagnosis blamed (``Diagnosis.to_json()``): ``{}`` when it names no failure."""
    fc = diagnosis.get("failure_class") or {}
    first = (diagnosis.get("first_failure") or {}).get("event") or {}
    out: Conditions = {}
    hosts = list((fc.get("where") or {}).get("hosts") or ([first["host"]] if first.get("host") else []))
    if hosts:
        out["node"] = sorted(map(str, hosts))
    out.update(_event_conditions(first))
    return out


def observed_conditions(diagnosis: Mapping[str, Any]) -> Conditions:
    """What a retry's own files say (``Diagnosis.to_json()`` of the new job): every host its
    events name, and the first failure's GPU, Xid, memory limit, driver if it failed."""
    hosts = {str(e["host"]) for e in diagnosis.get("timeline") or [] if e.get("host")}
    out: Conditions = {"node": sorted(hosts)} if hosts else {}
    out.update(_event_conditions((diagnosis.get("first_failure") or {}).get("event") or {}))
    return out


def preflight_conditions(preflight: Mapping[str, Any]) -> Conditions:
    """A rerun execution's preflight (``PreflightReport.to_json()``): host, driver, GPU serials."""
    env = preflight.get("environment") or {}
    out: Conditions = {}
    if preflight.get("host"):
        out["node"] = [str(preflight["host"])]
    if env.get("driver_version") and env["driver_version"] != "unknown":
        out["driver"] = str(env["driver_version"])
    serials = sorted(str(d["serial"]) for d in env.get("devices") or [] if d.get("serial") and d["serial"] != "unknown")
    if serials:
        out["gpu_serial"] = serials
    return out


def _event_conditions(event: Mapping[str, Any]) -> Conditions:
    values = event.get("values") or {}
    text = str(event.get("text") or "")
    out: Conditions = {}
    if values.get("serial"):
        out["gpu_serial"] = [str(values["serial"])]
    if values.get("pci"):
        out["gpu"] = str(values["pci"])
    elif values.get("gpu") is not None:
        out["gpu"] = str(values["gpu"])
    if event.get("kind") == "xid" and values.get("code") is not None:
        catalog = values.get("catalog") or {}
        out["xid"] = f"{values['code']}" + (f" ({catalog['class']})" if catalog.get("class") else "")
    if values.get("driver"):
        out["driver"] = str(values["driver"])
    match = _CAPACITY.search(text) or (_CGROUP_LIMIT.search(text) if "oom" in str(event.get("kind")) else None)
    if match:
        out["memory_limit"] = match.group(1)
    return out
