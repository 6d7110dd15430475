"""Configuration: fixed at construction, environment defaults, validation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workbench.recorder import Budget, Recorder, RecorderConfig
from workbench.recorder.config import disabled_by_env


def test_environment_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_RECORDER_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("WB_STORE", "sqlite:///x.sqlite")
    monkeypatch.setenv("RANK", "3")
    cfg = RecorderConfig()
    assert cfg.resolved_out_dir() == tmp_path / "from-env"
    assert cfg.resolved_store_url() == "sqlite:///x.sqlite"
    assert cfg.resolved_rank() == 3
    explicit = RecorderConfig(out_dir=Path("mine"), store_url="postgresql://team/wb", rank=0)
    assert explicit.resolved_out_dir() == Path("mine")
    assert explicit.resolved_store_url() == "postgresql://team/wb"
    assert explicit.resolved_rank() == 0
    monkeypatch.delenv("WB_RECORDER_DIR")
    monkeypatch.delenv("WB_STORE")
    monkeypatch.setenv("RANK", "not a number")
    cfg = RecorderConfig()
    assert cfg.resolved_out_dir() == Path("wb-snapshots")
    assert cfg.resolved_store_url() is None and cfg.resolved_rank() is None


@pytest.mark.parametrize(
    "value, off",
    [("off", True), ("0", True), ("False", True), (" disabled ", True), ("", False), ("on", False), ("1", False)],
)
def test_disable_values(value, off):
    assert disabled_by_env({"WB_RECORDER": value}) is off


def test_config_is_frozen_and_validated():
    cfg = RecorderConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lens = "inference"  # type: ignore[misc]
    for bad in (
        {"lens": "fleet"},
        {"window_kind": "weird"},
        {"gpu_interval_s": 0},
        {"incident_window_s": -1},
        {"max_names": 2000},
        {"dimensions": {"x": float("nan")}},
        {"dimensions": {"x": object()}},
    ):
        with pytest.raises(ValueError):
            RecorderConfig(**bad)
    with pytest.raises(TypeError):
        Recorder(no_such_option=1, gpu_interval_s=None)


def test_keyword_fields_override_a_config(tmp_path, monkeypatch):
    monkeypatch.delenv("WB_RECORDER", raising=False)
    base = RecorderConfig(lens="inference", spans=Budget(max_bytes=1 << 20))
    rec = Recorder(base, out_dir=tmp_path, gpu_interval_s=None)
    try:
        assert rec.config.lens == "inference" and rec.config.out_dir == tmp_path
        assert rec.stats()["spans"]["max_bytes"] == 1 << 20
    finally:
        rec.close()
