"""Preflight: what machine is this, and is it still the machine and the files the plan was made for?

Taken before every execution (and every resume) and recorded with it; ``wb doctor``
prints the same report for this machine. Two things block a run, each named:

- an artifact that is missing or whose SHA-256 changed since the plan was made;
- a changed environment: a GPU identity or setting (device, UUID, driver, CUDA
  driver, toolkit, application clocks, power limit, persistence, MIG, ECC) that was
  known when the plan was made and differs now (or is gone).

A changed environment is a new experiment: make a new plan with a new name.
Fields that were unknown when the plan was made are not compared (and the report says
so); current clocks, power draw and temperature are recorded, never compared.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import textwrap
from dataclasses import dataclass, field
from datetime import datetime, timezone
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from workbench.rerun.gpu_probe import (
    IDENTITY_FIELDS,
    NO_DATA,
    RAN,
    UNAVAILABLE,
    UNKNOWN,
    GpuReport,
    GpuSummary,
    ProbeResult,
    Reading,
    probe_gpus,
)
from workbench.rerun.plan import Environment, Plan, sha256_of
from workbench.vocabulary import Record
from workbench.textsafe import clean

# Distributions whose versions are recorded (read from metadata: nothing is imported).
KEY_PACKAGES = ("wb", "numpy", "scipy", "nvidia-ml-py", "cupy-cuda12x", "cupy-cuda11x", "torch", "vllm", "sglang")


def toolkit_probe(timeout_s: float = 10.0) -> Reading:
    """The CUDA toolkit from ``nvcc --version`` (``unavailable`` when there is no nvcc)."""
    nvcc = shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)
    if nvcc is None:
        return Reading(UNAVAILABLE, None, "nvcc not found on PATH")
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Reading(NO_DATA, None, f"{nvcc} --version failed: {exc}")
    match = re.search(r"release\s+([\d.]+)(?:,\s*V([\w.\-]+))?", out.stdout)
    if out.returncode != 0 or not match:
        return Reading(NO_DATA, None, f"{nvcc} --version gave no release (exit {out.returncode})")
    return Reading(RAN, match.group(2) or match.group(1), nvcc)


def software_versions() -> dict[str, str]:
    # loads email and zipfile: read when a preflight runs, not when its records are decoded
    from importlib import metadata

    versions = {"python": platform.python_version(), "python_implementation": platform.python_implementation()}
    for name in KEY_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


class ArtifactCheck(Record, frozen=True, kw_only=True, omit_defaults=True):
    """A pinned artifact as it is now (``detail``: why it could not be read; ``size``: when it could)."""

    path: str
    role: str
    sha256: str  # in the plan
    status: Literal["ok", "missing", "changed"]
    now: str | None  # its SHA-256 now
    detail: str | None = None
    size: int | None = None


def check_artifacts(plan: Plan) -> list[ArtifactCheck]:
    """Each pinned artifact as it is now: ``ok``, ``missing`` or ``changed`` (with both digests)."""
    out = []
    for a in plan.artifacts:
        pinned = {"path": a.path, "role": a.role, "sha256": a.sha256}
        p = Path(a.path)
        if not p.is_file():
            out.append(ArtifactCheck(**pinned, status="missing", now=None))
            continue
        try:
            sha, size = sha256_of(p)
        except OSError as exc:
            out.append(ArtifactCheck(**pinned, status="missing", now=None, detail=str(exc.strerror or exc)))
        else:
            out.append(ArtifactCheck(**pinned, status="ok" if sha == a.sha256 else "changed", now=sha, size=size))
    return out


def environment_of(gpu: GpuReport, toolkit: Reading) -> Environment:
    """The comparable environment: identity fields, ``unknown`` where not known."""
    return Environment(
        driver_version=gpu.driver_version.shown,
        cuda_driver_version=gpu.cuda_driver_version.shown,
        cuda_toolkit=toolkit.shown,
        device_count=len(gpu.devices) if gpu.status == RAN else UNKNOWN,
        devices=tuple({f: d[f].shown for f in IDENTITY_FIELDS if f in d} for d in gpu.devices),
    )


def compare_environments(expected: Environment, now: Environment) -> tuple[list[str], list[str]]:
    """(changes that block, notes): a field known in ``expected`` must be the same now."""
    changes: list[str] = []
    notes: list[str] = []

    def check(label: str, was: Any, is_: Any) -> None:
        if was == UNKNOWN or was is None:
            if is_ not in (UNKNOWN, None):
                notes.append(f"{label}: unknown when the plan was made, now {is_} (not compared)")
            return
        if is_ != was:
            changes.append(
                f"{label}: {was} in the plan, {'unknown (gone or unreadable)' if is_ in (UNKNOWN, None) else is_} now"
            )

    for key in ("driver_version", "cuda_driver_version", "cuda_toolkit", "device_count"):
        check(key, getattr(expected, key), getattr(now, key))
    was_devices = expected.devices or ()
    now_devices = now.devices or ()
    for i, was in enumerate(was_devices):
        is_ = now_devices[i] if i < len(now_devices) else {}
        for f in IDENTITY_FIELDS:
            check(f"gpu{i}.{f}", was.get(f, UNKNOWN), is_.get(f, UNKNOWN))
    return changes, notes


class PreflightReport(Record, frozen=True, kw_only=True):
    """``wb doctor --json``, and what each execution records before it runs (``preflights``)."""

    taken_at: str
    host: str
    os: str
    gpu: GpuSummary
    cuda_toolkit: ProbeResult
    software: dict[str, str]  # distribution -> version
    environment: Environment  # the comparable fields (environment_of): what a plan pins
    artifacts: tuple[ArtifactCheck, ...]
    environment_changes: tuple[str, ...]
    notes: tuple[str, ...]
    blockers: tuple[str, ...]
    ok: bool

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "PreflightReport":
        return msgspec.convert(dict(doc), cls)


@dataclass
class Preflight:
    taken_at: str
    host: str
    gpu: GpuReport
    toolkit: Reading
    software: dict[str, str]
    artifacts: list[ArtifactCheck] = field(default_factory=list)
    environment_changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def environment(self) -> Environment:
        return environment_of(self.gpu, self.toolkit)

    @property
    def blockers(self) -> list[str]:
        """Why this execution must not run; empty when it may."""
        out = [f"artifact {a.path} is missing" for a in self.artifacts if a.status == "missing"]
        out += [
            f"artifact {a.path} changed: SHA-256 {a.now} now, {a.sha256} in the plan"
            for a in self.artifacts
            if a.status == "changed"
        ]
        out += [f"environment changed: {c}" for c in self.environment_changes]
        return out

    def report(self) -> PreflightReport:
        return PreflightReport(
            taken_at=self.taken_at,
            host=self.host,
            os=f"{platform.system()} {platform.release()} {platform.machine()}",
            gpu=self.gpu.record(),
            cuda_toolkit=self.toolkit.record(),
            software=self.software,
            environment=self.environment,
            artifacts=tuple(self.artifacts),
            environment_changes=tuple(self.environment_changes),
            notes=tuple(self.notes),
            blockers=tuple(self.blockers),
            ok=not self.blockers,
        )

    def to_json(self) -> dict[str, object]:
        return self.report().to_json()


def run_preflight(plan: Plan | None = None, *, expected: Environment | None = None, nvml: Any = None) -> Preflight:
    """Reading this machine; with a plan, check its artifacts and its environment.

    ``expected`` overrides the plan's recorded environment (a resume compares with the
    execution's first preflight as well).
    """
    gpu = probe_gpus(nvml)
    toolkit = toolkit_probe()
    pf = Preflight(
        taken_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        host=socket.gethostname(),
        gpu=gpu,
        toolkit=toolkit,
        software=software_versions(),
    )
    if plan is not None:
        pf.artifacts = check_artifacts(plan)
        reference = expected if expected is not None else plan.environment
        if reference.recorded:
            pf.environment_changes, pf.notes = compare_environments(reference, pf.environment)
    return pf


# -- text for 80 columns --------------------------------------------------------------


def _line(label: str, value: str, status: str = "", width: int = 80) -> str:
    tag = f"[{status}]" if status and status != RAN else ""
    room = width - 24 - len(tag) - 1
    value = value if len(value) <= room else value[: max(room - 1, 0)] + "…"
    return f"  {label:<21} {value:<{room}} {tag}".rstrip()


def render_preflight(pf: Preflight, width: int = 80) -> str:
    """The report as plain lines of at most ``width`` columns (values are clean text)."""
    lines = [f"Preflight on {clean(pf.host)} at {pf.taken_at}"]
    gpu = pf.gpu
    lines.append("GPU")
    if gpu.status != RAN:
        lines.append(_line("devices", UNKNOWN, UNAVAILABLE, width))
        lines.append(_line("why", clean(gpu.reason), "", width))
    for label, probe in (
        ("driver", gpu.driver_version),
        ("CUDA driver", gpu.cuda_driver_version),
        ("CUDA toolkit (nvcc)", pf.toolkit),
    ):
        lines.append(_line(label, clean(probe.shown), probe.status, width))
    if gpu.status == RAN and not gpu.devices:
        lines.append(_line("devices", f"none ({clean(gpu.reason)})", NO_DATA, width))
    for i, dev in enumerate(gpu.devices):
        lines.append(f" gpu{i}")
        for name, probe in dev.items():
            lines.append(_line(name.replace("_", " "), clean(probe.shown), probe.status, width))
    lines.append("Software")
    for name, version in pf.software.items():
        lines.append(_line(name, clean(version), "", width))
    if pf.artifacts:
        lines.append("Artifacts")
        for a in pf.artifacts:
            lines.append(_line(a.status, clean(a.path), "", width))

    for prefix, texts in (("note: ", pf.notes), ("BLOCKED: ", pf.blockers)):
        for text in texts:
            lines += textwrap.wrap(
                clean(text), width, initial_indent="  " + prefix, subsequent_indent="    ", break_on_hyphens=False
            )
    return "\n".join(lines)
