"""The allow-list unpickler reads plain data and refuses every import, call or construction
without running anything."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.diagnostics import safe_pickle
from workbench.diagnostics.safe_pickle import UnsafePickle
from workbench.errors import BadInput

DATA = Path(__file__).parent.parent / "data" / "failures" / "nvrx-fr_traces"


def test_reads_every_real_flight_recorder_dump_like_pickle_does():
    dumps = sorted(DATA.glob("*/_dump_*"))
    assert len(dumps) == 32
    for path in dumps:
        # pickle.load on our own copied fixture, only to cross-check the decoder.
        assert safe_pickle.load_path(path) == pickle.loads(path.read_bytes())


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_containers_round_trip_in_every_protocol(protocol):
    obj = {
        "a": [1, -2, 2**40, 10**30, 2.5, None, True, False],
        "b": ("x", "é", ""),
        "c": {"n": (1,)},
        "d": (),
        "e": [[]] * 2,
    }
    assert safe_pickle.loads_plain(pickle.dumps(obj, protocol=protocol)) == obj


def test_sets_and_bytes_in_binary_protocols():
    obj = {"s": {1, 2}, "f": frozenset({"a"}), "b": b"\x00\x01"}
    assert safe_pickle.loads_plain(pickle.dumps(obj, protocol=4)) == obj


def _payloads(marker: Path) -> dict[str, bytes]:
    cmd = f"touch {marker}".encode()
    sysname = b"posix" if os.name == "posix" else b"nt"

    class Reduce:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    return {
        # GLOBAL + REDUCE (protocol 0 and 2), STACK_GLOBAL + REDUCE (protocol 4)
        "GLOBAL": pickle.dumps(Reduce(), protocol=0),
        "GLOBAL-proto2": pickle.dumps(Reduce(), protocol=2),
        "STACK_GLOBAL": pickle.dumps(Reduce(), protocol=4),
        # INST: MARK, args, then 'i module\nname\n' calls module.name(*args)
        "INST": b"(S'" + cmd + b"'\ni" + sysname + b"\nsystem\n.",
        # OBJ: MARK, callable, args, 'o' calls callable(*args)
        "OBJ": b"(c" + sysname + b"\nsystem\nS'" + cmd + b"'\no.",
        # NEWOBJ after STACK_GLOBAL, then REDUCE: the opcode stream a crafted object would use
        "NEWOBJ": b"\x80\x04\x8c\x05posix\x8c\x06system\x93)\x81S'" + cmd + b"'\n\x85R.",
        # BUILD first: would call __setstate__ on whatever precedes it
        "BUILD": b"\x80\x02}q\x00}b" + b"c" + sysname + b"\nsystem\n(S'" + cmd + b"'\ntR.",
        "REDUCE-only": b"\x80\x02N)R.",
        "PERSID": b"Pfoo\n.",
        "EXT1": b"\x80\x02\x82\x01.",
    }


def test_hostile_payloads_are_live_with_pickle_load(tmp_path):
    """The payloads really would run code under pickle.loads (in a child process)."""
    marker = tmp_path / "ran-under-pickle"
    payload = _payloads(marker)["GLOBAL"]
    script = "import pickle,sys; pickle.loads(sys.stdin.buffer.read())"
    subprocess.run([sys.executable, "-c", script], input=payload, check=True)
    assert marker.exists()


@pytest.mark.parametrize("name", list(_payloads(Path("/x")).keys()))
def test_hostile_payloads_are_refused_and_nothing_runs(tmp_path, name):
    marker = tmp_path / "pwned"
    payload = _payloads(marker)[name]
    with pytest.raises(UnsafePickle) as err:
        safe_pickle.loads_plain(payload, source="evil.pkl")
    assert "refused pickle opcode" in str(err.value)
    assert str(err.value).startswith("evil.pkl")
    assert not marker.exists()


@pytest.mark.parametrize("opcode", ["GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"])
def test_the_refused_opcode_is_named(tmp_path, opcode):
    streams = {
        "GLOBAL": b"cos\nsystem\n.",
        "STACK_GLOBAL": b"\x80\x04\x8c\x02os\x8c\x06system\x93.",
        "REDUCE": b"\x80\x02N)R.",
        "BUILD": b"\x80\x02}}b.",
        "INST": b"(ios\nsystem\n.",
        "OBJ": b"(N)o.",
        "NEWOBJ": b"\x80\x02N)\x81.",
        "NEWOBJ_EX": b"\x80\x04N)}\x92.",
    }
    with pytest.raises(UnsafePickle, match=opcode):
        safe_pickle.loads_plain(streams[opcode])


def test_hostile_dump_file_is_refused_by_wb_diagnose(tmp_path):
    from click.testing import CliRunner

    from workbench.cli import cli

    marker = tmp_path / "pwned"
    dump_dir = tmp_path / "dumps"
    dump_dir.mkdir()
    # Looks like a flight-recorder dump to the sniffer (keys in the head), then runs code.
    evil = (
        b"\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x03\x00\x00\x002.9X\x09\x00\x00\x00pg_configq\x02"
        + _payloads(marker)["GLOBAL-proto2"][2:-1]
        + b"u."
    )
    (dump_dir / "nccl_trace_rank_0").write_bytes(evil)
    result = CliRunner().invoke(cli, ["diagnose", str(dump_dir)], standalone_mode=False, catch_exceptions=True)
    assert isinstance(result.exception, UnsafePickle)
    assert result.exception.exit_code == 2
    assert "nccl_trace_rank_0" in str(result.exception)
    assert not marker.exists()


@pytest.mark.parametrize(
    "data",
    [b"", b"\x80\x02}", b"\x80\x02(K\x01K\x02u.", b"\x80\x02]q\x00K\x01\x85s.", b"garbage that is not a pickle"],
)
def test_malformed_pickles_are_bad_input_not_crashes(data):
    with pytest.raises(BadInput):
        safe_pickle.loads_plain(data, source="bad.pkl")


def test_size_cap(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(pickle.dumps(list(range(1000)), protocol=4))
    with pytest.raises(BadInput, match="limit"):
        safe_pickle.load_path(path, max_bytes=100)
