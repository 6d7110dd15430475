"""The importer registry: each importer declares its ``wb import`` options, the CLI builds
its flags from them, and each importer sniffs its own format by its own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rerun.helpers import wb
from workbench.cli.commands import import_ as import_command
from workbench.importers import all_importers, get_importer, import_options
from workbench.importers.base import ImporterOption, probe_file

DATA = Path(__file__).resolve().parents[1] / "data"

# The flags wb import has always had, and the formats that read them.
HISTORICAL = {
    "--scrape-pair": ("scrape_pair", {"prometheus"}),
    "--tz": ("tz", {"sacct"}),
    "--from": ("window_from", {"sacct"}),
    "--to": ("window_to", {"sacct"}),
    "--wait-target": ("wait_target_s", {"sacct"}),
    "--sacct-fields": ("sacct_fields", {"sacct"}),
    "--warmup-steps": ("warmup_steps", {"kineto", "nsys"}),
    "--step-pattern": ("step_pattern", {"nsys"}),
    "--jobs": ("jobs", {"kineto", "nsys"}),
    "--map": ("map", {"mapped"}),
}


def test_every_flag_is_declared_once_by_the_formats_that_read_it():
    declared = {opt.flag: (opt.param, set(formats)) for opt, formats in import_options()}
    assert declared == HISTORICAL
    flags = [opt.flag for opt, _ in import_options()]
    params = [opt.param for opt, _ in import_options()]
    assert len(flags) == len(set(flags)) and len(params) == len(set(params))


def test_declarations_are_typed():
    for importer in all_importers():
        for opt in importer.options:
            assert isinstance(opt, ImporterOption) and opt.type in (str, int, float, bool), (importer.name, opt)
            assert opt.flag.startswith("--") and opt.param.isidentifier() and opt.help.endswith(".")


def test_help_lists_each_flag_with_its_formats():
    code, out, _ = wb("import", "--help", store="sqlite://")
    assert code == 0
    flat = " ".join(out.split())
    for flag, (_, _formats) in HISTORICAL.items():
        assert flag in out
    assert "[prometheus]" in flat and "[nsys, kineto]" in flat and "[sacct]" in flat


@pytest.fixture
def captured(monkeypatch):
    """The ImportOptions ``wb import`` hands to the import, without importing anything."""
    seen = {}

    def fake_import(store, paths, options, dims=None):
        seen["options"] = options
        raise SystemExit(0)

    monkeypatch.setattr(import_command, "import_files", fake_import)
    return seen


def test_flags_reach_the_importers_typed(captured, tmp_path):
    store = f"sqlite:///{tmp_path / 's.sqlite'}"
    f = tmp_path / "x.txt"
    f.write_text("x")
    code, _, err = wb(
        "import",
        str(f),
        "--tz",
        "UTC",
        "--from",
        "2026-01-01",
        "--wait-target",
        "30",
        "--jobs",
        "2",
        "--warmup-steps",
        "0",
        "--scrape-pair",
        "--label",
        "L",
        store=store,
    )
    assert code == 0, err
    options = captured["options"]
    assert options.label == "L"
    assert options.params == {
        "tz": "UTC",
        "window_from": "2026-01-01",
        "wait_target_s": 30.0,
        "jobs": 2,
        "warmup_steps": 0,
        "scrape_pair": True,
    }


def test_flags_not_given_are_absent(captured, tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("x")
    code, _, _ = wb("import", str(f), store=f"sqlite:///{tmp_path / 's.sqlite'}")
    assert code == 0 and captured["options"].params == {}


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--warmup-steps=-1"], ["--wait-target", "soon"]])
def test_bad_values_are_usage_errors(args, tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("x")
    code, _, err = wb("import", str(f), *args, store=f"sqlite:///{tmp_path / 's.sqlite'}")
    assert code == 2 and args[0].split("=")[0] in err


def test_jobs_and_cluster_exclude_each_other(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("x")
    code, _, err = wb(
        "import", str(f), "--jobs", "2", "--cluster", "local:1", store=f"sqlite:///{tmp_path / 's.sqlite'}"
    )
    assert code == 2 and "give one of them" in err


def _with(path: Path, key: str, tmp_path: Path) -> Path:
    """The first JSON object of ``path`` with one more top-level key."""
    first = json.loads(path.read_text().splitlines()[0]) if path.suffix == ".jsonl" else json.loads(path.read_text())
    first[key] = {"anything": 1}
    out = tmp_path / f"with_{key}{path.suffix}"
    out.write_text(json.dumps(first))
    return out


def test_sniffers_use_their_own_words_not_the_others(tmp_path):
    # A vLLM result that also carries a "server_info" member is still vLLM's; an SGLang
    # line with a "model_id" member still SGLang's: neither sniff names the other's marker.
    vllm = _with(DATA / "inference" / "vllm_bench_detailed.json", "server_info", tmp_path)
    sglang = _with(DATA / "inference" / "sglang_bench.jsonl", "model_id", tmp_path)
    assert get_importer("vllm-bench").sniff(probe_file(vllm))
    assert get_importer("sglang-bench").sniff(probe_file(sglang))


def test_no_sniffer_names_another_formats_marker():
    """A sniff that refuses a file for another format's marker (``'"x" not in head'``)
    ties two importers together; each decides from its own format's words."""
    import inspect

    for importer in all_importers():
        source = inspect.getsource(type(importer).sniff)
        assert "not in head" not in source.replace('"traceEvents"\' not in head', "").replace(
            'b"StringIds" not in head', ""
        ), importer.name
