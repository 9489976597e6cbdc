"""A file is one file, however it is reached: through a symlinked folder (~/.config/claude -> ~/.claude),
a symlink or a hard link to it, `..` in a path, a root named twice or nested in another.

Every agent's discovery keeps the first spelling it meets of each file and passes over the others, so a
session is measured once. Files are told apart by (device, inode); where that cannot be had (the path
cannot be stat'ed, or the file system reports no inode numbers), by the path with every link resolved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

Item = TypeVar("Item")
Identity = tuple


def examine(path: str | os.PathLike) -> tuple[Identity, os.stat_result | None]:
    """Which file the path names, and its status (None when it cannot be stat'ed: missing, a broken link)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path)), None
    if status.st_ino == 0:  # some Windows file systems give no file index
        return ("path", os.path.realpath(path)), status
    return ("inode", status.st_dev, status.st_ino), status


def identity(path: str | os.PathLike) -> Identity:
    return examine(path)[0]


def unique(items: Iterable[Item], path_of: Callable[[Any], str | os.PathLike] = os.fspath) -> list[Item]:
    """The items in their order, each file only at its first spelling."""
    seen: set[Identity] = set()
    kept = []
    for item in items:
        found = identity(path_of(item))
        if found not in seen:
            seen.add(found)
            kept.append(item)
    return kept


def unique_files(paths: Iterable[Path]) -> list[Path]:
    """The paths that name a file (following symlinks), each file once, at its first spelling."""
    return unique(path for path in paths if path.is_file())
