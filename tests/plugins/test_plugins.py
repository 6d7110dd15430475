"""Importers and lenses as plug-ins: the example package in ``tests/plugins/wb_example_plugin``
is installed the way pip leaves a package (a ``*.dist-info`` with its ``entry_points.txt``,
on ``sys.path``), then a toy file goes through ``wb import``, ``wb runs``, ``wb show`` and
``wb compare``. A broken plug-in is one line and leaves the built-ins working."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import lenses
from tests.rerun.helpers import wb
from workbench import importers

PLUGIN = Path(__file__).resolve().parent / "wb_example_plugin"
REPO = Path(__file__).resolve().parents[2]


def entry_points_txt(groups: dict[str, dict[str, str]]) -> str:
    return "".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in eps.items()) + "\n"
        for group, eps in groups.items()
    )


def install(site: Path, name: str, groups: dict[str, dict[str, str]]) -> None:
    """What ``pip install`` leaves for importlib.metadata: a dist-info with entry points."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points_txt(groups))


def example_groups() -> dict[str, dict[str, str]]:
    """The entry points the example package's pyproject.toml declares."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    return project["entry-points"]


BROKEN = {
    "wb.importers": {
        "missing": "wb_example_plugin.no_such_module:IMPORTER",
        "not-an-importer": "wb_example_plugin.lens:LENS",
        "taken": "tests.plugins.test_plugins:TAKEN",
    },
    "wb.lenses": {"crashes": "tests.plugins.test_plugins:crash", "fleet-again": "tests.plugins.test_plugins:FLEET"},
}


def crash():
    raise RuntimeError("the lens factory fell over")


def __getattr__(name: str):  # the broken plug-ins' objects, made only when loaded
    if name == "TAKEN":
        from workbench.importers.sacct import SacctImporter

        return SacctImporter()  # named "sacct": a built-in's name
    if name == "FLEET":
        from lenses.fleet import LENS

        return LENS
    raise AttributeError(name)


def fresh_registries() -> None:
    importers.all_importers.cache_clear()
    lenses.plugin_lenses.cache_clear()


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site directory on sys.path with the example plug-in's package importable."""
    site = tmp_path / "site"
    site.mkdir()
    # A logging.config call elsewhere in the session (import-linter's) disables existing loggers.
    monkeypatch.setattr(logging.getLogger("wb.plugins"), "disabled", False)
    monkeypatch.syspath_prepend(str(PLUGIN))
    monkeypatch.syspath_prepend(str(site))
    fresh_registries()
    yield site
    monkeypatch.undo()
    fresh_registries()


