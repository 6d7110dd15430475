"""Cross-rank collective matching on real flight-recorder scenarios and synthetic dumps."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from workbench.diagnostics import flight_recorder as fr
from workbench.diagnostics import safe_pickle
from workbench.errors import BadInput

DATA = Path(__file__).parent.parent / "data" / "failures" / "nvrx-fr_traces"


def _reference(scenario: str) -> dict:
    """The upstream analyzer's answer: PG name, op, size, dtype, missing ranks."""
    text = (DATA / "reference_outputs" / f"{scenario}_reference.txt").read_text()
    row = [c.strip() for c in text.splitlines()[1].split("|")]
    return {
        "group": row[0],
        "desc": row[1].split(",")[0],
        "op": row[2],
        "size": row[3],
        "dtype": row[4],
        "missing": [int(r) for r in row[5].split(",")],
    }


def _analysis(scenario: str) -> fr.CollectiveAnalysis:
    return fr.analyze([fr.load_dump(p) for p in sorted((DATA / scenario).glob("_dump_*"))])


@pytest.mark.parametrize("scenario", ["gpu_error_1st", "lock_gil_1st"])
def test_real_scenarios_match_the_reference_output(scenario):
    ref = _reference(scenario)
    analysis = _analysis(scenario)
    assert analysis.never_entered == ref["missing"]
    assert analysis.verdict == "missing-ranks"
    assert analysis.missing_dumps == []
    group = next(g for g in analysis.groups if g.group.name == ref["group"])
    assert group.status == "missing"
    assert group.desc == ref["desc"]
    assert group.op == ref["op"]
    assert group.size == ref["size"]
    assert group.dtype == ref["dtype"]
    assert group.never_entered == ref["missing"]


def test_detected_ranks_are_a_subset_of_the_injected_faults():
    for scenario in ("gpu_error_1st", "lock_gil_1st"):
        log = (DATA / scenario / "fault_injection.log").read_text()
        injected = {int(r) for r in re.search(r"Fault ranks: \[([^\]]*)\]", log).group(1).split(",")}
        assert set(_analysis(scenario).never_entered) <= injected


def test_gpu_error_scenario_reports_stale_counters_and_blames_no_healthy_rank():
    analysis = _analysis("gpu_error_1st")
    g74 = next(g for g in analysis.groups if g.group.name == "74")
    assert g74.seq == 20537
    assert g74.entered == [13, 14, 15]
    # 12 and 14 both had the GPU error: both keep stale "not completed" state.
    assert g74.stale == [12, 14]
    # own counters say 20529 (stale on 12, 14), a peer says 20536: undecided between them
    assert g74.last_completed_by_all is None
    assert g74.last_completed_by_all_between == (20529, 20536)
    assert g74.peer_completed == 20536
    # Groups of ranks 0-11 all entered their newest collective: nobody singled out there.
    for g in analysis.groups:
        if set(g.group.ranks) <= set(range(12)):
            assert g.status == "all-entered" and g.never_entered == []


def test_pg_id_is_not_used_as_identity():
    """The EXPERT group is pg_id 11 on rank 12 but the match goes by name + ranks."""
    d12 = fr.load_dump(DATA / "gpu_error_1st" / "_dump_12")
    assert d12.pg_id_of("74") == "11"
    analysis = _analysis("gpu_error_1st")
    names = {g.group.name for g in analysis.groups}
    assert "74" in names and "11" not in names


def _to_json_dump(doc: dict) -> dict:
    """The JSON form: lists for tuples, string counters, 0 for unknown times, no frames."""
    out = copy.deepcopy(doc)
    out["pg_status"] = {k: {n: str(v) for n, v in c.items()} for k, c in out["pg_status"].items()}
    out["comm_lib_version"] = out.pop("nccl_version")
    out["version"] = "2.10"
    for e in out["entries"]:
        e["process_group"] = list(e["process_group"])
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            e[k] = e[k] or 0
    return out


def test_json_dumps_give_the_same_answer(tmp_path):
    for src in sorted((DATA / "lock_gil_1st").glob("_dump_*")):
        doc = safe_pickle.load_path(src)
        (tmp_path / (src.name + ".json")).write_text(json.dumps(_to_json_dump(doc)))
    analysis = fr.analyze([fr.load_dump(p) for p in sorted(tmp_path.glob("*.json"))])
    assert analysis.never_entered == [9, 14]
    assert {v: sorted(r) for v, r in analysis.versions.items()} == {"2.10": list(range(16))}


