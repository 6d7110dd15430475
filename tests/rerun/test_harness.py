"""The harness mechanics with a fast shell benchmark: failures kept, blocking, immutability, confirmation."""

from __future__ import annotations

import json

import msgspec
import pytest

from .helpers import comparison, fake_bench, wb, write_plan


pytestmark = pytest.mark.store


@pytest.fixture
def store(store_url):
    """Every harness test on every store backend (SQLite; PostgreSQL when configured)."""
    return store_url


def _plan(tmp_path, store, *, baseline, candidate, name="p", **top):
    path = write_plan(tmp_path / f"{name}.toml", baseline=baseline, candidate=candidate, name=name, **top)
    code, out, err = wb("rerun", "plan", "--from-file", str(path), "--json", store=store)
    assert code == 0, err
    return json.loads(out)


def _runs(store, plan):
    return comparison(store, plan)["runs"]


def test_every_run_gets_its_own_capture_path_and_rerun_environment(tmp_path, store):
    bench = fake_bench(tmp_path)
    _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "11"], artifacts=[str(bench)])
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "work"), "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["execution"]["status"] == "complete" and not doc["partial"]
    assert [(r["round"], r["status"]) for r in doc["runs"]] == [(k, "ok") for k in (1, 1, 1, 2, 2, 2, 3, 3, 3)]
    assert [r["slot"] for r in doc["runs"]] == list(range(9))
    assert doc["rounds"]["used"] == [1, 2, 3]
    assert doc["analysis"]["ratio"] == pytest.approx(1.1, rel=5e-3)
    assert doc["verdict"] == "REGRESSION" and "FEW_ROUNDS" in doc["flags"]
    # Each run is a run in the store, labelled with its place in the plan.
    from store import open_store

    labels = sorted(r.label for r in open_store(store).list_runs() if r.label.startswith("p e"))
    assert len(labels) == 9 and labels[0] == "p e1 r1 A" and "p e1 r3 A'" in labels
    captures = sorted((tmp_path / "work").glob("e*/r*.capture.json"))
    assert len(captures) == 9 and any("-Aprime-" in c.name for c in captures)
    # The comparison is stored once per distinct result.
    again = comparison(store, "p")
    assert again["comparison_id"] == doc["comparison_id"]


def test_failing_candidate_is_recorded_and_reported(tmp_path, store):
    bench = fake_bench(tmp_path)
    _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=["sh", "-c", "echo boom >&2; exit 3"])
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    failed = [r for r in doc["runs"] if r["status"] == "failed"]
    assert [r["arm"] for r in failed] == ["B"] * 3 and all(r["reason"] == "exit status 3" for r in failed)
    assert doc["failures"]["B"] == {"finished": 3, "failed": 3, "reasons": {"exit status 3": 3}}
    assert doc["verdict"] is None and doc["analysis"] is None
    assert any(n.startswith("B (candidate): 3 of 3 runs failed: 3× exit status 3") for n in doc["notes"])
    assert all(r["stderr_tail"] == "boom\n" for r in failed)
    code, text, _ = wb("rerun", "report", "p", store=store)
    assert "NO VERDICT" in text and "3 of 3 runs failed" in text and "stderr: boom" in text


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        (["sh", "-c", "true"], "wrote no capture"),
        (["sh", "-c", 'echo "{not json" > "$WB_CAPTURE_OUT"'], "invalid capture"),
        (
            [
                "sh",
                "-c",
                'echo \'{"format": "workbench.capture/1", "lens": "inference", "samples": []}\' > "$WB_CAPTURE_OUT"',
            ],
            "lens 'inference'",
        ),
        (
            [
                "sh",
                "-c",
                'echo \'{"format": "workbench.capture/1", "lens": "training", "samples": [{"step": 1, "loss": 2.0}]}\' '
                '> "$WB_CAPTURE_OUT"',
            ],
            "no 'step_ms' samples",
        ),
        (["sleep", "30"], "timed out after 0.5 s"),
        (["/nonexistent/bench"], "cannot start"),
    ],
)
def test_bad_runs_are_failed_with_a_reason(tmp_path, store, candidate, reason):
    bench = fake_bench(tmp_path)
    _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=candidate, timeout_s=0.5)
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    b_runs = [r for r in json.loads(out)["runs"] if r["arm"] == "B"]
    assert len(b_runs) == 3 and all(r["status"] == "failed" and reason in r["reason"] for r in b_runs), b_runs


