"""The importer contract: detect a format from content, read files into runs.

An importer is a module in ``workbench/importers/`` with a module-level ``IMPORTER``
(an instance of a subclass of :class:`Importer`). The registry finds them by listing
the package, so adding a format touches no shared file. ``sniff`` must be cheap and
decide from content (the first 64 KiB, decompressed), never from the file name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path

from store.records import RunRecord
from workbench.formats.key_sets import KeySet, NearMiss, closest

# The importer contract's vocabulary lives one layer down, where formats and the training
# readers can use it too; importers keep importing it from here.
from workbench.inputs import (  # noqa: F401
    GZIP_MAGIC,
    HEAD_BYTES,
    READ_ERRORS,
    BoundedReader,
    CountingReader,
    ImporterOption,
    ImportOptions,
    Probe,
    open_binary,
    open_regular,
    probe_file,
    read_bounded,
)


class Importer(ABC):
    """One input format. ``name`` and ``version`` are recorded with every capture."""

    name: str = ""
    version: str = "1"
    description: str = ""
    # Lower runs first in detection; a specific format should beat a generic one.
    priority: int = 50
    # The ``wb import`` flags this importer reads (``ImportOptions.params``); the CLI
    # builds them from the registry, so a format's flags live with the format.
    options: tuple[ImporterOption, ...] = ()
    # The versions of the format's keys it reads (workbench.formats.key_sets), as data.
    key_sets: tuple[KeySet, ...] = ()
    # Detected from content (``sniff``); False for a reader chosen otherwise (``--map``).
    by_content: bool = True

    @abstractmethod
    def sniff(self, probe: Probe) -> bool:
        """True when this importer recognises the content."""

    def decline(self, probe: Probe) -> NearMiss | None:
        """Called when no importer took ``probe``: how near this format came and why it
        declined (by default the nearest of ``key_sets``), or None when not near at all."""
        if not self.key_sets or not probe.stripped.startswith(("{", "[")):
            return None
        return closest(self.name, self.key_sets, probe.text)

    @abstractmethod
    def read(self, paths: list[Path], options: ImportOptions) -> Iterator[RunRecord]:
        """Parse ``paths`` (all detected as this format) into runs.

        Raise :class:`workbench.errors.BadInput` naming the file and place on any
        fault; never return a partial run.
        """
