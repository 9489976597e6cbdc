"""How xshare writes its own files: atomically, and under a lock when processes share them."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from xshare.state.paths import state_dir
from xshare.state.private import LINK_REFUSED, inside_state, open_private, open_regular, private_folder, read_regular

__all__ = ["LOADS_VIEWS", "atomic_write", "dumps", "loads", "locked", "locked_file", "open_regular", "read_json",
           "read_regular", "state_dir"]
_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps_text(obj: object) -> bytes:
    """A lone surrogate (transcripts hold them, e.g. in a tool call's input) is not UTF-8: it is written
    as U+FFFD, the character the tokenizer counts it as."""
    return _SURROGATE.sub("\ufffd", json.dumps(obj, separators=(",", ":"), ensure_ascii=False)).encode("utf-8")


TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (the hot paths write state); checkers see True
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

loads: Callable[..., Any]  # orjson's (bytes, str or a memoryview) or json's (bytes or str)
try:
    import orjson

    def dumps(obj: object) -> bytes:
        try:
            return orjson.dumps(obj)
        except TypeError:  # "str is not valid UTF-8: surrogates not allowed"
            return _dumps_text(obj)

    loads = orjson.loads
    LOADS_VIEWS = True  # loads reads a memoryview as it is: a line need not be copied out of its chunk
except ImportError:  # the plugin runs with nothing but python3
    dumps = _dumps_text
    loads = json.loads
    LOADS_VIEWS = False  # json.loads takes str, bytes or bytearray only


def atomic_write(path: Path, data: bytes | Iterable[bytes], make_folders: bool = True) -> None:
    """Write via a temporary file in the same folder and rename, so readers never see half a file.
    `data` may come in pieces (an iterable of bytes), so a large file is never whole in memory.

    Only a regular file is ever replaced: a device, FIFO, socket or folder at the path is refused (an
    OSError), never swapped for a file. A symlink the user named is written through to the regular file it
    names, which keeps the link (a dangling one is refused); in xshare's state folder a link is refused, as
    someone else may have planted it. The file keeps its mode (and, where allowed, its owner); a new one is
    private (0600), and so is any file in xshare's state folder, with its folders (0700).
    `make_folders=False` (a path the user gave) refuses a missing folder."""
    import tempfile  # the hook imports this module on every call: tempfile only once it writes

    private = inside_state(path)
    if private and os.path.islink(path):
        raise OSError(errno.ELOOP, LINK_REFUSED, str(path))
    target = _regular_target(path)
    if make_folders and private and inside_state(target):
        private_folder(target.parent)
    elif make_folders:
        target.parent.mkdir(parents=True, exist_ok=True)
    elif not target.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "its folder does not exist", str(target.parent))
    existing = _regular_stat(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
            else:
                handle.writelines(data)
        if existing is not None:
            _keep_mode(tmp, existing, private)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _regular_target(path: Path) -> Path:
    """The path itself, or for a symlink the file it names (which must be a regular file)."""
    if not os.path.islink(path):
        return Path(path)
    target = Path(os.path.realpath(path))
    if not target.is_file():
        raise OSError(errno.EINVAL, "a symlink to something that is not a regular file", str(path))
    return target


def _regular_stat(path: Path) -> os.stat_result | None:
    """What is at the path now: None for nothing; anything but a regular file is refused."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(found.st_mode):
        raise OSError(errno.EEXIST, "not a regular file (a folder, device, FIFO or socket); left alone", str(path))
    return found


def _keep_mode(tmp: str, before: os.stat_result, private: bool) -> None:
    os.chmod(tmp, stat.S_IMODE(before.st_mode) & ~(0o077 if private else 0))  # an earlier version's 0644
    if private:  # a file of xshare's own: another account's in its place is replaced by the user's
        return
    if hasattr(os, "chown") and (before.st_uid, before.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # only root may give a file away; others keep it as their own
            os.chown(tmp, before.st_uid, before.st_gid)


def read_json(path: Path) -> object | None:
    """The parsed file, or None when it is missing or unreadable (a cache is never worth a crash)."""
    try:
        return loads(read_regular(path))
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def locked(path: Path, blocking: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (created if needed, private in the state folder); yields False if
    non-blocking and busy."""
    if inside_state(path):
        handle = os.fdopen(open_private(path, os.O_RDWR | os.O_APPEND), "a+b")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+b")  # noqa: SIM115  (closed by the with below)
    with handle:
        acquired = _lock(handle, blocking)
        try:
            yield acquired
        finally:
            if acquired:
                _unlock(handle)


@contextlib.contextmanager
def locked_file(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file at `path` itself (a file the user named, which xshare replaces
    atomically: no lock file beside it), created empty and private if missing. A lock taken on a file
    another holder has since replaced is dropped and taken again on the file now at the path."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0),
                     0o600)
        handle = os.fdopen(fd, "r+b")
        with handle:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            _lock(handle, True)
            try:
                now = os.stat(path)
                if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    yield
                    return
            finally:
                _unlock(handle)


if sys.platform == "win32":  # os.name == "nt", said so the type checker skips it elsewhere
    import msvcrt

    def _lock(handle, blocking: bool) -> bool:
        mode = msvcrt.LK_LOCK if blocking else msvcrt.LK_NBLCK
        try:
            msvcrt.locking(handle.fileno(), mode, 1)
            return True
        except OSError:
            return False

    def _unlock(handle) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(handle, blocking: bool) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            return True
        except OSError:
            return False

    def _unlock(handle) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
