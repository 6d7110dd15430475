"""GPU observations sampled by a background thread through NVML.

``pynvml`` (package ``nvidia-ml-py``) is imported inside the sampler thread, never at
import time. When NVML cannot start (no driver, no GPU, no library) the sampler records
the status ``unavailable`` with the reason and no samples: the observations are
*unknown*, never zeros. A metric a device does not support is NaN in the ring and an
absent key in the snapshot.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, Protocol

from msgspec import UNSET

from workbench.recorder.records import Device, GpuSection

NAN = math.nan

# One row of the GPU ring. Units are in the names; throttle_reasons is NVML's bitmask.
GPU_FIELDS: tuple[str, ...] = (
    "t_ns",
    "device",
    "util_pct",
    "mem_util_pct",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "power_w",
    "temperature_c",
    "memory_used_bytes",
    "throttle_reasons",
)
METRICS: tuple[str, ...] = GPU_FIELDS[2:]


class GpuSource(Protocol):
    """What the sampler reads from. ``open`` raises when no GPU can be observed."""

    def open(self) -> list[Device]: ...

    def read(self, index: int) -> list[float]: ...

    def xid_events(self) -> list[tuple[int, int]]: ...

    def close(self) -> None: ...


class NvmlSource:
    """The real source: NVML through ``pynvml``, loaded lazily (``module`` for tests)."""

    def __init__(self, module: Any = None) -> None:
        self._nv = module
        self._handles: list[Any] = []
        self._events: Any = None
        self.xid_status = "unknown"

    def open(self) -> list[Device]:
        if self._nv is None:
            import pynvml  # lazy: only the sampler thread pays for it

            self._nv = pynvml
        nv = self._nv
        nv.nvmlInit()
        driver = None
        try:
            value = nv.nvmlSystemGetDriverVersion()
            driver = value.decode() if isinstance(value, bytes) else str(value)
        except Exception:  # noqa: BLE001
            pass
        devices = []
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            self._handles.append(handle)
            info: dict[str, str | int] = {}
            for key, fn in (("name", "nvmlDeviceGetName"), ("uuid", "nvmlDeviceGetUUID"), ("pci_bus_id", None)):
                try:
                    if key == "pci_bus_id":
                        value = nv.nvmlDeviceGetPciInfo(handle).busId
                    else:
                        value = getattr(nv, fn)(handle)
                except Exception:  # noqa: BLE001 - an identity field NVML won't give is unknown
                    continue
                info[key] = value.decode() if isinstance(value, bytes) else str(value)
            try:
                info["memory_total_bytes"] = int(nv.nvmlDeviceGetMemoryInfo(handle).total)
            except Exception:  # noqa: BLE001
                pass
            if driver is not None:
                info["driver"] = driver
            devices.append(Device(index=index, **info))  # type: ignore[arg-type]
        self._open_xid_events()
        return devices

    def _open_xid_events(self) -> None:
        nv = self._nv
        try:
            events = nv.nvmlEventSetCreate()
            for handle in self._handles:
                nv.nvmlDeviceRegisterEvents(handle, nv.nvmlEventTypeXidCriticalError, events)
            self._events = events
            self.xid_status = "watched"
        except Exception as exc:  # noqa: BLE001 - Xid events are optional (not on every driver)
            self._events = None
            self.xid_status = f"not available ({type(exc).__name__})"

    def read(self, index: int) -> list[float]:
        nv = self._nv
        h = self._handles[index]
        out = [NAN] * len(METRICS)

        def put(slot: int, fn: Callable[[], float]) -> None:
            try:
                out[slot] = float(fn())
            except Exception:  # noqa: BLE001 - not supported on this device: unknown
                pass

        try:
            rates = nv.nvmlDeviceGetUtilizationRates(h)
            out[0], out[1] = float(rates.gpu), float(rates.memory)
        except Exception:  # noqa: BLE001 - not supported on this device: unknown
            pass
        put(2, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM))
        put(3, lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM))
        put(4, lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0)  # mW -> W
        put(5, lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))
        put(6, lambda: nv.nvmlDeviceGetMemoryInfo(h).used)
        reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nv, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        if reasons is not None:
            put(7, lambda: reasons(h))
        return out

    def xid_events(self) -> list[tuple[int, int]]:
        """Xid events since the last call: (device index, xid). Never blocks."""
        if self._events is None:
            return []
        nv = self._nv
        found = []
        for _ in range(64):  # bounded per tick
            try:
                data = nv.nvmlEventSetWait_v2(self._events, 0)
            except Exception:  # noqa: BLE001 - NVMLError_Timeout: nothing pending
                break
            found.append((self._index_of(getattr(data, "device", None)), int(getattr(data, "eventData", -1))))
        return found

    def _index_of(self, handle: Any) -> int:
        """The device index of an event's handle (ctypes handles don't compare by value:
        match by UUID); -1 when it can't be told."""
        try:
            uuid = self._nv.nvmlDeviceGetUUID(handle)
            for i, h in enumerate(self._handles):
                if self._nv.nvmlDeviceGetUUID(h) == uuid:
                    return i
        except Exception:  # noqa: BLE001
            pass
        return -1

    def close(self) -> None:
        try:
            if self._events is not None:
                self._nv.nvmlEventSetFree(self._events)
            if self._nv is not None:
                self._nv.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down an NVML that never started
            pass