def test_missing_dump_files_make_the_answer_undecided_for_those_ranks():
    paths = [p for p in sorted((DATA / "lock_gil_1st").glob("_dump_*")) if p.name not in ("_dump_9", "_dump_14")]
    analysis = fr.analyze([fr.load_dump(p) for p in paths])
    assert analysis.missing_dumps == [9, 14]
    assert analysis.never_entered == []
    assert analysis.verdict == "undecided"
    assert set(analysis.undecided) == {9, 14}
    g72 = next(g for g in analysis.groups if g.group.name == "72")
    assert g72.status == "undecided" and g72.no_dump == [9, 14]


# ---------------------------------------------------------------- synthetic dumps


def _entry(
    seq,
    op="all_reduce",
    sizes=((4, 4),),
    dtype="Float",
    state="scheduled",
    group=("g1", "default_pg"),
    pg_id=0,
    p2p=False,
):
    return {
        "record_id": seq,
        "pg_id": pg_id,
        "process_group": group,
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": f"nccl:{op}",
        "time_created_ns": 1_700_000_000_000_000_000 + seq,
        "input_sizes": [list(s) for s in sizes],
        "output_sizes": [list(s) for s in sizes],
        "input_dtypes": [dtype],
        "output_dtypes": [dtype],
        "state": state,
        "time_discovered_started_ns": None,
        "time_discovered_completed_ns": None,
        "retired": False,
        "timeout_ms": 600000,
        "is_p2p": p2p,
    }


def _dump(rank, entries, *, ranks=(0, 1, 2, 3), enq=None, comp=None, desc="default_pg", version="2.8"):
    doc = {
        "version": version,
        "pg_config": {"g1": {"name": "g1", "desc": desc, "ranks": json.dumps(list(ranks))}},
        "pg_status": {
            "0": {
                "last_enqueued_collective": enq if enq is not None else -1,
                "last_started_collective": -1,
                "last_completed_collective": comp if comp is not None else -1,
            }
        },
        "entries": entries,
    }
    return fr.parse_dump(doc, Path(f"nccl_trace_rank_{rank}"))


def test_rank_that_never_enqueued_is_named_with_counters():
    dumps = [_dump(r, [_entry(11)], enq=11, comp=10) for r in (0, 1, 3)] + [
        _dump(2, [_entry(10, state="completed")], enq=10, comp=10)
    ]
    analysis = fr.analyze(dumps)
    g = analysis.groups[0]
    assert (g.status, g.seq, g.never_entered, g.entered) == ("missing", 11, [2], [0, 1, 3])
    assert analysis.never_entered == [2]


def test_all_entered_blames_nobody():
    dumps = [_dump(r, [_entry(5)], enq=5, comp=4) for r in range(4)]
    analysis = fr.analyze(dumps)
    assert analysis.groups[0].status == "all-entered"
    assert analysis.groups[0].last_completed_by_all == 4
    assert analysis.never_entered == [] and analysis.verdict == "no-missing-rank"


def test_rank_without_counters_or_entries_in_a_full_dump_is_unknown():
    # Rank 3 dumped a buffer holding only a completed collective of *another* group: its
    # position in g1 cannot be read (pg_status cannot be joined without its own g1 entries).
    other = _entry(99, state="completed", group=("g2", "other"), pg_id=1)
    d3 = _dump(3, [other], enq=None, comp=None)
    d3.groups["g2"] = ("other", (3,))
    dumps = [_dump(r, [_entry(7)], enq=7, comp=6) for r in range(3)] + [d3]
    g = fr.analyze(dumps).groups[0]
    assert g.status == "undecided"
    assert g.unknown == [3] and g.never_entered == []


@pytest.mark.parametrize(
    "change, kind",
    [
        ({"op": "broadcast"}, "collective-type"),
        ({"sizes": ((8, 4),)}, "size"),
        ({"dtype": "BFloat16"}, "dtype"),
        ({"state": "completed"}, "state"),
    ],
)
def test_mismatches_between_ranks(change, kind):
    dumps = [_dump(r, [_entry(3)], enq=3, comp=2) for r in range(3)] + [_dump(3, [_entry(3, **change)], enq=3, comp=2)]
    mismatches = fr.analyze(dumps).mismatches
    assert [(m["kind"], m["ranks"], m["seq"]) for m in mismatches] == [(kind, [0, 3], 3)]


def test_all_to_all_sizes_may_differ():
    dumps = [_dump(r, [_entry(3, op="all_to_all", sizes=((r + 1, 8),))], enq=3, comp=2) for r in range(4)]
    assert fr.analyze(dumps).mismatches == []


