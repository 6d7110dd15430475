"""PyYAML's safe loader within bounds: ordinary YAML read, hostile YAML refused in one line."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest

from workbench.errors import BadInput
from workbench.formats import engine_config, safe_yaml
from workbench.importers import expand_paths
from workbench.importers.base import ImportOptions
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF

DATA = Path(__file__).resolve().parents[1] / "data" / "inference"
LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 10) if prev else ', '.join(['lol'] * 10)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh")
)


def test_ordinary_yaml_the_old_reader_refused() -> None:
    docs = safe_yaml.load_all(
        'env: [{name: VLLM_USE_V1, value: "1"}]\n'
        "command:\n- |\n  vllm serve m \\\n    --enable-prefix-caching\n"
        "base: &d {a: 1, b: 2}\nmerged: {<<: *d, b: 3}\n"
        "when: 2025-11-30\n---\nsecond: ~\n"
    )
    assert docs[0]["env"] == [{"name": "VLLM_USE_V1", "value": "1"}]
    assert docs[0]["command"] == ["vllm serve m \\\n  --enable-prefix-caching\n"]
    assert docs[0]["merged"] == {"a": 1, "b": 3}
    assert docs[0]["when"] == "2025-11-30"  # stays text: values travel as JSON
    assert docs[1] == {"second": None}


def test_the_c_loader_is_used_where_present() -> None:
    yaml = pytest.importorskip("yaml")
    assert issubclass(safe_yaml._Loader, getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (LAUGHS, r"^line \d+: more than 1,000,000 values once aliases are expanded"),
        ("a: " + "x" * (10 << 20) + "\n", r"^line 1: larger than 4 MiB"),
        (
            'a: 1\nb: !!python/object/apply:os.system ["true"]\n',
            r"^line 2: tag .*python/object/apply:os\.system.* is not plain data",
        ),
        ("a: !!python/object:collections.OrderedDict {}\n", r"^line 1: tag .*python/object:collections\.OrderedDict"),
        ("[" * 500 + "]" * 500, r"^line 1: nested more than 64 levels deep"),
        ("[" * 100_000 + "]" * 100_000, r"^line 1: (nested more than 64 levels deep|exceeded maximum nesting depth)"),
        ("a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 200)), r"^line \d+: nested more than 64 levels deep"),
        ("a: [1, 2\nb: 3\n", r"^line 2: did not find expected ',' or ']'"),
        ("a: *nowhere\n", r"^line 1: alias \*nowhere names no anchor before it"),
        ("a: 1\nb: x\x00y\n", r"^line 2: character #x0000 is not allowed in YAML$"),
    ],
    ids=[
        "billion-laughs",
        "10MB-scalar",
        "python-apply-tag",
        "python-object-tag",
        "deep-flow",
        "very-deep-flow",
        "deep-block",
        "syntax",
        "alias",
        "nul",
    ],
)
def test_hostile_yaml_is_one_line_with_the_line_number(text: str, message: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=message) as err:
            safe_yaml.load_all(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "\n" not in str(err.value)
    assert peak < 64 << 20  # bounded: nothing expanded, nothing composed past the bound


def test_a_hostile_manifest_beside_results_is_bad_input_naming_the_file(tmp_path: Path) -> None:
    variant = tmp_path / "vllm"
    shutil.copytree(DATA / "real" / "inference-perf-kubecon-na-2025" / "vllm", variant)
    (variant / "manifests.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\n" + LAUGHS)
    with pytest.raises(BadInput) as err:
        list(INFERENCE_PERF.read(expand_paths([variant / "results"]), ImportOptions()))
    assert str(err.value).startswith(str(variant / "manifests.yaml") + ": deployment file is not readable YAML (line ")
    assert "\n" not in str(err.value)


def test_a_file_larger_than_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "values.yaml"
    big.write_text("a: " + "x" * (5 << 20) + "\n")
    with pytest.raises(
        BadInput, match=r"values\.yaml: deployment file is not readable YAML \(line 1: larger than 4 MiB"
    ):
        engine_config.read_deployment(big)


def test_the_pure_python_loader_keeps_the_same_bounds(monkeypatch) -> None:
    import importlib

    yaml = pytest.importorskip("yaml")
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    fallback = importlib.reload(safe_yaml)
    try:
        assert fallback._BASE is yaml.SafeLoader
        assert fallback.load_all("a: &d {x: 1}\nb: {<<: *d, y: 2}\n") == [{"a": {"x": 1}, "b": {"x": 1, "y": 2}}]
        for text, message in (
            (LAUGHS, "aliases are expanded"),
            ("[" * 100_000 + "]" * 100_000, "nested more than 64"),
            ("a: !!python/object:os.system {}\n", "is not plain data"),
        ):
            with pytest.raises(ValueError, match=message):
                fallback.load_all(text)
    finally:
        monkeypatch.undo()
        importlib.reload(safe_yaml)
