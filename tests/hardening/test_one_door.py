"""Issue 28 item 4: one door for every file wb reads. Regular files only (a FIFO or
/dev/zero is refused at once, wherever it is named), /proc and /sys refused, a wb.toml
symlinked out of the folder not followed, a sparse capture refused before hashing, and
the digest stored is the digest of the bytes that were parsed."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.hardening import inputs
from tests.hardening.test_refusals import refused, wb

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@pytest.fixture(autouse=True)
def no_hang():
    """A read that blocks fails the test (SIGALRM) instead of hanging the suite."""

    def hung(*_args):
        raise TimeoutError("wb blocked on a read")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def store(tmp_path):
    return f"sqlite:///{tmp_path / 'wb.sqlite'}"


@pytest.fixture
def two_runs(capsys, tmp_path, store):
    for i in range(2):
        rc, _out, err = wb(
            capsys,
            "--store",
            store,
            "import",
            str(inputs.native_capture(tmp_path / f"r{i}.json", label=f"r{i}", ttft=1 + i)),
        )
        assert rc == 0, err
    return store


@pytest.fixture(params=["fifo", "/dev/zero"])
def bad_file(request, tmp_path):
    if request.param == "fifo":
        os.mkfifo(tmp_path / "pipe")
        return str(tmp_path / "pipe"), "a FIFO"
    return request.param, "device"


def test_extension_option(capsys, two_runs, bad_file):
    path, _kind = bad_file
    line = refused(capsys, "--store", two_runs, "compare", "1", "--vs", "2", "--extension", path)
    assert path in line and "not a regular file" in line


def test_extension_from_the_environment(capsys, monkeypatch, two_runs, bad_file):
    path, _kind = bad_file
    monkeypatch.setenv("WB_LENS_EXTENSIONS", path)
    line = refused(capsys, "--store", two_runs, "compare", "1", "--vs", "2")
    assert path in line and "not a regular file" in line


@pytest.mark.parametrize(
    "args",
    [
        lambda p, d: ["import", str(inputs.native_capture(d / "c.json")), "--dims-file", p],
        lambda p, d: ["rerun", "plan", "--from-file", p],
        lambda p, d: ["evidence", "verify", p],
        lambda p, d: ["bundle", "import", p],
        lambda p, d: ["import", p],
        lambda p, d: ["diagnose", p],
    ],
    ids=["dims-file", "plan-from-file", "evidence-verify", "bundle-import", "import", "diagnose"],
)
def test_every_option_naming_a_file(capsys, tmp_path, store, bad_file, args):
    path, kind = bad_file
    line = refused(capsys, "--store", store, *args(path, tmp_path))
    assert path in line and "not a regular file" in line and kind in line


@pytest.mark.parametrize(
    "args",
    [
        lambda p, d: ["import", p],
        lambda p, d: ["import", str(inputs.native_capture(d / "c.json")), "--dims-file", p],
        lambda p, d: ["rerun", "plan", "--from-file", p],
    ],
    ids=["import", "dims-file", "plan-from-file"],
)
def test_proc_files_are_refused(capsys, tmp_path, store, args):
    line = refused(capsys, "--store", store, *args("/proc/self/status", tmp_path))
    assert "is a file of /proc" in line


def test_a_wb_toml_symlinked_out_of_the_folder_is_not_followed(capsys, tmp_path, store):
    folder = tmp_path / "job"
    folder.mkdir()
    inputs.native_capture(folder / "c.json")
    (folder / "wb.toml").symlink_to("/proc/kmsg")
    line = refused(capsys, "--store", store, "import", str(folder))
    assert "wb.toml" in line and "symlink out of the imported folder" in line


def test_a_wb_toml_symlinked_inside_the_folder_is_read(capsys, tmp_path, store):
    folder = tmp_path / "job"
    (folder / ".team").mkdir(parents=True)  # hidden: not a capture
    (folder / ".team" / "dims.toml").write_text('[dimensions]\nmodel = "m-7"\n')
    inputs.native_capture(folder / "c.json")
    (folder / "wb.toml").symlink_to(folder / ".team" / "dims.toml")
    rc, out, err = wb(capsys, "--store", store, "import", str(folder))
    assert rc == 0, err
    rc, out, err = wb(capsys, "--store", store, "show", "1", "--json")
    assert rc == 0 and "m-7" in out, err


def test_a_sparse_capture_is_refused_before_hashing(capsys, tmp_path, store):
    path = tmp_path / "sparse.json"
    with open(path, "wb") as f:
        f.write(inputs.NATIVE_HEAD.encode() + b'"samples":[')
        f.truncate(200 * 10**9)  # a 200 GB hole: hashing it would take minutes
    if os.stat(path).st_blocks * 512 > 1 << 20:
        pytest.skip("this filesystem does not keep holes")
    line = refused(capsys, "--store", store, "import", str(path))
    assert "sparse file" in line and "holes" in line


def test_a_file_replaced_during_the_import_is_not_stored_under_the_old_digest(capsys, monkeypatch, tmp_path, store):
    """Hashed before it is read (a stored capture has its size, so it may be that one): replaced
    between the digest and the parse."""
    from workbench import ingest

    folder = tmp_path / "job"
    folder.mkdir()
    target = inputs.native_capture(folder / "c.json", label="old")
    same_size = inputs.native_capture(tmp_path / "twin.json", label="odl")  # stored first: its size is known
    assert same_size.stat().st_size == target.stat().st_size
    rc, _out, err = wb(capsys, "--store", store, "import", str(same_size))
    assert rc == 0, err
    real = ingest.digest_file

    def then_replace(path, *args):
        out = real(path, *args)
        if path.name == "c.json":  # hashed: now another file takes its name before it is parsed
            replacement = inputs.native_capture(tmp_path / "new.json", label="new", ttft=9)
            os.replace(replacement, target)
        return out

    monkeypatch.setattr(ingest, "digest_file", then_replace)
    line = refused(capsys, "--store", store, "import", str(folder))
    assert "changed while it was being imported" in line
    monkeypatch.setattr(ingest, "digest_file", real)
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0 and '"old"' not in out and '"new"' not in out  # nothing stored


def test_a_file_replaced_while_it_is_hashed_as_it_is_read_is_not_stored(capsys, monkeypatch, tmp_path, store):
    """Hashed while it is read (no stored capture has its size): replaced once it was parsed."""
    from workbench.importers import native

    target = inputs.native_capture(tmp_path / "c.json", label="old")
    real = native.read_capture

    def then_replace(path, *args, **kwargs):
        record = real(path, *args, **kwargs)
        os.replace(inputs.native_capture(tmp_path / "new.json", label="new", ttft=9), target)
        return record

    monkeypatch.setattr(native, "read_capture", then_replace)
    line = refused(capsys, "--store", store, "import", str(target))
    assert "changed while it was being imported" in line
    rc, out, err = wb(capsys, "--store", store, "runs", "--json")
    assert rc == 0 and '"label"' not in out  # nothing stored


def test_inference_perf_companions_are_sniffed_through_the_one_door(tmp_path):
    """A file imported beside inference-perf reports is told apart by its head, read through
    ``open_regular``: a FIFO is refused without blocking, a /proc file refused, never read whole."""
    import threading

    from workbench.errors import BadInput
    from workbench.importers import inference_perf

    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def sniff(path):
        try:
            inference_perf._companions(tmp_path, [path])
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            outcome.append(exc)

    worker = threading.Thread(target=sniff, args=(fifo,), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # blocked on the FIFO: unblock it so the thread can end
        with open(fifo, "wb"):
            pass
        worker.join(10)
        pytest.fail("a FIFO beside the reports blocked the import")
    assert isinstance(outcome[0], BadInput) and "not a regular file" in str(outcome[0])
    with pytest.raises(BadInput, match="kernel interface"):
        inference_perf._companions(tmp_path, [Path("/proc/self/status")])