def test_disagreeing_group_descriptions_are_undecided():
    dumps = [_dump(r, [_entry(3)], enq=3, comp=2) for r in range(3)] + [
        _dump(3, [_entry(3)], enq=3, comp=2, desc="renamed")
    ]
    g = fr.analyze(dumps).groups[0]
    assert g.status == "undecided"
    assert g.mismatches[0]["kind"] == "group-identity"


def test_same_name_different_members_are_different_groups():
    """split_group can reuse a name with another rank set: name + ranks is the identity."""
    a = [_dump(r, [_entry(4)], ranks=(0, 1), enq=4, comp=3) for r in (0, 1)]
    b = [_dump(r, [_entry(9)], ranks=(2, 3), enq=9, comp=8) for r in (2, 3)]
    analysis = fr.analyze(a + b)
    assert sorted(g.group.ranks for g in analysis.groups) == [(0, 1), (2, 3)]
    assert all(g.status == "all-entered" for g in analysis.groups)


def test_p2p_entries_are_not_matched_as_collectives():
    dumps = [_dump(r, [_entry(0, op="send 0->1", p2p=True)], enq=0, comp=0) for r in range(4)]
    assert fr.analyze(dumps).groups == []


def test_mixed_versions_are_noted():
    dumps = [_dump(r, [_entry(1)], enq=1, comp=0, version="2.4" if r == 0 else "2.9") for r in range(4)]
    assert any("different dump versions" in n for n in fr.analyze(dumps).notes)


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "not a flight-recorder dump"),
        ({"version": "2.9", "entries": {}}, "'entries' is not a list"),
        ({"version": "2.9", "entries": [{"process_group": ["0", "x"]}]}, "collective_seq_id"),
        ({"version": "2.9", "pg_config": {"0": {"desc": "x", "ranks": "[0, oops]"}}}, "member ranks"),
    ],
)
def test_bad_dumps_name_file_and_place(doc, message):
    with pytest.raises(BadInput, match=message) as err:
        fr.parse_dump(doc, Path("trace_rank_3"))
    assert "trace_rank_3" in str(err.value)


def test_rank_comes_from_the_file_name_or_the_dump():
    assert fr.parse_dump({"version": "2.9"}, Path("nccl_trace_rank_12")).rank == 12
    assert fr.parse_dump({"version": "2.9", "rank": 5}, Path("whatever")).rank == 5
    with pytest.raises(BadInput, match="cannot tell the rank"):
        fr.parse_dump({"version": "2.9"}, Path("dump"))


def test_duplicate_rank_is_refused():
    with pytest.raises(BadInput, match="second dump for rank 0"):
        fr.analyze([_dump(0, []), _dump(0, [])])


def test_old_dump_without_pg_status_uses_the_entries():
    """v2.4-style full dumps: no pg_status; completed entries stay in the buffer."""

    def old(rank, seqs, states):
        entries = [_entry(s, state=st) for s, st in zip(seqs, states)]
        for e in entries:
            del e["op_id"]
        doc = {
            "version": "2.4",
            "pg_config": {"g1": {"name": "g1", "desc": "default_pg", "ranks": [0, 1, 2]}},
            "entries": entries,
        }
        return fr.parse_dump(doc, Path(f"nccl_trace_rank_{rank}"))

    dumps = [old(r, [7, 8], ["completed", "scheduled"]) for r in (0, 1)] + [old(2, [6, 7], ["completed", "completed"])]
    analysis = fr.analyze(dumps)
    g = analysis.groups[0]
    assert (g.status, g.seq, g.never_entered) == ("missing", 8, [2])
    assert g.last_completed_by_all is None  # no counters: unknown, not zero


def test_gzipped_dump(tmp_path):
    import gzip

    src = DATA / "lock_gil_1st" / "_dump_8"
    (tmp_path / "_dump_8.gz").write_bytes(gzip.compress(src.read_bytes()))
    d = fr.load_dump(tmp_path / "_dump_8.gz")
    assert d.rank == 8 and len(d.entries) == 9


def test_truncated_json_dump(tmp_path):
    (tmp_path / "trace_rank_1.json").write_text('{"version": "2.10", "entries": [')
    with pytest.raises(BadInput, match="not valid JSON"):
        fr.load_dump(tmp_path / "trace_rank_1.json")


def test_sniff():
    assert fr.sniff((DATA / "lock_gil_1st" / "_dump_9").read_bytes()[:65536])
    assert fr.sniff(b'{"version": "2.10", "pg_config": {}, "entries": []}')
    assert not fr.sniff(b'{"version": 1, "entries": [{"name": "har"}]}')  # some other JSON
    assert not fr.sniff(b"NVRM: Xid (PCI:0000:3b:00): 79")
