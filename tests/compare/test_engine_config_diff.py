"""Mapping dimensions compared key by key: every differing key with both values, in the
table and in --json; several settings changed at once said so; unread arguments unknown."""

from __future__ import annotations

from workbench.compare import compare
from workbench.compare.dict_diff import KeyChange, key_changes, several_changed
from workbench.compare.render import WIDTH, render_comparison

from .factories import inference_run

BASE = {"max_num_seqs": 128, "prefix_caching": False, "chunked_prefill": True, "env": {"VLLM_USE_V1": "1"}}


def _row(result, name="engine_config"):
    (row,) = [d for d in result.to_json()["dimensions"] if d["name"] == name]
    return row


def test_each_changed_added_and_removed_key_with_both_values() -> None:
    cand = {
        "max_num_seqs": 128,
        "prefix_caching": True,
        "env": {"VLLM_USE_V1": "0", "VLLM_ATTENTION_BACKEND": "FLASHINFER"},
        "kv_cache_dtype": "fp8",
    }
    result = compare([inference_run("a", engine_config=BASE)], [inference_run("b", engine_config=cand, seed=1)])
    row = _row(result)
    assert row["state"] == "different"
    assert row["key_changes"] == [
        {"key": "chunked_prefill", "change": "removed", "baseline": True},
        {"key": "env.VLLM_ATTENTION_BACKEND", "change": "added", "candidate": "FLASHINFER"},
        {"key": "env.VLLM_USE_V1", "change": "changed", "baseline": "1", "candidate": "0"},
        {"key": "kv_cache_dtype", "change": "added", "candidate": "fp8"},
        {"key": "prefix_caching", "change": "changed", "baseline": False, "candidate": True},
    ]
    assert row["several_changed"].startswith(
        "5 engine settings changed at once: chunked_prefill, env.VLLM_ATTENTION_BACKEND"
    )
    text = render_comparison(result)
    for line in (
        "- chunked_prefill: true (baseline only)",
        '~ env.VLLM_USE_V1: "1" → "0"',
        '+ kv_cache_dtype: "fp8" (candidate only)',
        "~ prefix_caching: false → true",
    ):
        assert line in text
    assert "{'" not in text and "4 settings" in text


def test_two_settings_changed_at_once_is_said_and_observed() -> None:
    cand = {**BASE, "prefix_caching": True, "chunked_prefill": False}
    result = compare([inference_run("a", engine_config=BASE)], [inference_run("b", engine_config=cand, seed=1)])
    sentence = (
        "2 engine settings changed at once: chunked_prefill, prefix_caching — the effect cannot be given to either"
    )
    assert _row(result)["several_changed"] == sentence
    assert sentence in " ".join(render_comparison(result).split())
    assert any(o["text"].startswith("2 engine settings changed at once") for o in result.to_json()["observations"])


def test_one_changed_setting_is_not_called_several() -> None:
    result = compare(
        [inference_run("a", engine_config=BASE)],
        [inference_run("b", engine_config={**BASE, "max_num_seqs": 192}, seed=1)],
    )
    row = _row(result)
    assert row["key_changes"] == [{"key": "max_num_seqs", "change": "changed", "baseline": 128, "candidate": 192}]
    assert "several_changed" not in row
    assert not any("at once" in o["text"] for o in result.to_json()["observations"])


def test_a_long_value_is_wrapped_never_cut_and_the_key_stays_visible() -> None:
    spec = {
        "method": "eagle3",
        "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B-very-long-draft-model-name",
        "num_speculative_tokens": 5,
        "draft_tensor_parallel_size": 1,
    }
    result = compare(
        [inference_run("a", engine_config=BASE)],
        [inference_run("b", engine_config={**BASE, "speculative_config": spec}, seed=1)],
    )
    text = render_comparison(result)
    table = text.split("(* must match)")[0]
    assert all(len(line) <= WIDTH for line in table.splitlines())
    assert "+ speculative_config.model:" in text
    assert "several_changed" not in _row(result)  # one flag with four fields is one setting
    joined = "".join(text.split())
    assert '"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B-very-long-draft-model-name"' in joined


def test_equal_configs_are_same_key_by_key() -> None:
    reordered = {"env": {"VLLM_USE_V1": "1"}, "chunked_prefill": True, "prefix_caching": False, "max_num_seqs": 128.0}
    result = compare([inference_run("a", engine_config=BASE)], [inference_run("b", engine_config=reordered, seed=1)])
    row = _row(result)
    assert row["state"] == "same" and "key_changes" not in row


def test_unread_arguments_make_the_config_unknown_never_same() -> None:
    unread = {**BASE, "unparsed": ["--max-num-seqs 256"]}
    result = compare([inference_run("a", engine_config=BASE)], [inference_run("b", engine_config=unread, seed=1)])
    row = _row(result)
    assert row["state"] == "unknown"
    assert "'--max-num-seqs 256'" in row["note"] and "cannot be called the same" in row["note"]
    assert row["unparsed"] == {"candidate": ["--max-num-seqs 256"]}
    assert "not read (candidate): '--max-num-seqs 256'" in render_comparison(result)
    # What was read may still differ, but which settings changed is itself unknown.
    mixed = compare(
        [inference_run("a", engine_config=BASE)],
        [inference_run("b", engine_config={"prefix_caching": True, "unparsed": ["--max-num-seqs 256"]}, seed=1)],
    )
    assert _row(mixed)["state"] == "unknown" and len(_row(mixed)["key_changes"]) == 4
    assert "several_changed" not in _row(mixed)
    # Even when both sides hold the very same unread argument.
    both = compare([inference_run("a", engine_config=unread)], [inference_run("b", engine_config=unread, seed=1)])
    assert _row(both)["state"] == "unknown" and _row(both)["unparsed"] == {
        "baseline": ["--max-num-seqs 256"],
        "candidate": ["--max-num-seqs 256"],
    }


def test_a_declared_change_of_an_unread_config_cannot_be_checked() -> None:
    unread = {**BASE, "max_num_seqs": 192, "unparsed": ["--foo bar"]}
    result = compare(
        [inference_run("a", engine_config=BASE)],
        [inference_run("b", engine_config=unread, seed=1)],
        changes={"engine_config": None},
    )
    row = _row(result)
    assert row["state"] == "unknown" and row["note"].endswith("the declared change cannot be checked")


def test_key_changes_treat_true_and_one_as_different() -> None:
    assert [c.to_json() for c in key_changes({"a": True}, {"a": 1})] == [
        {"key": "a", "change": "changed", "baseline": True, "candidate": 1}
    ]
    assert key_changes({"a": [1, 2]}, {"a": [1, 2]}) == []
    assert several_changed(
        "power", [KeyChange(key=k, change="added", candidate=1) for k in ("x", "y", "z.a", "z.b")]
    ) == ("3 settings changed at once: x, y, z — the effect cannot be given to any one of them")
