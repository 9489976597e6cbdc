"""Reading and writing the user's settings.json without losing anything of theirs.

- A symlink (dotfile managers make them) is followed: the target is edited, in its own folder.
- Only a regular file is read (a FIFO would hang the command).
- A file or folder without write permission is refused before anything is written, judged by its
  permission bits as well, since root may write anything: read-only is the user's wish.
- The new text goes to a temporary file in the same folder, takes the original's mode and owner, and
  replaces the original atomically.
- The first backup is kept: an existing backup is never overwritten.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from pathlib import Path

BACKUP_SUFFIX = ".xshare-backup"


class SettingsError(Exception):
    """A reason not to touch the settings, worded for the user."""


def resolve(path: Path) -> Path:
    """The file to edit: a symlink's final target; refuse a dangling or looping link."""
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise SettingsError(f"{path} is a symlink xshare cannot follow ({why(error)}); fix it first, "
                            "nothing changed") from None
    return target


def read(path: Path) -> str | None:
    """The file's text, or None when there is none yet."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SettingsError(f"cannot read {path} ({why(error)}); nothing changed") from None
    if not stat.S_ISREG(info.st_mode):
        raise SettingsError(f"{path} is not a regular file; xshare will not touch it")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise SettingsError(f"{path} is not UTF-8 JSON; fix it first, xshare will not overwrite it") from None
    except OSError as error:
        raise SettingsError(f"cannot read {path} ({why(error)}); nothing changed") from None


def _read_only(path: Path, access: int) -> bool:
    mode = path.stat().st_mode
    return not os.access(path, access) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def check_writable(path: Path) -> None:
    """Refuse, before anything is written, when the file or its folder may not be changed."""
    if path.exists() and _read_only(path, os.W_OK):
        raise SettingsError(f"{path} is read-only; xshare will not change it (make it writable first); "
                            "nothing changed")
    folder = path.parent
    while not folder.exists() and folder.parent != folder:  # a fresh home: the folder is created
        folder = folder.parent
    if folder.is_dir() and _read_only(folder, os.W_OK | os.X_OK):
        raise SettingsError(f"{folder} is read-only, so {path.name} cannot be replaced safely; nothing changed")


def _first_backup(path: Path, data: bytes, mode: int) -> Path:
    """Copy the original beside it, never over an earlier backup (that one holds an older original)."""
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if backup.exists():
        if backup.is_file() and backup.read_bytes() == data:
            return backup
        backup = path.with_name(f"{path.name}{BACKUP_SUFFIX}-{time.strftime('%Y%m%d-%H%M%S')}")
    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(backup, mode)  # the umask may have narrowed it; settings can hold secrets, so never wider
    return backup


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write(path: Path, text: str, backup: bool = False) -> Path | None:
    """Replace `path` with `text` keeping its mode and owner; returns the backup made, if any."""
    info = path.stat() if path.exists() else None
    mode = stat.S_IMODE(info.st_mode) if info else _new_file_mode()
    path.parent.mkdir(parents=True, exist_ok=True)
    made = _first_backup(path, path.read_bytes(), mode) if backup and info else None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.xshare-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        if info and hasattr(os, "chown") and (info.st_uid, info.st_gid) != _owner(tmp):
            with contextlib.suppress(PermissionError):  # only root may give a file away
                os.chown(tmp, info.st_uid, info.st_gid)
        os.chmod(tmp, mode)  # after chown, which may clear set-id bits
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return made


def _owner(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def why(error: BaseException) -> str:
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
