"""xshare's state folder and everything in it are the user's alone, whatever the umask: folders 0700,
files 0600. The hook's log names sessions, the live state names transcripts, the worker's socket takes
requests: none of it is for other accounts on the machine.

A state folder found open to others (made by an earlier xshare under umask 022, or by hand) is
tightened once, with everything in it that is ours; after that one stat per write says it is still
closed. Only what the user owns is ever changed, and nothing outside the state folder. Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path

from xshare.state.paths import home, state_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing: the status line imports this module
if TYPE_CHECKING:  # annotations only
    from collections.abc import Callable, Iterator
    from typing import BinaryIO

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = 0o077  # group and other bits: never set on anything of ours
# why xshare cannot keep its state, as the status line and the CLI say it
NO_HOME = "no home folder for xshare's state (HOME unset, no passwd entry): set XSHARE_HOME"
NOT_A_FOLDER = "xshare's state folder is a file or a dangling symlink (see XSHARE_HOME)"
READ_ONLY = "xshare's state folder is read-only"
_POSIX = hasattr(os, "getuid")  # Windows has no mode bits to tighten (its folders' ACLs are per user)


def _ours(found: os.stat_result) -> bool:
    return _POSIX and found.st_uid == os.getuid()


def inside_state(path: Path) -> bool:
    """True for a path in the state folder (as written, before any symlink is followed)."""
    try:
        state = os.path.abspath(state_dir())
    except OSError:
        return False
    return os.path.commonpath([state, os.path.abspath(path)]) == state


def private_folder(folder: Path) -> Path:
    """Create `folder` (in the state folder) and the folders between, each 0700, tightening the state
    folder first if it is open to others; returns `folder`. Raises OSError when it cannot exist (the
    state folder is a file, a dangling symlink, on a read-only disk, not ours)."""
    state = state_dir()
    _make(state)
    _tighten_once(state)
    if not inside_state(folder):  # not in the state folder after all: a folder like any other
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    current = state
    relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(state))
    for part in Path(relative).parts if relative != os.curdir else ():
        current = current / part
        _make(current)
    return folder


def _make(folder: Path) -> None:
    try:
        os.mkdir(folder, FOLDER_MODE)
    except FileExistsError:
        if not folder.is_dir():  # a file, or a dangling symlink: never replaced, never followed
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder)) from None
        return
    except FileNotFoundError:  # a missing parent outside the state folder (~/.local/state): made as usual
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(folder, FOLDER_MODE)
    with contextlib.suppress(OSError):  # new, so ours: a umask such as 0o277 could have taken the owner's bits
        os.chmod(folder, FOLDER_MODE)


def _tighten_once(state: Path) -> None:
    """An open state folder is the sign of an earlier version (or a loose umask): close it and
    everything in it. Never the home folder itself (XSHARE_HOME=~ would otherwise close the home)."""
    found = os.stat(state)
    if found.st_mode & _OTHERS == 0 or not _ours(found) or os.path.abspath(state) == str(home()):
        return
    with contextlib.suppress(OSError):
        os.chmod(state, FOLDER_MODE)
    for folder, folders, files in os.walk(state):  # never follows symlinks
        for name in folders + files:
            _tighten(Path(folder, name))


def _tighten(path: Path) -> None:
    """Take group and other bits off a folder or regular file we own (a symlink is left as it is)."""
    with contextlib.suppress(OSError):
        found = os.lstat(path)
        kind_ok = stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode)
        if kind_ok and _ours(found) and found.st_mode & _OTHERS:
            os.chmod(path, stat.S_IMODE(found.st_mode) & ~_OTHERS)


def open_private(path: Path, flags: int) -> int:
    """os.open, creating the file 0600 and its folders; in the state folder the folders are 0700 and an
    existing file of ours that is open to others (an earlier version's) is closed first."""
    inside = inside_state(path)
    if inside:
        private_folder(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_BINARY", 0), FILE_MODE)
    if not inside:
        return fd
    with contextlib.suppress(OSError):
        found = os.fstat(fd)
        if found.st_mode & _OTHERS and _ours(found) and stat.S_ISREG(found.st_mode):
            os.fchmod(fd, stat.S_IMODE(found.st_mode) & ~_OTHERS)
    return fd


def append_text(path: Path, text: str, limit: int | None = None) -> None:
    """Append to a private log (the hook's), started over once it holds more than `limit` bytes; never
    raises (a log that cannot be written has no one to tell)."""
    with contextlib.suppress(OSError):
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            if limit is not None and os.fstat(fd).st_size > limit:
                handle.truncate(0)
            handle.write(text)


def writable() -> str | None:
    """None when xshare can keep its state, else why not, in a few words the status line can show."""
    try:
        state = state_dir()
    except OSError:
        return NO_HOME
    if os.path.lexists(state) and not state.is_dir():
        return NOT_A_FOLDER
    probe = next((folder for folder in (state, *state.parents) if folder.is_dir()), None)
    if probe is None or not os.access(probe, os.W_OK | os.X_OK):
        return READ_ONLY
    return None


@contextlib.contextmanager
def state_for_this_run(needed: bool = False) -> Iterator[bool]:
    """A command run with no home folder and no $XSHARE_HOME (cron, `docker --user`) still measures: its
    state (counts, history, caches) goes to a throwaway folder, removed after, and stderr says so once.
    Yields False (said on stderr) when the command's output itself would go there (`needed`)."""
    why = writable()
    if why in (NO_HOME, NOT_A_FOLDER):  # nothing to read there either (a read-only one still has its counts)
        if needed:
            print(f"xshare: {why}, or give --output", file=sys.stderr)
            yield False
            return
        import tempfile  # the status line imports this module: tempfile only for a throwaway folder

        with tempfile.TemporaryDirectory(prefix="xshare-state-") as scratch:
            print(f"xshare: {why}; nothing is remembered after this run", file=sys.stderr)
            os.environ["XSHARE_HOME"] = scratch
            try:
                yield True
            finally:
                os.environ.pop("XSHARE_HOME", None)
        return
    yield True


# commands whose state is only a cache: with no state folder they measure with a throwaway one (the hook
# does nothing without one; mark and statusline keep what they write there, so they say it cannot)
_MEASURING = ("report", "session", "slash", "collect", "classify", "html")


def with_state(command: str, has_output: bool, run: Callable[[], int]) -> int:
    """Run a CLI command; a measuring one with a throwaway state folder where there is none."""
    if command not in _MEASURING:
        return run()
    with state_for_this_run(needed=command == "html" and not has_output) as usable:  # pages go there
        return run() if usable else 1


def open_regular(path: Path) -> BinaryIO:
    """The file opened for reading, if it is a regular file; anything else is refused (an OSError):
    opening or reading a FIFO waits for a writer that may never come, and a device (/dev/zero) never ends.
    O_NONBLOCK keeps the open itself from waiting; it changes nothing for a regular file. Here, beside the
    state folder's other guards, so the status line can use it without importing the store."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The whole of a regular file (see open_regular)."""
    with open_regular(path) as handle:
        return handle.read()
