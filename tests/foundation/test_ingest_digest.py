"""A capture's SHA-256 is taken while its importer reads it: one pass over a new file, not a
digest pass and then a parse (issue 47 item 1). A file that may be one already stored (a
stored capture, or another file of the import, has its size) is still hashed first, so a
second import of it adds nothing and reads nothing more."""

from __future__ import annotations

import hashlib

import pytest

from store import open_store
from tests.foundation.helpers import inference_capture, write_json
from workbench import inputs
from workbench.ingest import import_files


@pytest.fixture
def counted(monkeypatch):
    """Bytes read from each file through the one door, by name."""
    read: dict[str, int] = {}
    real = inputs.open_regular

    def counting(path, *args, **kwargs):
        f = real(path, *args, **kwargs)
        raw_read, raw_readinto = f.read, f.readinto

        def note(n: int) -> None:
            read[path.name] = read.get(path.name, 0) + n

        f.read = lambda *a: (lambda d: (note(len(d)), d)[1])(raw_read(*a))  # type: ignore[method-assign]
        f.readinto = lambda b: (lambda n: (note(n or 0), n)[1])(raw_readinto(b))  # type: ignore[method-assign]
        return f

    monkeypatch.setattr(inputs, "open_regular", counting)
    return read


@pytest.mark.parametrize("gz", [False, True])
def test_a_new_capture_is_read_once_and_stored_under_its_digest(sqlite_url, tmp_path, counted, gz):
    doc = inference_capture(60_000 if gz else 4000)
    path = write_json(tmp_path / ("big.json.gz" if gz else "big.json"), doc, gz=gz)
    size = path.stat().st_size
    st = open_store(sqlite_url)
    report = import_files(st, [path])
    assert len(report.run_ids) == 1
    heads = 3 * inputs.HEAD_BYTES  # detection's looks at the head (its magic, then 64 KiB), twice
    assert size + heads // 2 < 2 * size  # (the file is large enough for a second pass to show)
    assert counted["big.json.gz" if gz else "big.json"] <= size + heads  # one pass, not a digest pass and a parse
    capture = st.run_captures(report.run_ids[0])[0]
    assert capture.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and capture.size == size


def test_a_second_import_is_hashed_first_and_adds_nothing(sqlite_url, tmp_path, counted):
    path = write_json(tmp_path / "c.json", inference_capture(3000))
    st = open_store(sqlite_url)
    import_files(st, [path])
    counts = st.counts()
    counted.clear()
    again = import_files(st, [path])
    assert again.run_ids == [] and "already imported" in again.skipped[0][1]
    assert st.counts() == counts
    assert counted["c.json"] <= path.stat().st_size + 3 * inputs.HEAD_BYTES  # the digest only: not parsed again


def test_the_same_content_twice_in_one_import_is_read_once(sqlite_url, tmp_path):
    a = write_json(tmp_path / "a.json", inference_capture(50))
    b = tmp_path / "b.json"
    b.write_bytes(a.read_bytes())
    report = import_files(open_store(sqlite_url), [a, b])
    assert len(report.run_ids) == 1 and "same content as" in report.skipped[0][1]


def test_a_reader_that_does_not_read_a_file_whole_still_stores_its_digest(sqlite_url, tmp_path, monkeypatch):
    """When no read of a file went from its first byte to its end (a reader that stops early,
    or one reading in other processes), the file is hashed on its own after the parse."""
    from workbench.importers import native

    path = write_json(tmp_path / "c.json", inference_capture(20))
    real = native.read_capture
    monkeypatch.setattr(native, "read_capture", lambda p, *a, **k: real(p, *a, **k))
    monkeypatch.setattr(inputs, "_WATCHING", inputs.ContextVar("off", default=None))  # nothing hashed as read
    st = open_store(sqlite_url)
    (run,) = import_files(st, [path]).run_ids
    assert st.run_captures(run)[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