def test_changed_artifact_blocks_and_names_it(tmp_path, store):
    bench = fake_bench(tmp_path)
    _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "11"], artifacts=[str(bench)])
    bench.write_text(bench.read_text() + "# edited\n")
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), store=store)
    assert code == 3
    assert f"artifact {bench} changed" in err and "new experiment" in err
    assert not (tmp_path / "w").exists()  # nothing ran
    code, _, err = wb("rerun", "report", "p", store=store)
    assert code == 2 and "has not run yet" in err
    code, out, err = wb("rerun", "run", "p", "--dry-run", store=store)
    assert code == 3 and "BLOCKED: artifact" in out


def test_plan_is_immutable_once_executed(tmp_path, store):
    bench = fake_bench(tmp_path)
    first = _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "11"], seed=1)
    assert first["status"] == "added"
    assert (
        _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "11"], seed=1)["status"]
        == "unchanged"
    )
    assert (
        _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "12"], seed=1)["status"]
        == "replaced"
    )
    assert wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), store=store)[0] == 0
    path = write_plan(tmp_path / "p2.toml", baseline=[str(bench), "10"], candidate=[str(bench), "13"], seed=1)
    code, _, err = wb("rerun", "plan", "--from-file", str(path), store=store)
    assert code == 3 and "cannot change" in err and "new name" in err
    code, out, err = wb("rerun", "plan", "p-v2", "--from-file", str(path), "--json", store=store)
    assert code == 0 and json.loads(out)["name"] == "p-v2"


