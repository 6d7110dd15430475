"""Helpers for recorder tests: a clock the test moves by hand, a fake NVML, loaders."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

from workbench.recorder import Recorder


class FakeClock:
    """A monotonic ns clock that only moves when told to."""

    def __init__(self, start: int = 1_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance_ms(self, ms: float) -> int:
        self.now += int(ms * 1e6)
        return self.now


class FakeNvmlError(Exception):
    pass


class FakeNvml:
    """Enough of ``pynvml`` for the sampler: ``fail_init`` makes nvmlInit raise (no
    driver); ``unsupported`` names the queries that raise NotSupported."""

    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    nvmlEventTypeXidCriticalError = 8

    def __init__(
        self,
        *,
        fail_init: bool = False,
        devices: int = 1,
        unsupported: set[str] = frozenset(),
        xids: list[int] | None = None,
    ) -> None:
        self.fail_init = fail_init
        self.devices = devices
        self.unsupported = set(unsupported)
        self.xids = list(xids or [])
        self.shutdown = False

    def _check(self, name: str) -> None:
        if name in self.unsupported:
            raise FakeNvmlError(f"{name}: Not Supported")

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise FakeNvmlError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        self.shutdown = True

    def nvmlDeviceGetCount(self) -> int:
        return self.devices

    def nvmlDeviceGetHandleByIndex(self, i: int) -> str:
        return f"h{i}"

    def nvmlDeviceGetName(self, h: str) -> str:
        return "NVIDIA H200"

    def nvmlDeviceGetUUID(self, h: str) -> str:
        return f"GPU-{h}"

    def nvmlDeviceGetPciInfo(self, h: str) -> SimpleNamespace:
        return SimpleNamespace(busId=b"00000000:19:00.0")

    def nvmlSystemGetDriverVersion(self) -> str:
        return "570.86.15"

    def nvmlDeviceGetMemoryInfo(self, h: str) -> SimpleNamespace:
        self._check("memory")
        return SimpleNamespace(total=141 << 30, used=70 << 30)

    def nvmlDeviceGetUtilizationRates(self, h: str) -> SimpleNamespace:
        self._check("utilization")
        return SimpleNamespace(gpu=97, memory=40)

    def nvmlDeviceGetClockInfo(self, h: str, which: int) -> int:
        self._check("clocks")
        return 1980 if which == self.NVML_CLOCK_SM else 3201

    def nvmlDeviceGetPowerUsage(self, h: str) -> int:
        self._check("power")
        return 650_000

    def nvmlDeviceGetTemperature(self, h: str, which: int) -> int:
        self._check("temperature")
        return 61

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: str) -> int:
        self._check("throttle")
        return 0x4

    def nvmlEventSetCreate(self) -> str:
        self._check("events")
        return "events"

    def nvmlDeviceRegisterEvents(self, h: str, kind: int, es: str) -> None:
        self._check("events")

    def nvmlEventSetWait_v2(self, es: str, timeout_ms: int) -> SimpleNamespace:
        if not self.xids:
            raise FakeNvmlError("Timeout")
        return SimpleNamespace(device="h0", eventData=self.xids.pop(0), eventType=8)

    def nvmlEventSetFree(self, es: str) -> None:
        pass


def record_steps(rec: Recorder, clock: FakeClock, durations_ms, *, phases=("input", "compute")) -> None:
    """Record one step per duration, split evenly into ``phases``, on the fake clock."""
    for d in durations_ms:
        start = clock.now
        marks = {}
        for i, name in enumerate(phases):
            p0 = start + int(d * 1e6 * i / len(phases))
            p1 = start + int(d * 1e6 * (i + 1) / len(phases))
            marks[name] = (p0, p1)
        end = clock.advance_ms(d)
        rec.record_step(start, end, phases=marks, values={"samples": 32})
        clock.advance_ms(0.01)


def load(path) -> dict:
    def refuse(token: str) -> float:
        raise AssertionError(f"non-finite number {token} in a capture")

    with open(path, "rb") as fh:
        return json.loads(fh.read(), parse_constant=refuse)


def assert_no_nan(obj, where="$") -> None:
    if isinstance(obj, float):
        assert math.isfinite(obj), where
    elif isinstance(obj, dict):
        for k, v in obj.items():
            assert_no_nan(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            assert_no_nan(v, f"{where}[{i}]")
