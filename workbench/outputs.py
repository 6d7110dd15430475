"""Files wb writes for the user (a bundle, an export): whole or not at all; and names for
the folders it makes (a bisection's workspaces) that no two revisions share.

The data goes into a temporary file beside the target, is flushed to the disk, and only
then renamed over the target, so a full disk, a quota or a kill mid-write leaves the target
as it was (absent, or the old file) and no partial file behind. A failure is one
:class:`~workbench.errors.WriteFailed` naming the file and the cause.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from workbench.errors import EXIT_USAGE, WriteFailed


def write_atomically(path: str | Path, data: bytes) -> Path:
    """``data`` into ``path`` (mode 0666 less the umask), all of it or nothing."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise WriteFailed(path, f"cannot be written: the directory {parent} does not exist", exit_code=EXIT_USAGE)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # a new file (or a dangling link, replaced as one)
    if mode is not None and not stat.S_ISREG(mode):  # a rename would replace a device (/dev/full) or a FIFO
        raise WriteFailed(path, "is not a regular file; wb writes only regular files", exit_code=EXIT_USAGE)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:  # one line about the target's path, not the temporary file's
        raise WriteFailed(path, f"cannot be written ({exc.strerror or type(exc).__name__})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # a full disk can surface only here (delayed allocation)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; what wb writes is for sharing
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WriteFailed(
            path, f"cannot be written ({exc.strerror or type(exc).__name__}); nothing was written"
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def identity_name(text: str, readable: int = 40) -> str:
    """A file or folder name for ``text`` (a revision, a version, a plan's name): its first
    ``readable`` characters made safe for a path, then a digest of the exact text, so two
    texts that read alike once made safe (``1.0+x`` and ``1.0_x``) never share a name."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in text[:readable])
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{safe.strip('.') or 'x'}-{digest}"