def test_plan_from_options_and_dry_run_runs_nothing(tmp_path, store):
    bench = fake_bench(tmp_path)
    code, out, err = wb(
        "rerun",
        "plan",
        "opt",
        "--lens",
        "training",
        "--baseline",
        f"{bench} 10",
        "--candidate",
        f"{bench} 11",
        "--artifact",
        f"{bench}:executable",
        "--rounds",
        "3",
        "--seed",
        "4",
        "--candidate-env",
        "MODE=new",
        "--json",
        store=store,
    )
    assert code == 0, err
    plan = json.loads(out)["plan"]
    assert plan["candidate"] == {"argv": [str(bench), "11"], "cwd": None, "env": {"MODE": "new"}}
    assert plan["artifacts"][0]["role"] == "executable" and any(
        "3 rounds is few" in w for w in json.loads(out)["warnings"]
    )
    code, out, err = wb("rerun", "run", "opt", "--dry-run", "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["schedule"]) == 9 and doc["would_run"] and doc["commands"]["A'"]["argv"] == [str(bench), "10"]
    assert wb("rerun", "report", "opt", store=store)[0] == 2  # still never ran


def test_plan_from_a_bundle_needs_confirmation(tmp_path, store):
    from store import open_store
    from store.rerun import save_plan
    from workbench.rerun.plan import build_plan

    bench = fake_bench(tmp_path)
    plan = build_plan(
        {
            "name": "imported",
            "lens": "training",
            "baseline": [str(bench), "10"],
            "candidate": [str(bench), "11"],
            "rounds": 3,
        }
    )
    plan = msgspec.structs.replace(plan, origin="bundle:" + "ab" * 32)
    st = open_store(store)
    with st.session() as s:
        save_plan(s, plan.name, plan.lens, plan.digest(), plan.to_json(), plan.origin)
    code, _, err = wb("rerun", "run", "imported", "--workdir", str(tmp_path / "w"), store=store)
    assert code == 3 and "--yes" in err and str(bench) in err  # the argv is shown
    assert not (tmp_path / "w").exists()
    code, out, err = wb("rerun", "run", "imported", "--yes", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err and json.loads(out)["execution"]["status"] == "complete"


def test_unknown_plan_is_a_usage_error(store):
    code, _, err = wb("rerun", "run", "nope", store=store)
    assert code == 2 and "no rerun plan" in err


def test_executor_api_stops_between_runs_when_asked(tmp_path, store):
    """The API the TUI uses: an observer that asks to stop; finished runs are kept, resume completes."""
    from store import open_store
    from workbench.rerun.execute import Executor, Observer

    bench = fake_bench(tmp_path)
    _plan(tmp_path, store, baseline=[str(bench), "10"], candidate=[str(bench), "11"])

    class StopAfterTwo(Observer):
        def __init__(self):
            self.seen = []

        def run_finished(self, outcome, live):
            self.seen.append((outcome.round, outcome.arm, outcome.status))

        def should_stop(self):
            return len(self.seen) >= 2

    st = open_store(store)
    observer = StopAfterTwo()
    executor = Executor(st, "p", observer=observer, workdir=tmp_path / "w")
    execution_id = executor.start()
    assert executor.run(execution_id) == "interrupted" and len(observer.seen) == 2
    resumed = Executor(st, "p", workdir=tmp_path / "w")
    assert resumed.reopen() == execution_id and resumed.run(execution_id) == "complete"
    doc = comparison(store, "p")
    # Stopped inside round 1: the round is run again whole after the resume (its two earlier runs are kept).
    assert doc["rounds"]["used"] == [1, 2, 3] and len(doc["runs"]) == 11
    assert any("round(s) 1 split by an interruption" in note for note in doc["notes"])


def test_drift_and_outlier_runs_are_flagged_and_kept(tmp_path, store):
    # Every run 2 % slower than the one before (a warming machine), and slot 7 three times slower.
    script = (
        'V=$(awk -v s="$WB_RERUN_SLOT" \'BEGIN { v = 10 * (1 + 0.02 * s); if (s == 7) v = v * 3; printf "%.4f", v '
        "}'); "
        'printf \'{"format": "workbench.capture/1", "lens": "training", "samples": [{"step": 0, "step_ms": %s}]}\' '
        '"$V" > "$WB_CAPTURE_OUT"'
    )
    _plan(tmp_path, store, baseline=["sh", "-c", script], candidate=["sh", "-c", script], rounds=6)
    code, out, err = wb("rerun", "run", "p", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    doc = json.loads(out)
    assert len([r for r in doc["runs"] if r["status"] == "ok"]) == 18  # nothing dropped
    assert "DRIFT" in doc["flags"] and "OUTLIER_RUNS" in doc["flags"]
    slot7 = next(r for r in doc["runs"] if r["slot"] == 7)
    assert doc["analysis"]["outliers"][slot7["arm"]] == [slot7["round"] - 1]
    code, text, _ = wb("rerun", "report", "p", store=store)
    assert "drift in" in text and f"outlier runs in {slot7['arm']}" in text


def test_guardrails_are_judged_beside_the_control(tmp_path, store):
    def bench(loss):
        return [
            "sh",
            "-c",
            (
                'printf \'{"format": "workbench.capture/1", "lens": "training", "quality": {"loss": %s, "eval_loss": '
                "2.0}, "
                '"samples": [{"step": 0, "step_ms": 10.%s}]}\' ' + f'{loss} "$WB_RERUN_SLOT" > "$WB_CAPTURE_OUT"'
            ),
        ]

    path = write_plan(tmp_path / "g.toml", baseline=bench(1.0), candidate=bench(1.1), name="g")
    path.write_text(path.read_text() + '\n[[guardrails]]\nmetric = "loss"\nrule = "max_increase_pct"\nlimit = 5\n')
    assert wb("rerun", "plan", "--from-file", str(path), store=store)[0] == 0
    code, out, err = wb("rerun", "run", "g", "--workdir", str(tmp_path / "w"), "--json", store=store)
    assert code == 0, err
    rails = {g["name"]: g for g in json.loads(out)["guardrails"]}
    assert rails["loss"]["status"] == "broken" and rails["loss"]["control_status"] == "held"
    assert rails["loss"]["means"]["B"] == pytest.approx(1.1) and rails["loss"]["source"] == "plan"
    assert rails["eval_loss"]["status"] == "held" and rails["eval_loss"]["source"] == "lens:training"
    code, out, _ = wb("rerun", "plan", "--list", "--json", store=store)
    assert [p["name"] for p in json.loads(out)["plans"]] == ["g"]


def test_a_plan_name_prints_literally_without_control_characters(tmp_path, store):
    bench = fake_bench(tmp_path)
    path = write_plan(
        tmp_path / "odd.toml", baseline=[str(bench), "10"], candidate=[str(bench), "11"], name="[b]o\rd\x07d"
    )
    # (not an ANSI sequence: click strips those itself when stdout is not a terminal, as here)
    code, out, err = wb("rerun", "plan", "--from-file", str(path), store=store)
    assert code == 0, err
    assert "plan 1 [b]o\\rd\\x07d: saved" in out and "wb rerun run [b]o\\rd\\x07d --dry-run" in out
    code, out, err = wb("rerun", "plan", "--list", store=store)
    assert code == 0, err
    assert " [b]o\\rd\\x07d " in out and "\x07" not in out  # click prints plain text: no markup escapes
