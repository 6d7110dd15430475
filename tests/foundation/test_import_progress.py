"""A local import's progress: one bar of files and bytes for a folder of rank files."""

import io
import json

from rich.console import Console

from workbench.cli import import_progress
from workbench.cli.import_progress import ImportBar


def test_a_folder_of_many_files_is_one_bar(tmp_path, monkeypatch):
    monkeypatch.setattr(import_progress, "PROGRESS_MIN_BYTES", 1000)
    for i in range(40):
        (tmp_path / "job" / f"rank-{i:02d}.json").parent.mkdir(exist_ok=True)
        (tmp_path / "job" / f"rank-{i:02d}.json").write_bytes(b"x" * 100)
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    bar = ImportBar(console, (tmp_path / "job",))
    with bar as update:
        assert update is not None and len(bar.bar.tasks) == 1
        for i in range(40):
            path = tmp_path / "job" / f"rank-{i:02d}.json"
            update(path, 50, 100)
            update(path, 100, 100)
        task = bar.bar.tasks[0]
        assert task.total == 4000 and task.completed == 4000
        assert task.description == "files read 40/40"


def test_a_small_input_draws_nothing(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    with ImportBar(Console(file=io.StringIO()), (tmp_path / "a.json",)) as update:
        assert update is None


def test_json_stays_one_document_with_the_bar(tmp_path, wb_env, monkeypatch, capsys):
    """A job big enough for the bar: stdout is exactly one JSON document (the bar is on stderr)."""
    from tests.training import synth
    from workbench.cli import main

    monkeypatch.setattr(import_progress, "PROGRESS_MIN_BYTES", 1)
    drawn = []
    real_update = ImportBar.update
    monkeypatch.setattr(ImportBar, "update", lambda self, *a: (drawn.append(a), real_update(self, *a)))
    for r in range(4):
        synth.write(tmp_path / "job" / f"rank{r}.json", synth.trace(r, world=4))
    try:
        main(
            ["--store", f"sqlite:///{tmp_path / 's.sqlite'}", "import", str(tmp_path / "job"), "--json", "--jobs", "2"]
        )
    except SystemExit as done:
        assert done.code in (0, None)
    out = capsys.readouterr().out
    doc = json.loads(out)  # one document, nothing else on stdout
    assert doc["runs"] == [1] and len(drawn) >= 4  # each rank file read moved the bar
