"""A `kill -9` in the middle of an import's write leaves the store consistent."""

import signal
import subprocess
import sys

import numpy as np

from store import open_store
from tests.foundation.helpers import inference_capture, write_json
from workbench.ingest import import_files

# Runs `wb import`, announcing each column write and slowing it down, so the parent can
# kill the process while the import transaction is open.
SCRIPT = """
import sys, time
import store.columns as columns
real_parts = columns.parts  # each column written into a SQLite store starts here
def slow_parts(array):
    print("WRITING", flush=True)
    time.sleep(0.3)
    return real_parts(array)
columns.parts = slow_parts
from workbench.cli import main
main(["--store", sys.argv[1], "import", sys.argv[2]])
"""


def test_kill_during_import_leaves_store_consistent(tmp_path):
    url = f"sqlite:///{tmp_path / 'k.sqlite'}"
    path = write_json(tmp_path / "big.json", inference_capture(20_000))
    open_store(url)  # the schema exists before the import starts
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, url, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(3):  # inside the transaction, a few columns in
            assert proc.stdout.readline().strip() == "WRITING"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    st = open_store(url)
    assert st.counts() == {"capture": 0, "run": 0, "run_source": 0, "run_column": 0}
    report = import_files(st, [path])
    run = st.load_run(report.run_ids[0])
    assert run.sample_count == 20_000
    assert all(len(col) == 20_000 for col in run.samples.values())
    np.testing.assert_allclose(run.samples["prefill_ms"], 69.0)
