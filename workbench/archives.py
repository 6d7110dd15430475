"""Archives of captures (``.tar``, ``.tar.gz``, ``.zip``), read member by member.

An archive named to ``wb import`` (or found in a folder it scans) is recognised by its content
(a zip's ``PK`` header, a tar's ``ustar`` magic, inside gzip or not) and its regular members
are unpacked, each through the same budgets as a file read directly (``workbench.limits``):
at most ``MAX_ARCHIVE_MEMBERS`` members, all of them together no larger than a gzip of the
archive's size may decompress to, each counted as it is copied (a header's stated size is
never trusted). A member whose name leaves the archive (absolute, ``..``, a drive) is refused,
naming the archive and the member; links, devices and folders are passed over with the reason,
and so is an archive inside the archive. The members are then imported like the files of a
folder: each is its own capture, named ``ARCHIVE/MEMBER``, and a ``wb.toml`` beside the
archive declares for them. The unpacked copies are removed when the read is done.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO

from workbench.errors import BadInput
from workbench.inputs import open_binary, open_regular, probe_file
from workbench.limits import MAX_ARCHIVE_MEMBERS, decompressed_cap, exceeded, size_text

_ARCHIVE_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError)
_COPY = 1 << 20


def archive_kind(path: Path) -> str | None:
    """``"zip"``, ``"tar"`` (plain or gzip) or ``None``: from the content, never the name."""
    try:
        probe = probe_file(path)
    except BadInput:
        return None
    if not probe.compressed and probe.head[:4] == b"PK\x03\x04":
        return "zip"
    if len(probe.head) >= 262 and probe.head[257:262] == b"ustar":
        return "tar"
    return None


def _member_path(archive: Path, name: str) -> PurePosixPath:
    """A member's name as a relative path inside the archive; one that would leave it is refused."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if not parts or name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
        raise BadInput(archive, f"member {name[:200]!r} would be written outside the archive's folder: refused")
    return PurePosixPath(*[p for p in parts if p != "."])


class Unpacked:
    """The members of the archives among the files of one import, unpacked for the read
    (a context: the copies are removed on exit). ``shown`` names a copy as the user knows it."""

    def __init__(self) -> None:
        self._root: Path | None = None
        self._count = 0
        self.shown_as: dict[Path, Path] = {}  # unpacked copy -> ARCHIVE/MEMBER
        self.archive_of: dict[Path, Path] = {}  # unpacked copy -> the archive it came from

    def __enter__(self) -> "Unpacked":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)

    def expand(self, files: list[Path], passed: list[tuple[Path, str]]) -> list[Path]:
        """``files`` with every archive replaced by its regular members (what is passed over is
        appended to ``passed``)."""
        out: list[Path] = []
        for path in files:
            kind = archive_kind(path)
            if kind is None:
                out.append(path)
                continue
            before = len(passed)
            members = self._unpack(path, kind, passed)
            if not members:
                over = passed[before:]
                raise BadInput(
                    path,
                    "is an archive with no regular file in it"
                    + (f" ({len(over)} passed over: {over[0][1]})" if over else ""),
                )
            out.extend(members)
        return out

    def shown(self, path: Path) -> Path:
        return self.shown_as.get(path, path)

    def rename(self, exc: BadInput) -> BadInput:
        """``exc`` with an unpacked copy's path replaced by ``ARCHIVE/MEMBER`` (in place)."""
        if exc.file is not None and self._root is not None and exc.file.startswith(str(self._root)):
            copy = Path(exc.file)
            exc.file = str(self.shown(copy))
            text = str(exc.args[0]) if exc.args else ""
            exc.args = (text.replace(str(copy), exc.file, 1), *exc.args[1:])
        return exc

    def _unpack(self, archive: Path, kind: str, passed: list[tuple[Path, str]]) -> list[Path]:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="wb-archive-"))
        self._count += 1
        into = self._root / str(self._count) / archive.name
        budget = _Budget(archive, decompressed_cap(os.stat(archive).st_size))
        found: list[Path] = []
        try:
            members = _tar_members(archive) if kind == "tar" else _zip_members(archive)
            for name, reader in members:
                budget.member()
                relative = _member_path(archive, name)
                shown = Path(f"{archive}/{relative}")
                if reader is None:
                    passed.append((shown, "a link, device or folder in the archive; not read"))
                    continue
                if any(part.startswith(".") or part == "__MACOSX" for part in relative.parts):
                    continue  # hidden files, as a folder scan leaves them
                copy = into / relative
                copy.parent.mkdir(parents=True, exist_ok=True)
                with open(copy, "wb") as out:
                    budget.copy(reader, out)
                if archive_kind(copy) is not None:
                    passed.append((shown, "an archive inside the archive; unpack it first"))
                    continue
                self.shown_as[copy], self.archive_of[copy] = shown, archive
                found.append(copy)
        except _ARCHIVE_ERRORS as exc:
            raise BadInput(archive, f"corrupt or truncated {kind} archive ({exc})") from None
        except RuntimeError as exc:  # zipfile: an encrypted member
            raise BadInput(archive, f"cannot be unpacked ({exc})") from None
        return sorted(found)


class _Budget:
    """Members and bytes unpacked from one archive, refused past the limits."""

    def __init__(self, archive: Path, limit: int) -> None:
        self.archive, self.limit = archive, limit
        self.members = self.written = 0

    def member(self) -> None:
        self.members += 1
        if self.members > MAX_ARCHIVE_MEMBERS:
            raise exceeded(self.archive, "is an archive of more members than", f"{MAX_ARCHIVE_MEMBERS:,}")

    def copy(self, reader: IO[bytes], out: IO[bytes]) -> None:
        while block := reader.read(_COPY):
            self.written += len(block)
            if self.written > self.limit:
                raise exceeded(self.archive, "unpacks to more than", f"{size_text(self.limit)} (its decompression cap)")
            out.write(block)


def _tar_members(archive: Path) -> Iterator[tuple[str, IO[bytes] | None]]:
    """A tar's members in order, streamed (gzip decompressed within its cap by ``open_binary``)."""
    with open_binary(archive) as stream, tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            if member.isdir():
                continue
            reader = tar.extractfile(member) if member.isreg() else None
            yield member.name, reader


def _zip_members(archive: Path) -> Iterator[tuple[str, IO[bytes] | None]]:
    with open_regular(archive) as raw, zipfile.ZipFile(raw) as zf:
        infos = zf.infolist()
        if len(infos) > MAX_ARCHIVE_MEMBERS:
            raise exceeded(archive, "is an archive of more members than", f"{MAX_ARCHIVE_MEMBERS:,}")
        for info in infos:
            if info.is_dir():
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: the writer set no file type (a plain file)
            if kind and kind != stat.S_IFREG:
                yield info.filename, None
                continue
            with zf.open(info) as reader:
                yield info.filename, reader
