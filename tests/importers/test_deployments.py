"""Engine configuration from every deployment shape, flags read as flags, and what cannot
be read named as ``unparsed`` (tests/data/inference/deploy holds one file per shape)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workbench.formats import engine_config
from workbench.formats.engine_flags import engine_command, parse_flags, shell_commands
from workbench.importers import expand_paths
from workbench.importers.base import ImportOptions
from workbench.importers.inference_perf import IMPORTER as INFERENCE_PERF

DEPLOY = Path(__file__).resolve().parents[1] / "data" / "inference" / "deploy"
REAL = Path(__file__).resolve().parents[1] / "data" / "inference" / "real" / "inference-perf-kubecon-na-2025"

# What every vLLM example states, normalised: one key per setting, env under "env".
EXPECTED = {
    "chunked_prefill": False,
    "env": {"VLLM_ATTENTION_BACKEND": "FLASHINFER", "VLLM_USE_V1": "1"},
    "gpu_memory_utilization": 0.9,
    "max_model_len": 4096,
    "max_num_seqs": 128,
    "prefix_caching": True,
    "speculative_config": {"method": "ngram", "num_speculative_tokens": 4},
    "tp": 2,
}
SHAPES = {
    "k8s_env_flow.yaml": ("Deployment", "spec.template.spec.containers[0].args", "image entrypoint"),
    "k8s_block_scalar.yaml": (
        "Deployment",
        "spec.template.spec.containers[0].command",
        "shell command line (vllm serve)",
    ),
    "k8s_anchor_merge.yaml": (
        "Deployment",
        "spec.template.spec.containers[0].command + args",
        "argv (python -m vllm.entrypoints.openai.api_server)",
    ),
    "lws.yaml": (
        "LeaderWorkerSet (leader)",
        "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].command",
        "shell command line",
    ),
    "kserve.yaml": ("InferenceService", "spec.predictor.model.args", "image entrypoint"),
    "helm_values.yaml": (
        "Helm values (vLLM production stack)",
        "servingEngineSpec.modelSpec[0].vllmConfig",
        "settings mapping",
    ),
    "compose.yaml": ("docker compose", "services.vllm.command", "image entrypoint"),
}


def _engine_config(path: Path) -> tuple[dict, dict]:
    found = engine_config.read_k8s_manifest(path)
    dims = engine_config.dimensions(found.config, "declared", gpus=found.gpus or None)
    return found, dims["engine_config"].value


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_shape_gives_the_same_normalised_engine_config(name: str) -> None:
    found, config = _engine_config(DEPLOY / name)
    assert config == EXPECTED
    shape, path, read = SHAPES[name]
    assert found.engine == "vllm" and found.shape == shape
    assert found.model == "Qwen/Qwen2.5-7B-Instruct" and found.gpus == 2
    # Each source is recorded: the file and the path inside it.
    assert any(s.path == path and s.read.startswith(read) and s.file == str(DEPLOY / name) for s in found.sources)
    # said once: "image entrypoint", never "image entrypoint (image entrypoint)"
    assert all(s.read.count(s.read.split(" (")[0]) == 1 for s in found.sources)
    assert any(s.path.endswith((".env", ".environment")) for s in found.sources)


def test_the_three_manifests_the_old_reader_refused() -> None:
    configs = [
        _engine_config(DEPLOY / n)[1] for n in ("k8s_env_flow.yaml", "k8s_block_scalar.yaml", "k8s_anchor_merge.yaml")
    ]
    assert configs[0] == configs[1] == configs[2] == EXPECTED


def test_revision_accelerator_and_the_other_engines_in_a_file() -> None:
    found, _ = _engine_config(DEPLOY / "k8s_block_scalar.yaml")
    assert found.engine_revision == "v0.11.0" and found.accelerator == "nvidia-l4"
    lws, _ = _engine_config(DEPLOY / "lws.yaml")
    assert lws.also == ["spec.leaderWorkerTemplate.workerTemplate.spec.containers[0] (vllm)"]
    helm, _ = _engine_config(DEPLOY / "helm_values.yaml")
    assert helm.engine_revision == "v0.11.0"
    compose = engine_config.read_deployment(DEPLOY / "compose.yaml")
    assert [c.where for c in compose] == ["services.vllm"]  # the load generator runs no engine


def test_sglang_flags_land_on_the_same_keys() -> None:
    found, config = _engine_config(DEPLOY / "sglang_pod.yaml")
    assert found.engine == "sglang" and found.engine_revision == "v0.5.3-cu126"
    assert config == {
        "chunked_prefill": True,
        "env": {"SGLANG_ENABLE_TORCH_COMPILE": "0"},
        "gpu_memory_utilization": 0.9,
        "max_model_len": 4096,
        "max_num_batched_tokens": 8192,
        "max_num_seqs": 128,
        "prefix_caching": False,
        "tp": 2,
    }


def test_what_cannot_be_read_is_named_never_dropped() -> None:
    _, config = _engine_config(DEPLOY / "unparsed.yaml")
    assert config == {
        "prefix_caching": True,
        "unparsed": [
            "--max-num-seqs 256",
            "--some-future-flag 7",
            "'--max-model-len=4096'",
            "--max-num-batched-tokens=$(BATCH_TOKENS)",
        ],
    }


@pytest.mark.parametrize(
    ("argv", "settings", "unparsed"),
    [
        (["--max-num-seqs", "8", "--max_num_seqs=16"], {"max_num_seqs": 16}, []),  # repeated: the last, as argparse
        (
            ["--enable-chunked-prefill", "--no-enable-prefix-caching", "--enforce-eager"],
            {"chunked_prefill": True, "prefix_caching": False, "cuda_graphs": False},
            [],
        ),
        (
            ["--enable-chunked-prefill", "false", "--async-scheduling=true"],
            {"chunked_prefill": False, "async_scheduling": True},
            [],
        ),
        (
            ["--compilation-config", '{"level": 3, "cudagraph_mode": "FULL"}'],
            {"compilation_config": {"level": 3, "cudagraph_mode": "FULL"}},
            [],
        ),
        (["-O3"], {"compilation_config": {"level": 3}}, []),
        (
            ["-O.cudagraph_mode=FULL", "--compilation-config.level", "3"],
            {"compilation_config": {"cudagraph_mode": "FULL", "level": 3}},
            [],
        ),
        (["--speculative-config", "{not json}"], {}, ["--speculative-config {not json}"]),
        (
            ["--cuda-graph-sizes", "1", "2", "4", "--max-model-len", "32K"],
            {"cuda_graph_sizes": [1, 2, 4], "max_model_len": 32768},
            [],
        ),
        (["--middleware", "a.B", "--middleware", "c.D"], {"middleware": ["a.B", "c.D"]}, []),
        (["--max-num-seqs", "lots"], {}, ["--max-num-seqs lots"]),
        (["--max-num-seqs"], {}, ["--max-num-seqs"]),
        (["--api-key", "s3cret", "--hf-token=hf_x"], {}, []),  # secrets are never recorded
        (["--openai-api-key", "sk-1", "--x-token=zz", "--max-num-batched-tokens=9"], {"max_num_batched_tokens": 9}, []),
        (["--max-num-seqs 8 --api-key sk-3"], {}, ["--max-num-seqs 8 --api-key <hidden>"]),  # nor shown when unread
        (["--new-flag=on", "--new-switch", "--other"], {"new_flag": "on", "new_switch": True, "other": True}, []),
        (["--tp", "$TP"], {}, ["--tp $TP"]),
        (["--chunked-prefill-size", "-1"], {}, ["--chunked-prefill-size -1"]),  # not a vLLM flag
    ],
)
def test_flags_not_strings(argv: list[str], settings: dict, unparsed: list[str]) -> None:
    parsed = parse_flags(argv, "vllm")
    assert parsed.settings == settings and parsed.unparsed == unparsed


def test_sglang_negative_values_and_disabled_chunking() -> None:
    parsed = parse_flags(["--chunked-prefill-size", "-1", "--disable-cuda-graph"], "sglang")
    assert parsed.settings == {"max_num_batched_tokens": -1, "chunked_prefill": False, "cuda_graphs": False}


def test_shell_lines_split_like_a_shell() -> None:
    commands, problems = shell_commands(
        "set -e\nexport VLLM_USE_V1=1 # engine\n"
        "MAX=64 exec python3 -u -m vllm.entrypoints.openai.api_server \\\n  --max-num-seqs $MAX \\\n"
        "  --model m >> /log 2>&1 && echo done; sleep 1 | cat\n"
    )
    assert problems == []
    assert commands[0] == ["set", "-e"] and commands[1] == ["export", "VLLM_USE_V1=1"]
    assert commands[2] == [
        "MAX=64",
        "exec",
        "python3",
        "-u",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--max-num-seqs",
        "$MAX",
        "--model",
        "m",
    ]
    found, problems, how = engine_command(
        ["bash", "-lc", "export VLLM_USE_V1=1\nMAX=64 exec vllm serve m --max-num-seqs ${MAX}"], None
    )
    assert how == "shell command line" and found.engine == "vllm" and found.env == {"VLLM_USE_V1": "1", "MAX": "64"}
    parsed = parse_flags(found.args, found.engine, found.env, positional_model=found.positional_model)
    assert parsed.settings == {"model": "m", "max_num_seqs": 64}


def test_an_unbalanced_quote_or_no_engine_command_is_unparsed(tmp_path: Path) -> None:
    bad = tmp_path / "deploy.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.10.1\n"
        '    command: [sh, -c, "vllm serve m --max-num-seqs 8 --served-model-name \'x"]\n'
        "  - image: vllm/vllm-openai:v0.10.1\n    command: [sh, -c, ./start.sh]\n"
    )
    first, second = engine_config.read_deployment(bad)
    assert first.config["unparsed"] == ["vllm serve m --max-num-seqs 8 --served-model-name 'x (No closing quotation)"]
    assert second.config["unparsed"] == ["sh -c ./start.sh (no vllm command found in it)"]


def test_env_from_a_secret_is_not_engine_env_but_an_unset_engine_variable_is_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.10.1\n    args: "
        "[--max-num-seqs=8]\n"
        "    env:\n    - {name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: t}}}\n"
        "    - {name: VLLM_ATTENTION_BACKEND, valueFrom: {configMapKeyRef: {name: c, key: b}}}\n"
        "    - {name: VLLM_API_KEY, value: hunter2}\n"
    )
    (found,) = engine_config.read_deployment(path)
    assert found.config == {"max_num_seqs": 8, "unparsed": ["env VLLM_ATTENTION_BACKEND (value not in the file)"]}


def test_a_configmap_in_the_same_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: engine}\ndata: {VLLM_USE_V1: '0'}\n---\n"
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.9.0\n"
        "    envFrom: [{configMapRef: {name: engine}}, {configMapRef: {name: elsewhere}}]\n"
    )
    (found,) = engine_config.read_deployment(path)
    assert found.config["env"] == {"VLLM_USE_V1": "0"} and found.config["engine_generation"] == "V0"
    assert found.config["unparsed"] == ["envFrom configMapRef elsewhere (not in the file)"]


def test_real_manifests_with_their_sources(tmp_path: Path) -> None:
    # One run per load level: the first level of each variant's sweep.
    runs = {
        r.meta["sweep"]["label"]: r
        for r in INFERENCE_PERF.read(expand_paths([REAL]), ImportOptions())
        if r.meta["sweep"]["level"] == 0
    }
    assert runs["vllm+batch_size"].dimensions["engine_config"].value["max_num_seqs"] == 192
    assert runs["vllm+v0_engine"].dimensions["engine_config"].value["env"] == {"VLLM_USE_V1": "0"}
    sources = runs["vllm"].meta["engine_config_sources"]
    assert sources[0]["file"].endswith("vllm/manifests.yaml")
    assert sources[0]["path"] == "doc 1: spec.template.spec.containers[0].command + args"


def test_a_deployment_shape_beside_results_is_found(tmp_path: Path) -> None:
    variant = tmp_path / "vllm"
    shutil.copytree(REAL / "vllm" / "results", variant / "results")
    shutil.copy(DEPLOY / "compose.yaml", variant / "compose.yaml")
    run, *_levels = INFERENCE_PERF.read(expand_paths([variant / "results", variant / "compose.yaml"]), ImportOptions())
    assert run.dimensions["engine_config"].value == EXPECTED
    assert run.meta["engine_config_sources"][0]["path"] == "services.vllm.command"


KEYS = [
    "kind",
    "spec",
    "template",
    "containers",
    "args",
    "command",
    "env",
    "name",
    "value",
    "valueFrom",
    "services",
    "servingEngineSpec",
    "modelSpec",
    "vllmConfig",
    "extraArgs",
    "predictor",
    "model",
    "leaderWorkerTemplate",
    "leaderTemplate",
    "workerTemplate",
    "image",
    "resources",
    "limits",
    "nvidia.com/gpu",
    "nodeSelector",
    "envFrom",
    "configMapRef",
    "environment",
    "deploy",
    "items",
    "jobTemplate",
    "entrypoint",
    "requestGPU",
    "tag",
    "repository",
    "modelFormat",
    "data",
    "metadata",
]
WORDS = [
    "Deployment",
    "Pod",
    "List",
    "CronJob",
    "LeaderWorkerSet",
    "InferenceService",
    "ConfigMap",
    "vllm/vllm-openai:v1",
    "lmsysorg/sglang",
    "vllm",
    "serve",
    "sh",
    "-c",
    "--max-num-seqs",
    "--enable-prefix-caching",
    "--no-x",
    "8",
    "-O3",
    "--speculative-config",
    "{",
    "'",
    '"',
    "$(A)",
    "${B}",
    "VLLM_USE_V1",
    "python3",
    "-m",
    "sglang.launch_server",
    "vllm serve m --tp 2 \\\n --x=1",
    "exec",
    "&&",
    "2>&1",
    "#",
    "|",
    "huggingface",
    "--compilation-config.level",
]


def test_any_shape_of_data_reads_without_crashing() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=False), st.sampled_from(WORDS)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
        max_leaves=30,
    )

    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    @hypothesis.given(st.lists(values, max_size=3))
    def check(docs):
        import json

        from workbench.formats import deployments

        for site in deployments.sites(docs):
            found = engine_config.read_site(site, "f.yaml")
            if found is not None:
                json.dumps(
                    engine_config.dimensions(found.config, "declared")["engine_config"].value if found.config else {},
                    default=None,
                )

    check()


def test_any_command_line_reads_without_crashing() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    @hypothesis.given(
        st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=12)), max_size=12),
        st.sampled_from(["vllm", "sglang"]),
    )
    def check(argv, engine):
        cmd, problems, _ = engine_command(argv, engine, {"A": "1"})
        parse_flags(argv, engine, {"A": "1"})
        shell_commands(" ".join(argv))
        if cmd:
            parse_flags(cmd.args, cmd.engine, cmd.env, positional_model=cmd.positional_model)

    check()


def test_comments_quotes_across_lines_and_long_scripts() -> None:
    commands, problems = shell_commands(
        "# don't start yet\nvllm serve m --chat-template 'a#b' --x=1#2 # it's on\n"
        'vllm serve m --speculative-config \'{"method":\n  "ngram"}\'\n'
    )
    assert problems == []
    assert commands[0] == ["vllm", "serve", "m", "--chat-template", "a#b", "--x=1#2"]
    assert commands[1][-1] == '{"method":\n  "ngram"}'
    _, problems = shell_commands("echo 'x\n" + "y\n" * 200_000)
    assert problems and "not read" in problems[0]
    _, problems = shell_commands("vllm serve m --a 'open\n" + "y\n" * 20_000)  # one pass, then one clear problem
    assert problems and "No closing quotation" in problems[0]


def test_an_unread_manifest_argument_makes_the_comparison_unknown(tmp_path: Path) -> None:
    from workbench.compare import compare

    variant = tmp_path / "vllm+unread"
    shutil.copytree(REAL / "vllm+batch_size" / "results", variant / "results")
    text = (
        (REAL / "vllm+batch_size" / "manifests.yaml")
        .read_text()
        .replace('- "--max-num-seqs=192"', '- "--max-num-seqs 192"')
    )
    (variant / "manifests.yaml").write_text(text)
    unread, *_levels = INFERENCE_PERF.read(expand_paths([variant / "results"]), ImportOptions())
    base, *_levels = INFERENCE_PERF.read(expand_paths([REAL / "vllm" / "results"]), ImportOptions())
    assert unread.dimensions["engine_config"].value["unparsed"] == ["--max-num-seqs 192"]
    (row,) = [d for d in compare([base], [unread]).to_json()["dimensions"] if d["name"] == "engine_config"]
    assert row["state"] == "unknown" and "'--max-num-seqs 192'" in row["note"]
    assert row["key_changes"] == [{"key": "max_num_seqs", "change": "removed", "baseline": 128}]


def test_a_secret_in_an_unreadable_shell_line_is_hidden(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai:v0.10.1\n"
        '    command: [sh, -c, "vllm serve m --api-key sk-live-123 --served-model-name \'x"]\n'
    )
    (found,) = engine_config.read_deployment(path)
    assert "sk-live-123" not in str(found) and "--api-key <hidden>" in found.config["unparsed"][0]


def test_a_file_with_several_engines_says_which_was_read(tmp_path: Path) -> None:
    variant = tmp_path / "lws"
    shutil.copytree(REAL / "vllm" / "results", variant / "results")
    shutil.copy(DEPLOY / "lws.yaml", variant / "manifests.yaml")
    run, *_levels = INFERENCE_PERF.read(expand_paths([variant / "results"]), ImportOptions())
    assert run.dimensions["engine_config"].value == EXPECTED
    assert any("workerTemplate" in w and "leaderTemplate" in w for w in run.meta["warnings"])


def test_cli_compare_names_the_changed_key_and_a_bad_manifest_exits_2(tmp_path: Path, capsys) -> None:
    import json

    from workbench.cli import main

    def wb(*args):
        try:
            main(["--store", f"sqlite:///{tmp_path / 'wb.sqlite'}", *args])
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    for variant in ("vllm", "vllm+batch_size"):
        assert wb("import", str(REAL / variant / "results"), "--json")[0] == 0
    code, out, _ = wb("compare", "vllm", "--vs", "vllm+batch_size", "--json")
    (row,) = [d for d in json.loads(out)["dimensions"] if d["name"] == "engine_config"]
    assert code == 0 and row["key_changes"] == [
        {"key": "max_num_seqs", "change": "changed", "baseline": 128, "candidate": 192}
    ]
    code, out, _ = wb("compare", "vllm", "--vs", "vllm+batch_size")
    assert "~ max_num_seqs: 128 → 192" in out
    bad = tmp_path / "bad"
    shutil.copytree(REAL / "vllm" / "results", bad / "results")
    for report in (bad / "results").iterdir():  # other bytes: not "already imported"
        report.write_text(report.read_text() + "\n")
    (bad / "manifests.yaml").write_text("apiVersion: v1\nkind: Pod\nspec: !!python/object/apply:os.system [vllm]\n")
    code, out, err = wb("import", str(bad / "results"))
    assert code == 2 and "manifests.yaml: deployment file is not readable YAML (line 3: tag" in err
    assert len(err.strip().splitlines()) == 1
    code, out, _ = wb("runs", "--json")
    assert len(json.loads(out)) == 14  # two sweeps of 7 levels: nothing half-written
