"""How xshare writes its own files: atomically, and under a lock when processes share them."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from xshare.paths import state_dir

__all__ = ["atomic_write", "dumps", "loads", "locked", "read_json", "state_dir"]
_SURROGATE = re.compile("[\ud800-\udfff]")


def _dumps_text(obj: object) -> bytes:
    """A lone surrogate (transcripts hold them, e.g. in a tool call's input) is not UTF-8: it is written
    as U+FFFD, the character the tokenizer counts it as."""
    return _SURROGATE.sub("\ufffd", json.dumps(obj, separators=(",", ":"), ensure_ascii=False)).encode("utf-8")


try:
    import orjson

    def dumps(obj: object) -> bytes:
        try:
            return orjson.dumps(obj)
        except TypeError:  # "str is not valid UTF-8: surrogates not allowed"
            return _dumps_text(obj)

    loads = orjson.loads
except ImportError:  # the plugin runs with nothing but python3
    dumps = _dumps_text
    loads = json.loads


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder and rename, so readers never see half a file."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> object | None:
    """The parsed file, or None when it is missing or unreadable (a cache is never worth a crash)."""
    try:
        return loads(path.read_bytes())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def locked(path: Path, blocking: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path` (created if needed); yields False if non-blocking and busy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        acquired = _lock(handle, blocking)
        try:
            yield acquired
        finally:
            if acquired:
                _unlock(handle)


if os.name == "nt":
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
