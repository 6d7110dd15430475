"""Usage errors are the project's one line, exit 2 (docs/cli.md "Exit codes"): Click's own
parse errors as much as wb's, and the store's refusals of what was asked."""

from __future__ import annotations

import json

import pytest

from tests.hardening import inputs
from tests.hardening.test_refusals import refused, store, wb  # noqa: F401 - store is a fixture

CLICK_FAULTS = [
    (("rerun", "plan", "--rounds", "1e9", "p"), ["--rounds", "'1e9' is not a valid integer", "wb rerun plan --help"]),
    (("stats", "--seed", "abc"), ["--seed", "'abc' is not a valid integer", "wb stats --help"]),
    (("show", "--nosuch"), ["No such option '--nosuch'", "wb show --help"]),
    (("show",), ["Missing argument 'RUN'", "wb show --help"]),
    (("nosuchcommand",), ["No such command 'nosuchcommand'", "wb --help"]),
    (("token", "add", "t", "--role", "god"), ["--role", "'god'", "wb token add --help"]),
]


@pytest.mark.parametrize(("args", "named"), CLICK_FAULTS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_a_click_parse_error_is_one_line_naming_the_command(capsys, store, args, named):  # noqa: F811
    line = refused(capsys, "--store", store, *args)
    assert "Usage:" not in line and "Try '" not in line
    for part in named:
        assert part in line, (part, line)


@pytest.mark.parametrize(("args", "named"), CLICK_FAULTS[:3], ids=["rounds", "seed", "option"])
def test_a_click_parse_error_with_json_is_one_error_document(capsys, store, args, named):  # noqa: F811
    rc, out, err = wb(capsys, "--store", store, *args, "--json")
    assert rc == 2 and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    doc = json.loads(out)  # exactly one document
    assert doc["exit"] == 2 and doc["error"]["kind"] == "usage" and named[0] in doc["error"]["message"]


def test_an_in_memory_store_refusal_is_a_usage_error(capsys, tmp_path):
    capture = inputs.native_capture(tmp_path / "c.json")
    line = refused(capsys, "--store", "sqlite://", "import", str(capture))
    assert "is in memory and vanishes when wb exits" in line


def test_store_refusals_of_what_was_asked_exit_2(capsys, store, tmp_path):  # noqa: F811
    capture = inputs.native_capture(tmp_path / "c.json")
    rc, _out, err = wb(capsys, "--store", store, "import", str(capture))
    assert rc == 0, err
    assert "the new label is empty" in refused(capsys, "--store", store, "rename", "1", "  ")
    assert "no token named 'nobody'" in refused(capsys, "--store", store, "token", "revoke", "nobody")
    assert "token name" in refused(capsys, "--store", store, "token", "add", "bad name!", "--role", "read")


def test_a_damaged_store_is_still_a_failure_not_a_usage_error(capsys, tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    rc, _out, err = wb(capsys, "--store", f"sqlite:///{bad}", "runs")
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "internal error" not in err, err


def test_the_store_refuses_an_empty_label_as_a_refusal_not_a_fault(tmp_path):
    from store import open_store
    from store.errors import StoreRefusal
    from store.tidy import rename_run
    from workbench.ingest import import_files

    db = open_store(f"sqlite:///{tmp_path / 's.sqlite'}")
    (run_id,) = import_files(db, [inputs.native_capture(tmp_path / "c.json")]).run_ids
    with pytest.raises(StoreRefusal, match="label cannot be empty"):
        rename_run(db, run_id, " ", look_alike_form=str)
