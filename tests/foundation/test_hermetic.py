"""The test session is hermetic: HOME, the XDG folders and WB_STORE lie in pytest's temporary
directory, and writes to the real wb folders are seen (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import HERMETIC_VARIABLES, _listing
from store.engine import default_data_dir, default_store_url


def test_every_variable_points_into_pytests_temporary_directory(tmp_path_factory):
    base = tmp_path_factory.getbasetemp().resolve()
    for name in HERMETIC_VARIABLES:
        value = os.environ[name].removeprefix("sqlite:///")
        assert Path(value).resolve().is_relative_to(base), (name, value)
    assert default_data_dir().resolve().is_relative_to(base)
    assert Path(default_store_url().removeprefix("sqlite:///")).resolve().is_relative_to(base)


def test_a_write_in_a_watched_folder_is_seen(tmp_path):
    folder = tmp_path / "wb"
    folder.mkdir()
    before = _listing([folder])
    (folder / "rerun").mkdir()
    (folder / "rerun" / "capture.json").write_text("{}")
    after = _listing([folder])
    assert sorted(p for p, v in after.items() if before.get(p) != v) == [
        str(folder / "rerun"),
        str(folder / "rerun" / "capture.json"),
    ]
