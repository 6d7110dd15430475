"""Preflight and wb doctor: GPU probes say ran / no data / unavailable; no GPU is unknown, not failure."""

from __future__ import annotations

import json

from workbench.rerun.gpu_probe import NO_DATA, RAN, UNAVAILABLE, UNKNOWN, probe_gpus
from workbench.rerun.plan import build_plan
from workbench.rerun.preflight import compare_environments, render_preflight, run_preflight

from .helpers import wb


class NVMLError(Exception):
    pass


class FakeNvml:
    """Enough of pynvml for one H100 that will not say its ECC mode or application clocks."""

    NVMLError = NVMLError
    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self, uuid="GPU-1111", driver="550.54.15"):
        self.uuid, self.driver, self.shut = uuid, driver, False

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        self.shut = True

    def nvmlSystemGetDriverVersion(self):
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self):
        return 12040

    def nvmlSystemGetNVMLVersion(self):
        return "12.550.54.15"

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, i):
        return object()

    def nvmlDeviceGetName(self, h):
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, h):
        return self.uuid

    def nvmlDeviceGetPciInfo(self, h):
        return type("Pci", (), {"busId": "00000000:19:00.0"})()

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (9, 0)

    def nvmlDeviceGetClockInfo(self, h, kind):
        return 1980 if kind == 1 else 2619

    def nvmlDeviceGetApplicationsClock(self, h, kind):
        raise NVMLError("Not Supported")

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return 1980

    def nvmlDeviceGetPowerManagementLimit(self, h):
        return 700000

    def nvmlDeviceGetPowerUsage(self, h):
        return 312345

    def nvmlDeviceGetTemperature(self, h, kind):
        return 41

    def nvmlDeviceGetPersistenceMode(self, h):
        return 1

    def nvmlDeviceGetMigMode(self, h):
        return [0, 0]

    def nvmlDeviceGetEccMode(self, h):
        raise NVMLError("Insufficient Permissions")

    def nvmlDeviceGetMemoryInfo(self, h):
        return type("Mem", (), {"total": 80 * (1 << 30)})()


class NoDriver(FakeNvml):
    def nvmlInit(self):
        raise NVMLError("Driver Not Loaded")


def test_fake_gpu_fields_say_how_they_were_read():
    nvml = FakeNvml()
    report = probe_gpus(nvml)
    assert report.status == RAN and nvml.shut
    assert report.driver_version.value == "550.54.15" and report.cuda_driver_version.value == "12.4"
    (dev,) = report.devices
    assert dev["name"].status == RAN and dev["uuid"].value == "GPU-1111"
    assert dev["compute_capability"].value == "9.0" and dev["power_limit_w"].value == 700.0
    assert dev["mig_mode"].value == "disabled" and dev["persistence_mode"].value == "enabled"
    assert dev["ecc_mode"].status == NO_DATA and "Permissions" in dev["ecc_mode"].detail
    assert dev["app_sm_clock_mhz"].status == NO_DATA and dev["app_sm_clock_mhz"].shown == UNKNOWN


def test_no_gpu_is_unknown_not_failure():
    pf = run_preflight(nvml=NoDriver())
    doc = pf.to_json()
    assert doc["gpu"]["status"] == UNAVAILABLE and "Driver Not Loaded" in doc["gpu"]["reason"]
    assert doc["gpu"]["driver_version"] == {"status": UNAVAILABLE, "value": UNKNOWN, "detail": doc["gpu"]["reason"]}
    assert doc["environment"]["device_count"] == UNKNOWN and doc["ok"] is True
    assert doc["software"]["python"]


def test_environment_changes_block_and_unknowns_are_only_noted():
    was = run_preflight(nvml=FakeNvml()).environment
    same, notes = compare_environments(was, run_preflight(nvml=FakeNvml()).environment)
    assert same == [] and notes == []
    changed, _ = compare_environments(was, run_preflight(nvml=FakeNvml(uuid="GPU-2222", driver="555.1")).environment)
    assert "driver_version: 550.54.15 in the plan, 555.1 now" in changed
    assert "gpu0.uuid: GPU-1111 in the plan, GPU-2222 now" in changed
    gone, _ = compare_environments(was, run_preflight(nvml=NoDriver()).environment)
    assert any(c.startswith("gpu0.name: NVIDIA H100") and "unknown" in c for c in gone)
    # A plan made without a GPU compares nothing about GPUs, and says so.
    nothing, notes = compare_environments(run_preflight(nvml=NoDriver()).environment, was)
    assert nothing == [] and any("driver_version: unknown when the plan was made" in n for n in notes)


def test_changed_or_missing_artifact_blocks_with_its_name(tmp_path):
    exe, model = tmp_path / "bench", tmp_path / "model.bin"
    exe.write_bytes(b"v1")
    model.write_bytes(b"w")
    plan = build_plan(
        {
            "name": "p",
            "lens": "training",
            "baseline": ["./bench"],
            "candidate": ["./bench"],
            "artifacts": [str(exe), str(model)],
        }
    )
    assert run_preflight(plan, nvml=NoDriver()).blockers == []
    exe.write_bytes(b"v2")
    model.unlink()
    blockers = run_preflight(plan, nvml=NoDriver()).blockers
    assert any(b.startswith(f"artifact {model} is missing") for b in blockers)
    assert any(b.startswith(f"artifact {exe} changed") for b in blockers)


def test_text_fits_80_columns():
    for nvml in (FakeNvml(), NoDriver()):
        lines = render_preflight(run_preflight(nvml=nvml)).splitlines()
        assert lines and max(len(line) for line in lines) <= 80


def test_wb_doctor_without_gpu(tmp_path):
    code, out, err = wb("doctor", "--json", store=str(tmp_path / "s.sqlite"))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["gpu"]["status"] in (RAN, UNAVAILABLE) and "software" in doc and "cuda_toolkit" in doc
    code, out, _ = wb("doctor", store=str(tmp_path / "s.sqlite"))
    assert code == 0 and out.startswith("Preflight on") and max(map(len, out.splitlines())) <= 80


def test_the_preflight_document_is_a_typed_report_that_round_trips():
    """What `wb doctor --json` prints (and each execution stores) decodes into PreflightReport and back, key for key."""
    import json

    from workbench.rerun.preflight import PreflightReport

    for nvml in (FakeNvml(), NoDriver()):
        doc = run_preflight(nvml=nvml).to_json()
        report = PreflightReport.from_json(doc)
        assert json.dumps(report.to_json()) == json.dumps(doc)
    assert report.gpu.device_count == UNKNOWN and report.ok
    report = PreflightReport.from_json(run_preflight(nvml=FakeNvml()).to_json())
    assert report.gpu.devices[0]["uuid"].value == "GPU-1111" and report.gpu.devices[0]["ecc_mode"].detail