def toy_file(path: Path, machine: str, latencies: list[float], label: str) -> Path:
    lines = [
        "# toy-latency v1",
        f"label: {label}",
        f"machine: {machine}",
        "build: 7",
        *(f"latency_ms: {v}" for v in latencies),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_example_package_declares_both_groups():
    groups = example_groups()
    assert groups["wb.importers"] == {"toy-latency": "wb_example_plugin.importer:IMPORTER"}
    assert groups["wb.lenses"] == {"toy": "wb_example_plugin.lens:LENS"}


def test_without_the_plug_in_a_toy_file_is_an_unknown_format(tmp_path):
    fresh_registries()
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    code, _, err = wb("import", str(toy_file(tmp_path / "a.toy", "box", [1.0], "a")), store=store)
    assert code == 2 and "unknown format" in err
    assert "toy" not in lenses.lens_names()


def test_a_toy_file_through_the_plug_in_end_to_end(site, tmp_path):
    install(site, "wb-example-plugin", example_groups())
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    a = toy_file(tmp_path / "a.toy", "box-1", [10.0, 12.0, 11.0], "before")
    b = toy_file(tmp_path / "b.toy", "box-1", [7.0, 8.0, 9.0], "after")

    code, out, err = wb("import", str(a), str(b), "--toy-scale", "2", "--json", store=store)
    assert code == 0, err
    report = json.loads(out)
    assert len(report["imported"]) == 2

    code, out, err = wb("runs", "--json", store=store)
    runs = json.loads(out)
    assert code == 0 and [(r["lens"], r["label"]) for r in runs] == [("toy", "before"), ("toy", "after")]

    # The plug-in's lens can be named wherever a lens is chosen.
    code, out, err = wb("runs", "--lens", "toy", "--json", store=store)
    assert code == 0, err
    assert [r["label"] for r in json.loads(out)] == ["before", "after"]

    code, out, err = wb("show", "before", "--json", store=store)
    shown = json.loads(out)
    assert code == 0 and shown["lens"] == "toy"
    assert shown["dimensions"]["machine"]["value"] == "box-1"

    # The plug-in's lens compares its runs: mean latency ×2 (--toy-scale reached the importer).
    code, out, err = wb("compare", "before", "--vs", "after", "--change", "build=7:7", "--json", store=store)
    doc = json.loads(out)
    assert code == 0, err
    assert doc["lens"] == "toy" and doc["comparable"] is True
    assert (doc["primary"]["metric"], doc["primary"]["baseline"], doc["primary"]["candidate"]) == (
        "mean_latency",
        22.0,
        16.0,
    )
    assert doc["phases"] == []

    # Inspect reads the lens's per-item series: its latencies (scaled), in request order.
    code, out, err = wb(
        "compare", "before", "--vs", "after", "--lens", "toy", "--change", "build=7:7", "--json", store=store
    )
    assert code == 0, err
    assert json.loads(out)["lens"] == "toy"

    code, out, err = wb("inspect", "before", "--vs", "after", "--change", "build=7:7", "--json", store=store)
    assert code == 0, err
    inspected = json.loads(out)
    assert inspected["over_time"]["by"] == "request order"
    (latency,) = inspected["distributions"]
    assert (latency["name"], latency["unit"], latency["baseline"]["n"], latency["baseline"]["mean"]) == (
        "latency",
        "ms",
        3,
        22.0,
    )


def test_the_plug_in_option_is_in_wb_import_help(site):
    install(site, "wb-example-plugin", example_groups())
    code, out, _ = wb("import", "--help", store="sqlite://")
    assert code == 0
    assert "--toy-scale FACTOR" in out and "[toy-latency]" in out
    assert "--tz ZONE" in out  # the built-ins' options stay


def test_broken_plug_ins_are_one_line_each_and_built_ins_still_work(site, tmp_path, caplog):
    install(site, "wb-example-plugin", example_groups())
    install(site, "wb-broken-plugin", BROKEN)
    with caplog.at_level(logging.WARNING, logger="wb.plugins"):
        names = [imp.name for imp in importers.all_importers()]
        lens_names = lenses.lens_names()
    lines = [r.getMessage() for r in caplog.records if r.name == "wb.plugins"]
    assert len(lines) == 5, lines
    assert all("\n" not in line and line.startswith("wb: plug-in ") for line in lines)
    said = "\n".join(lines)
    assert (
        "plug-in importer 'missing' (wb_example_plugin.no_such_module:IMPORTER, package wb-broken-plugin) not loaded: "
        "ModuleNotFoundError" in said
    )
    assert "'not-an-importer'" in said and "ToyLens is not a workbench.importers.base.Importer" in said
    assert "the format name 'sacct' is taken" in said
    assert "plug-in lens 'crashes'" in said and "RuntimeError: the lens factory fell over" in said
    assert "the lens name 'fleet' is taken" in said
    # The sound plug-ins and every built-in are there.
    assert "toy-latency" in names and {"sacct", "kineto", "native", "prometheus"} <= set(names)
    assert lens_names == ("inference", "training", "fleet", "toy")
    assert names[-1] == "toy-latency"  # plug-ins detect after the built-ins
    assert lenses.builtin_lens("fleet").runs_are_windows  # the built-in, not the impostor


def test_a_failing_plug_in_read_is_one_line_and_nothing_is_written(site, tmp_path, monkeypatch):
    install(site, "wb-example-plugin", example_groups())
    from wb_example_plugin.importer import ToyImporter

    def explode(self, paths, options):
        raise ZeroDivisionError("toy arithmetic")
        yield

    monkeypatch.setattr(ToyImporter, "read", explode)
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    code, out, err = wb("import", str(toy_file(tmp_path / "a.toy", "box", [1.0], "a")), store=store)
    assert code == 2
    assert "plug-in importer 'toy-latency'" in err and "failed: ZeroDivisionError: toy arithmetic" in err
    assert "Traceback" not in err
    assert json.loads(wb("runs", "--json", store=store)[1]) == []


def test_in_a_fresh_process_a_broken_plug_in_is_one_line_on_stderr(tmp_path):
    site = tmp_path / "site"
    install(site, "wb-example-plugin", example_groups())
    install(site, "wb-broken-plugin", {"wb.importers": {"missing": "wb_example_plugin.no_such_module:IMPORTER"}})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN), str(REPO)])}
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    toy = toy_file(tmp_path / "a.toy", "box", [3.0, 4.0], "a")
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "--store", store, "import", str(toy)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "imported" in out.stdout
    assert out.stderr.strip().splitlines() == [
        "wb: plug-in importer 'missing' (wb_example_plugin.no_such_module:IMPORTER, package wb-broken-plugin) not "
        "loaded: "
        "ModuleNotFoundError: No module named 'wb_example_plugin.no_such_module'"
    ]


def test_a_lens_that_is_neither_built_in_nor_a_plug_in_is_refused_by_name(tmp_path):
    code, out, err = wb("runs", "--lens", "toy", store=f"sqlite:///{tmp_path / 's.sqlite'}")
    assert code == 2
    assert "'toy' is not a lens (one of inference, training, fleet)" in err
