"""What an import reads, and how: the user's options, a probe of a file's first bytes,
and bounded, regular-file-only access to its content (decompressed when gzip).

Importers, formats, the training readers and the diagnostics all read files through
here, so the resource budget (``workbench.limits``) and the refusal of FIFOs, devices and
sockets hold everywhere. It sits below all of them (docs/architecture.md).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from workbench.errors import BadInput
from workbench.limits import (
    DECOMPRESSED_ABSOLUTE,
    DECOMPRESSED_FLOOR,
    DECOMPRESSED_RATIO,
    decompressed_cap,
    exceeded,
    size_text,
)

HEAD_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Probe:
    """What detection may look at: the path and the first bytes of content."""

    path: Path
    head: bytes  # decompressed when the file is gzip
    compressed: bool

    @property
    def text(self) -> str:
        return self.head.decode("utf-8", errors="replace")

    @property
    def stripped(self) -> str:
        """The head without a UTF-8 BOM and leading whitespace."""
        return self.text.lstrip("\ufeff \t\r\n")


@dataclass(frozen=True)
class ImporterOption:
    """A ``wb import`` flag an importer reads, declared by the importer (``Importer.options``):
    the value is ``ImportOptions.params[param]``, present only when the user gave it.

    ``type`` is ``str``, ``int``, ``float`` or ``bool`` (a flag without a value, present as
    ``True``); ``minimum`` bounds an ``int``. ``help`` says what it does; the formats that
    read it are added by the registry (``workbench.importers.import_options``).
    """

    param: str
    flag: str
    help: str
    type: type = str
    metavar: str | None = None
    minimum: int | None = None


@dataclass
class ImportOptions:
    """What the user said on the command line that importers may use."""

    label: str | None = None
    # Importer-specific parameters (``--tz``, ``--from``, ``--to``, ``scrape_pair`` ...).
    params: dict[str, Any] = field(default_factory=dict)
    # Called with the number of raw (on-disk) bytes consumed so far in the current file.
    progress: Callable[[Path, int, int], None] | None = None
    # Where rank traces are read when not in local processes (``wb import --cluster``):
    # a ``workbench.training.parallel.RankExecutor``; never sent to workers.
    rank_executor: Any = None


def open_regular(path: Path, *, max_bytes: int | None = None, too_big: str | None = None) -> IO[bytes]:
    """Open ``path`` for reading, refusing anything but a regular file: the one door
    every file wb reads goes through (captures, dims files, plans, bundles, dumps ...).

    Opened non-blocking and checked with ``fstat`` on the open descriptor, so a FIFO
    never blocks the open and a file swapped for a device after a ``stat`` is still
    caught (a FIFO, ``/dev/zero`` or ``/dev/urandom`` would never end). Files of
    ``/proc`` and ``/sys`` are refused too: they call themselves regular, report size 0
    and may block (``/proc/kmsg``) or never end. With ``max_bytes``, a file larger
    than that is refused before a byte is read (``too_big`` is the message).
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except PermissionError:
        raise BadInput(path, "cannot be read (permission denied)") from None
    except FileNotFoundError:
        raise BadInput(path, "no such file") from None
    except IsADirectoryError:
        raise BadInput(path, "is a directory where a file was expected") from None
    except OSError as exc:
        raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise BadInput(path, "is a directory where a file was expected")
        if not stat.S_ISREG(mode):
            raise BadInput(path, f"is not a regular file ({_kind(mode)}); wb reads only regular files")
        pseudo = _pseudo_filesystem(fd)
        if pseudo:
            raise BadInput(path, f"is a file of {pseudo} (a kernel interface, not data); wb reads only regular files")
        size = os.fstat(fd).st_size
        if max_bytes is not None and size > max_bytes:
            raise BadInput(
                path, too_big or f"is {size_text(size)}, over the {size_text(max_bytes)} limit for this file"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _pseudo_filesystem(fd: int) -> str | None:
    """``/proc`` or ``/sys`` when the open file lives there (by device, and by the path
    the kernel gives the descriptor, so a symlink or a bind of either is caught)."""
    dev = os.fstat(fd).st_dev
    for mount, mount_dev in _pseudo_devices().items():
        if mount_dev == dev:
            return mount
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return next((m for m in _PSEUDO_MOUNTS if real == m or real.startswith(m + "/")), None)


_PSEUDO_MOUNTS = ("/proc", "/sys")
_pseudo_devs: dict[str, int] | None = None


def _pseudo_devices() -> dict[str, int]:
    """The devices of /proc and /sys where they are mounted (not a plain folder of /)."""
    global _pseudo_devs
    if _pseudo_devs is None:
        found: dict[str, int] = {}
        try:
            root = os.stat("/").st_dev
            for mount in _PSEUDO_MOUNTS:
                try:
                    dev = os.stat(mount).st_dev
                except OSError:
                    continue
                if dev != root:
                    found[mount] = dev
        except OSError:
            pass
        _pseudo_devs = found
    return _pseudo_devs


def read_regular(path: Path, limit: int, what: str) -> bytes:
    """The whole content of a small file (a dims file, a plan, a list of versions):
    through :func:`open_regular`, refused before reading when over ``limit`` bytes.
    ``what`` names the file in the message (``"a plan file"``)."""
    path = Path(path)
    with open_regular(path, max_bytes=limit, too_big=f"is over the {size_text(limit)} limit for {what}") as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:  # grew while we read
        raise BadInput(path, f"is over the {size_text(limit)} limit for {what}")
    return data


# Sparse files: a hole reads as zeros without costing disk. A capture is written, not
# allocated, so holes beyond this (and beyond half the file) are refused before hashing.
MAX_HOLE_BYTES = 1 << 30


def check_not_sparse(fd: int, path: Path) -> None:
    """Refuse a file whose holes exceed :data:`MAX_HOLE_BYTES` and half its size
    (``SEEK_DATA``/``SEEK_HOLE``; a no-op where the system has no such seek)."""
    size = os.fstat(fd).st_size
    if size <= MAX_HOLE_BYTES or not hasattr(os, "SEEK_HOLE"):
        return
    holes, offset = 0, 0
    try:
        while offset < size:
            try:
                data = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole is left
                data = size
            holes += data - offset
            if data >= size:
                break
            offset = os.lseek(fd, data, os.SEEK_HOLE)
    except OSError:
        return  # the filesystem cannot say: read as usual
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
    if holes > MAX_HOLE_BYTES and holes * 2 > size:
        raise exceeded(
            path,
            f"is a sparse file ({size_text(size)} of which {size_text(holes)} are holes, never written): more holes "
            f"than",
            size_text(MAX_HOLE_BYTES),
        )


@dataclass(frozen=True)
class FileIdentity:
    """What changes when a file is written or replaced: compared after a file is read,
    so that the digest stored for it is the digest of the bytes that were parsed."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> "FileIdentity":
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def check_unchanged(path: Path, identity: FileIdentity) -> None:
    """Refuse ``path`` when it is no longer the file ``identity`` describes."""
    try:
        now = FileIdentity.of(os.stat(path))
    except OSError:
        now = None
    if now != identity:
        raise BadInput(
            path, "changed while it was being imported (replaced or written to); nothing written: import it again"
        )


def digest_file(path: Path, chunk: int = 1 << 20) -> tuple[str, int, FileIdentity]:
    """(sha256, size, identity) of a capture. The identity is taken on the descriptor
    that is hashed; the importer checks it again after the file is read
    (``check_unchanged``), so a file replaced in between is refused rather than stored
    under the old digest."""
    digest = hashlib.sha256()
    size = 0
    try:
        with open_regular(path) as f:  # a FIFO or device would never end
            identity = FileIdentity.of(os.fstat(f.fileno()))
            check_not_sparse(f.fileno(), path)  # a 200 GB hole is refused before it is hashed
            while block := f.read(chunk):
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None
    return digest.hexdigest(), size, identity


def file_size(path: Path) -> int:
    """The size of a capture, through the one door (regular files only, holes bounded), unread."""
    with open_regular(path) as f:
        check_not_sparse(f.fileno(), path)
        return os.fstat(f.fileno()).st_size


Digest = tuple[str, int, FileIdentity]  # (SHA-256, size, identity) of a file as it was read


class DigestWatch:
    """Digests of files taken while an importer reads them (``watching``): each read of a
    watched file through ``open_binary`` hashes its bytes, and one that reads the whole
    file from its first byte to its end leaves the file's digest here. So a capture is
    read once, not hashed in a pass of its own (docs/store.md)."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.wanted = {Path(p) for p in paths}
        self.found: dict[Path, Digest] = {}

    def hashing(self, path: Path, st: os.stat_result) -> "_Hashing | None":
        return _Hashing(self, Path(path), st) if Path(path) in self.wanted else None


class _Hashing:
    """One read of a watched file: its bytes hashed in order, the digest kept at its end."""

    def __init__(self, watch: DigestWatch, path: Path, st: os.stat_result) -> None:
        self._watch, self._path = watch, path
        self._identity = FileIdentity.of(st)
        self._digest = hashlib.sha256()
        self._size = 0

    def add(self, data: memoryview) -> None:
        if data.nbytes:
            self._digest.update(data)
            self._size += data.nbytes
        elif self._size == self._identity.size:  # the end, every byte of the file seen once
            self._watch.found[self._path] = (self._digest.hexdigest(), self._size, self._identity)


_WATCHING: ContextVar[DigestWatch | None] = ContextVar("wb_digest_watch", default=None)


@contextmanager
def watching(paths: Iterable[Path]) -> Iterator[DigestWatch]:
    """Hash ``paths`` as they are read (in this thread, through ``open_binary``)."""
    watch = DigestWatch(paths)
    token = _WATCHING.set(watch)
    try:
        yield watch
    finally:
        _WATCHING.reset(token)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def probe_file(path: Path) -> Probe:
    """Read the head of ``path`` for detection, decompressing gzip."""
    if path.is_dir():
        raise BadInput(path, "is a directory where a file was expected")
    with open_regular(path) as raw:
        try:
            magic = raw.read(2)
            raw.seek(0)
            if magic == GZIP_MAGIC:
                try:
                    with gzip.GzipFile(fileobj=raw) as gz:
                        head = gz.read(HEAD_BYTES)
                except (OSError, EOFError, zlib.error) as exc:
                    # A short file may be truncated right in the head: say so plainly.
                    raise BadInput(path, f"corrupt or truncated gzip ({exc})") from None
                return Probe(path, head, True)
            return Probe(path, raw.read(HEAD_BYTES), False)
        except OSError as exc:
            raise BadInput(path, f"cannot be read ({exc.strerror or exc})") from None


class CountingReader(io.RawIOBase):
    """A raw file wrapper that reports how many on-disk bytes were consumed (and, for a
    file ``watching`` asked for, hashes them on the way: ``_Hashing``)."""

    def __init__(
        self, raw: IO[bytes], on_progress: Callable[[int], None] | None, hashing: "_Hashing | None" = None
    ) -> None:
        self._raw = raw
        self._on_progress = on_progress
        self._hashing = hashing
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if self._hashing is not None:
            self._hashing.add(memoryview(buffer)[: n or 0])
        if n:
            self.consumed += n
            if self._on_progress is not None:
                self._on_progress(self.consumed)
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


class BoundedReader(io.RawIOBase):
    """Decompressed bytes of a gzip, refused past ``limit`` (a decompression bomb)."""

    def __init__(self, inner: IO[bytes], limit: int, path: Path, compressed: int) -> None:
        self._inner = inner
        self._limit = limit
        self._path = path
        self._compressed = compressed
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._inner.read1(len(view))  # what one decompression step gives, as GzipFile itself reads
        n = len(data)
        view[:n] = data
        self.produced += n
        if self.produced > self._limit:
            raise exceeded(
                self._path,
                f"gzip of {size_text(self._compressed)} decompresses to more than {size_text(self._limit)}, over",
                f"{DECOMPRESSED_RATIO}x the compressed size (at least {size_text(DECOMPRESSED_FLOOR)}, at most "
                f"{size_text(DECOMPRESSED_ABSOLUTE)})",
            )
        return n

    def close(self) -> None:
        self._inner.close()
        super().close()


def open_binary(path: Path, on_progress: Callable[[int], None] | None = None) -> IO[bytes]:
    """Open ``path`` for streaming, transparently decompressing gzip.

    Only regular files are opened; a gzip may not decompress to more than
    :func:`workbench.limits.decompressed_cap` of its size (``LimitExceeded`` from
    ``read``). Decompression errors surface from ``read`` as ``OSError``/``EOFError``/
    ``zlib.error``; use :data:`READ_ERRORS` to turn them into :class:`BadInput`.
    """
    raw = open_regular(path)
    st = os.fstat(raw.fileno())
    compressed = st.st_size
    watch = _WATCHING.get()
    hashing = watch.hashing(path, st) if watch is not None else None
    counted = io.BufferedReader(CountingReader(raw, on_progress, hashing), buffer_size=1 << 20)
    if counted.peek(2)[:2] == GZIP_MAGIC:
        gz = gzip.GzipFile(fileobj=counted, mode="rb")
        bounded = BoundedReader(gz, decompressed_cap(compressed), path, compressed)  # type: ignore[arg-type]
        return io.BufferedReader(bounded)
    return counted


# Exceptions a streaming read of a (possibly gzip) file raises on damaged input.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)


def read_bounded(path: Path, limit: int, too_big: str) -> bytes:
    """The whole (decompressed) content of a file that is expected to be small.

    ``too_big`` is the message when it holds more than ``limit`` bytes.
    """
    parts: list[bytes] = []
    total = 0
    try:
        with open_binary(path) as stream:
            # In pieces: read(limit) would allocate the whole limit up front.
            while total <= limit and (block := stream.read(min(1 << 24, limit + 1 - total))):
                parts.append(block)
                total += len(block)
    except READ_ERRORS as exc:
        raise BadInput(path, f"cannot be read ({exc})") from None
    if total > limit:
        raise BadInput(path, too_big)
    return b"".join(parts)
