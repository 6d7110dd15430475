"""Issue 45 item 2: budgets bound work, not only bytes. A small pickle that rehashes one big
tuple key, and a small `wb stats` CSV of any shape, finish fast or are refused in one line,
under the memory cap. (The regular expressions: test_regex_work.py.)"""

from __future__ import annotations

import io
import pickle

import pytest

from tests.hardening import inputs
from tests.hardening.conftest import one_line_refusal, wb_capped
from tests.hardening.test_refusals import refused, wb
from workbench.diagnostics import safe_pickle
from workbench.errors import BadInput
from workbench.limits import MAX_ARM_VALUES, MAX_KEY_HASH_VALUES


def test_a_tuple_key_used_again_and_again_is_refused_in_one_line(tmp_path):
    """The issue's file: a million-element tuple as a key 60,000 times (1.2 MB; minutes of hashing)."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    inputs.pickle_rehashed_tuple_key(folder / "_dump_0", 1_000_000, 60_000)
    line = one_line_refusal(wb_capped("diagnose", str(folder), timeout=120), "_dump_0", "hashes more values as keys")
    assert f"{MAX_KEY_HASH_VALUES:,}" in line


def test_hashing_work_is_counted_across_inserts(tmp_path):
    path = inputs.pickle_rehashed_tuple_key(tmp_path / "_dump_0", 100_000, 60)  # 6 M values hashed
    with pytest.raises(BadInput, match="hashes more values as keys"):
        safe_pickle.load_path(path)
    fine = inputs.pickle_rehashed_tuple_key(tmp_path / "_dump_1", 100_000, 40)  # 4 M: within the budget
    doc = safe_pickle.load_path(fine)
    assert len(doc["pg_status"]) == 1 and len(next(iter(doc["pg_status"]))[0]) == 100_000


def test_tuple_keys_of_real_size_read_as_before():
    doc = {("pg", i): {"last_enqueued_collective": i} for i in range(10_000)}
    assert safe_pickle.loads_plain(pickle.dumps(doc, protocol=2)) == doc
    nested = {frozenset({(1, 2), (3, 4)}): "x", ((1, (2, 3)), 4): "y"}
    assert safe_pickle.loads_plain(pickle.dumps(nested, protocol=4)) == nested  # FROZENSET from protocol 4


# -- wb stats --csv ----------------------------------------------------------------------------


def _csv(tmp_path, text: str, name: str = "v.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_stats_csv_of_the_issue_is_refused_within_the_memory_cap(tmp_path):
    """1.2 MB: 40,000 rounds of A and B (6.2 GB and minutes before; the analysis takes 10,000 an arm)."""
    rows = "".join(f"{r},{arm},{1 + (r % 97) / 100:.4f}\n" for r in range(40_000) for arm in ("A", "B"))
    path = _csv(tmp_path, "round,arm,value\n" + rows)
    assert path.stat().st_size > 1_150_000
    line = one_line_refusal(wb_capped("stats", "--csv", str(path)), str(path), "line 20002")
    assert f"arm A has more values than {MAX_ARM_VALUES:,}" in line


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("," * (2 << 20), "line 2: has a line longer than 65,536 bytes"),  # a line of 2 M empty cells
        ('1,A,"' + "x\n" * 70_000 + '"\n', "not a CSV of values (field larger than field limit"),  # one quoted cell
        ("1,A,1\n2,A,1\n\0\n", "line 4: expected 3 columns, found 1"),
        ("1,A,1\n2,B,nan\n", "line 3: value must be a positive finite number"),
        ("1,A,1\n1,A,2\n", "line 3: round '1' has two values for arm A"),
        ("1,A,1\n2," + "Z" * 5000 + ",1\n", "line 3: unknown arm 'ZZZZ"),
    ],
    ids=["commas", "quoted-cell", "nul", "nan", "twice", "arm"],
)
def test_stats_csv_of_any_shape_is_one_line(capsys, tmp_path, body, needle):
    path = _csv(tmp_path, "round,arm,value\n" + body)
    line = refused(capsys, "stats", "--csv", str(path))
    assert f"{path}: " in line and needle in line, line
    assert len(line) < 400


def test_stats_csv_invalid_utf8_names_the_line(capsys, tmp_path):
    path = tmp_path / "v.csv"
    path.write_bytes(b"round,arm,value\n1,A,1\n2,B\xff,1\n")
    assert "line 3: not UTF-8 text" in refused(capsys, "stats", "--csv", str(path))


def test_stats_csv_from_standard_input_is_bounded(capsys, monkeypatch):
    from workbench.formats import arm_values

    monkeypatch.setattr(arm_values, "MAX_CSV_BYTES", 1000)
    stdin = io.TextIOWrapper(io.BytesIO(b"round,arm,value\n" + b"1,A,1\n" * 400))
    monkeypatch.setattr("sys.stdin", stdin)
    line = refused(capsys, "stats", "--csv", "-")
    assert "standard input: is over the 1,000 bytes limit for a CSV of values" in line


def test_stats_csv_at_the_limit_reads_every_round(tmp_path):
    from workbench.formats.arm_values import read_arm_values

    rows = "".join(f"r{r},{arm},{1 + r % 7}\n" for r in range(MAX_ARM_VALUES) for arm in ("A", "B", "A'"))
    read = read_arm_values(str(_csv(tmp_path, "round,arm,value\n" + rows)), paired=True)
    assert [len(read.values[arm]) for arm in ("A", "B", "A'")] == [MAX_ARM_VALUES] * 3
    assert read.slots["B"][-1] == MAX_ARM_VALUES - 1 and not read.notes


def test_stats_csv_still_reads_a_small_file(capsys, tmp_path):
    rows = "".join(
        f"{r},{arm},{v}\n"
        for r, (a, b) in enumerate([(10, 11), (10.2, 11.1), (9.9, 11.3)])
        for arm, v in (("A", a), ("B", b))
    )
    rc, out, err = wb(capsys, "stats", "--csv", str(_csv(tmp_path, "round,arm,value\n" + rows)), "--json")
    assert rc in (0, 4), err
    assert '"verdict"' in out
