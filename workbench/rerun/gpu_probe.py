"""GPU identity and settings through NVML (``pynvml`` from nvidia-ml-py), read defensively.

Every field is a :class:`Reading` that says how it was obtained:

- ``ran``: the query ran and gave a value;
- ``no data``: the query ran but the device gave nothing (not supported on this SKU,
  MIG slice or VM, or no permission);
- ``unavailable``: the query could not run (no NVML library, no driver, no GPU).

No GPU is not a failure: device fields are then ``unknown`` with the reason.
``pynvml`` is imported only when a probe runs; tests pass a fake module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Final, Literal

from workbench.vocabulary import Record

UNKNOWN = "unknown"
# How a reading was obtained; the summary as a whole either ran (NVML answered) or was unavailable.
ProbeStatus = Literal["ran", "no data", "unavailable"]
SummaryStatus = Literal["ran", "unavailable"]
RAN: Final = "ran"
NO_DATA: Final = "no data"
UNAVAILABLE: Final = "unavailable"

# Device fields in display order; each maps to a reader below.
DEVICE_FIELDS = (
    "name",
    "uuid",
    "pci_bus_id",
    "compute_capability",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "app_sm_clock_mhz",
    "app_mem_clock_mhz",
    "max_sm_clock_mhz",
    "power_limit_w",
    "power_draw_w",
    "temperature_c",
    "persistence_mode",
    "mig_mode",
    "ecc_mode",
    "memory_total_mib",
)
# Fields that identify the device and its settings: a change is a changed environment.
# Current clocks, power draw and temperature move on their own and are only recorded.
IDENTITY_FIELDS = (
    "name",
    "uuid",
    "compute_capability",
    "app_sm_clock_mhz",
    "app_mem_clock_mhz",
    "power_limit_w",
    "persistence_mode",
    "mig_mode",
    "ecc_mode",
)


class ProbeResult(Record, frozen=True, kw_only=True, omit_defaults=True):
    """A reading as shown: how it was obtained, the value (``unknown`` unless it ran) and why not."""

    status: ProbeStatus
    value: str | int | float
    detail: str | None = None


class GpuSummary(Record, frozen=True, kw_only=True):
    """What NVML said: the system's versions and each device's identity and settings."""

    status: SummaryStatus
    reason: str
    driver_version: ProbeResult
    cuda_driver_version: ProbeResult
    nvml_version: ProbeResult
    device_count: int | str  # "unknown" when NVML did not answer
    devices: tuple[dict[str, ProbeResult], ...]  # field name -> reading, in DEVICE_FIELDS order


@dataclass(frozen=True)
class Reading:
    status: ProbeStatus
    value: Any = None
    detail: str = ""

    @property
    def known(self) -> bool:
        return self.status == RAN and self.value is not None

    @property
    def shown(self) -> str:
        return str(self.value) if self.known else UNKNOWN

    def record(self) -> ProbeResult:
        return ProbeResult(status=self.status, value=self.value if self.known else UNKNOWN, detail=self.detail or None)


@dataclass(frozen=True)
class GpuReport:
    status: SummaryStatus
    reason: str
    driver_version: Reading
    cuda_driver_version: Reading
    nvml_version: Reading
    devices: tuple[dict[str, Reading], ...]

    def record(self) -> GpuSummary:
        return GpuSummary(
            status=self.status,
            reason=self.reason,
            driver_version=self.driver_version.record(),
            cuda_driver_version=self.cuda_driver_version.record(),
            nvml_version=self.nvml_version.record(),
            device_count=len(self.devices) if self.status == RAN else UNKNOWN,
            devices=tuple({k: p.record() for k, p in d.items()} for d in self.devices),
        )


def _unavailable_report(reason: str) -> GpuReport:
    none = Reading(UNAVAILABLE, None, reason)
    return GpuReport(UNAVAILABLE, reason, none, none, none, ())


def _on_off(v: Any) -> str:
    return "enabled" if v == 1 else "disabled" if v == 0 else str(v)


def _read(call: Callable[[], Any], convert: Callable[[Any], Any] = lambda v: v) -> Reading:
    """Run one NVML query; NVML errors become ``no data`` with the reason."""
    try:
        value = call()
    except Exception as exc:  # noqa: BLE001 - NotSupported, NoPermission, an old binding without the call
        return Reading(NO_DATA, None, str(exc) or type(exc).__name__)
    if value is None or value == "":
        return Reading(NO_DATA, None, "empty answer")
    try:
        return Reading(RAN, convert(value))
    except (TypeError, ValueError, IndexError) as exc:
        return Reading(NO_DATA, None, f"unreadable answer {value!r} ({exc})")


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _device(nvml: Any, h: Any) -> dict[str, Reading]:
    clock = lambda kind: lambda: nvml.nvmlDeviceGetClockInfo(h, kind)  # noqa: E731
    app = lambda kind: lambda: nvml.nvmlDeviceGetApplicationsClock(h, kind)  # noqa: E731
    readers: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
        "name": (lambda: nvml.nvmlDeviceGetName(h), str),
        "uuid": (lambda: nvml.nvmlDeviceGetUUID(h), str),
        "pci_bus_id": (lambda: nvml.nvmlDeviceGetPciInfo(h).busId, str),
        "compute_capability": (lambda: nvml.nvmlDeviceGetCudaComputeCapability(h), lambda v: f"{v[0]}.{v[1]}"),
        "sm_clock_mhz": (clock(getattr(nvml, "NVML_CLOCK_SM", 1)), int),
        "mem_clock_mhz": (clock(getattr(nvml, "NVML_CLOCK_MEM", 2)), int),
        "app_sm_clock_mhz": (app(getattr(nvml, "NVML_CLOCK_SM", 1)), int),
        "app_mem_clock_mhz": (app(getattr(nvml, "NVML_CLOCK_MEM", 2)), int),
        "max_sm_clock_mhz": (lambda: nvml.nvmlDeviceGetMaxClockInfo(h, getattr(nvml, "NVML_CLOCK_SM", 1)), int),
        "power_limit_w": (lambda: nvml.nvmlDeviceGetPowerManagementLimit(h), lambda v: round(v / 1000.0, 1)),
        "power_draw_w": (lambda: nvml.nvmlDeviceGetPowerUsage(h), lambda v: round(v / 1000.0, 1)),
        "temperature_c": (lambda: nvml.nvmlDeviceGetTemperature(h, getattr(nvml, "NVML_TEMPERATURE_GPU", 0)), int),
        "persistence_mode": (lambda: nvml.nvmlDeviceGetPersistenceMode(h), _on_off),
        "mig_mode": (lambda: nvml.nvmlDeviceGetMigMode(h), lambda v: _on_off(v[0])),
        "ecc_mode": (lambda: nvml.nvmlDeviceGetEccMode(h), lambda v: _on_off(v[0])),
        "memory_total_mib": (lambda: nvml.nvmlDeviceGetMemoryInfo(h).total, lambda v: int(v) // (1 << 20)),
    }
    return {name: _read(call, conv) for name, (call, conv) in readers.items()}


def probe_gpus(nvml: Any = None) -> GpuReport:
    """Reading every GPU NVML can see. Never raises: no GPU means ``unavailable``/``unknown``."""
    if nvml is None:
        try:
            import pynvml as nvml  # nvidia-ml-py
        except ImportError:
            return _unavailable_report("pynvml (nvidia-ml-py) is not installed")
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - LibraryNotFound, DriverNotLoaded, NoPermission, ...
        return _unavailable_report(f"NVML did not start: {exc or type(exc).__name__}")
    try:
        driver = _read(nvml.nvmlSystemGetDriverVersion, str)
        cuda = _read(nvml.nvmlSystemGetCudaDriverVersion, lambda v: _cuda_version(int(v)))
        version = _read(nvml.nvmlSystemGetNVMLVersion, str)
        count = _read(nvml.nvmlDeviceGetCount, int)
        devices = []
        for i in range(count.value if count.known else 0):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(i)
            except Exception as exc:  # noqa: BLE001
                devices.append({f: Reading(NO_DATA, None, f"device {i}: {exc}") for f in DEVICE_FIELDS})
                continue
            devices.append(_device(nvml, handle))
        reason = "" if devices else ("NVML reports no GPUs" if count.known else f"device count: {count.detail}")
        return GpuReport(RAN, reason, driver, cuda, version, tuple(devices))
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down is best effort
            pass
