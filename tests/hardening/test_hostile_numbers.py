"""One number made hostile in every JSON importer's file: a clear refusal or a clean import, never a crash.

Each fixture under tests/data/inference (one per format and key set) and a native capture is
imported with a number replaced by one past a double's range, an overflowing exponent, NaN,
text, a boolean, or an empty container. ``wb import`` must exit 2 with one ``wb: error:``
line naming the file (and nothing in the store), or 0; an internal error is a defect of the
whole class (an unchecked ``float()`` of an untrusted value), whichever importer has it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.hardening.conftest import REPO
from tests.hardening.test_refusals import run_count, wb

DATA = REPO / "tests" / "data" / "inference"
FILES = sorted(p for p in DATA.glob("*") if p.suffix in (".json", ".jsonl")) + [
    REPO / "captures" / "demo" / "inference" / "baseline-1.json",
    REPO / "captures" / "demo" / "training" / "baseline-1.json",
]
# A JSON number after a key, in an array or after a comma (not inside a string: no quote precedes it).
NUMBER = re.compile(rb"(?<=[:\[,])\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?=\s*[,}\]])")
HOSTILE = (b"1" + b"0" * 400, b"1e400", b"-1e400", b"NaN", b'"12abc"', b"true", b"[]", b"{}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_hostile_number_is_refused_or_read_never_a_crash(path: Path, capsys, tmp_path):
    data = path.read_bytes()
    numbers = list(NUMBER.finditer(data))
    assert numbers, path
    for k, value in enumerate(HOSTILE):
        for m in {id(x): x for x in (numbers[len(numbers) // 2], numbers[-1])}.values():
            hostile = tmp_path / f"{k}-{m.start(1)}{path.suffix}"
            hostile.write_bytes(data[: m.start(1)] + value + data[m.end(1) :])
            store = f"sqlite:///{tmp_path / f'{k}-{m.start(1)}.sqlite'}"
            rc, _out, err = wb(capsys, "--store", store, "import", str(hostile))
            lines = [line for line in err.splitlines() if line.strip()]
            assert "internal error" not in err and "Traceback" not in err, (path.name, value[:12], err)
            if rc:
                assert rc == 2 and lines and lines[0].startswith("wb: error: "), (path.name, value[:12], err)
                assert hostile.name in lines[0], lines[0]
                assert run_count(capsys, store) == 0  # one transaction: nothing half-written