class GpuSampler:
    """Samples every device every ``interval_s`` into a ring, on a daemon thread.

    ``sample_once(now_ns)`` is the whole of one tick, so tests call it directly with
    their own clock; the thread only loops over it.
    """

    def __init__(
        self,
        ring: Any,
        *,
        interval_s: float,
        clock_ns: Callable[[], float],
        source: GpuSource | None = None,
        on_fault: Callable[[BaseException, str], None] | None = None,
        on_xid: Callable[[float, int, int], None] | None = None,
    ) -> None:
        self.ring = ring
        self.interval_s = interval_s
        self.clock_ns = clock_ns
        self.source: GpuSource = source if source is not None else NvmlSource()
        self.on_fault = on_fault or (lambda exc, where: None)
        self.on_xid = on_xid or (lambda t, dev, xid: None)
        self.status = "not started"
        self.reason: str | None = None
        self.devices: list[Device] = []
        self.samples = 0
        self.overruns = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> bool:
        try:
            self.devices = self.source.open()
        except Exception as exc:  # noqa: BLE001 - no NVML: GPU observations are unknown
            self.status = "unavailable"
            self.reason = f"NVML could not start: {type(exc).__name__}: {exc}"
            return False
        if not self.devices:
            self.status = "unavailable"
            self.reason = "NVML reports no devices"
            return False
        self.status = "ok"
        return True

    def sample_once(self, now_ns: float) -> None:
        for info in self.devices:
            index = info.index
            try:
                self.ring.append([now_ns, float(index), *self.source.read(index)])
            except Exception as exc:  # noqa: BLE001
                self.on_fault(exc, "gpu sample")
        try:
            for device, xid in self.source.xid_events():
                self.on_xid(now_ns, device, xid)
        except Exception as exc:  # noqa: BLE001
            self.on_fault(exc, "gpu xid events")
        self.samples += 1
        self.ring.maybe_seal(now_ns)

    def start(self) -> None:
        self._stop.clear()
        self.status = "starting"
        self._thread = threading.Thread(target=self._run, name="wb-recorder-gpu", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if not self.open():
                return
            while not self._stop.is_set():
                began = self.clock_ns()
                self.sample_once(began)
                spent_s = (self.clock_ns() - began) / 1e9
                if spent_s > self.interval_s:
                    self.overruns += 1
                self._stop.wait(max(0.0, self.interval_s - spent_s))
        except Exception as exc:  # noqa: BLE001 - the sampler dies quietly, counted
            self.status = "failed"
            self.reason = f"{type(exc).__name__}: {exc}"
            self.on_fault(exc, "gpu sampler")
        finally:
            self.source.close()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(timeout)
        if self.status in ("ok", "starting"):
            self.status = "stopped"

    def describe(self) -> GpuSection:
        xid = getattr(self.source, "xid_status", None)
        return GpuSection(
            status=self.status,
            interval_s=self.interval_s,
            reason=self.reason or UNSET,
            devices=list(self.devices) or UNSET,
            samples_taken=self.samples,
            overruns=self.overruns,
            xid_events=xid if xid is not None and self.status != "unavailable" else UNSET,
        )
