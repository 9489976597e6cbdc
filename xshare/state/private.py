"""xshare's state folder and everything in it are the user's alone, whatever the umask: folders 0700,
files 0600. The hook's log names sessions, the live state names transcripts, the worker's socket takes
requests: none of it is for other accounts on the machine.

A state folder is used only if the user owns it and no other account can write it (a shared scratch
folder another account made first could hold links to the user's files): otherwise it is refused in one
line, as one that cannot be written is. A state folder of xshare's own found open to others (made by an
earlier xshare under umask 022) is tightened once, with everything in it that is ours; after that one
stat per write says it is still closed. A folder holding anything xshare did not make (XSHARE_HOME naming
a project, the home, /tmp) keeps its modes and its files theirs: only what xshare creates in it is private.
Inside the state folder no write follows a link (a planted `logs/hook.log -> ~/.bashrc`): a link or a file
of another account where xshare writes is refused. Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from pathlib import Path

from xshare.state.paths import BadStateFolder, home, state_dir

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
LINK_REFUSED = "a link inside xshare's state folder; left alone"
NOT_OURS = "xshare's state folder belongs to another account or others can write it (see XSHARE_HOME)"
# the names xshare gives what it keeps in its state folder: a folder holding only these is xshare's own
_OWN_NAMES = frozenset({"cache", "counts", "hermes", "history", "html", "live", "logs", "machine-id",
                        "statusline-install.json", "vocab"})
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
    folder first if it is xshare's and open to others; returns `folder`. Raises OSError when it cannot
    exist (the state folder is a file, a dangling symlink, on a read-only disk, not the user's alone) or
    a folder on the way is a link."""
    state = state_dir()
    _make(state)
    _tighten_once(state)
    if _foreign(state):
        raise PermissionError(errno.EPERM, NOT_OURS, str(state))
    if not inside_state(folder):  # not in the state folder after all: a folder like any other
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    current = state
    relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(state))
    for part in Path(relative).parts if relative != os.curdir else ():
        current = current / part
        _make(current, inside=True)
    return folder


def _foreign(state: Path) -> bool:
    """Another account owns the state folder (or the link naming it), or others can write it."""
    if not _POSIX:
        return False
    link = os.lstat(state)
    if stat.S_ISLNK(link.st_mode) and link.st_uid not in (os.getuid(), 0):
        return True
    found = os.stat(state)
    return found.st_uid != os.getuid() or bool(found.st_mode & 0o022)


def _xshares_own(state: Path, found: os.stat_result) -> bool:
    """The folder holds nothing but what xshare keeps there (and its unfinished temporary files), and no
    sticky bit says it is a shared scratch folder: xshare made it, so its modes are xshare's to set."""
    if found.st_mode & stat.S_ISVTX:
        return False
    return all(name in _OWN_NAMES or name.startswith(".") and any(name.startswith(f".{own}.") for own in _OWN_NAMES)
               for name in os.listdir(state))


def _make(folder: Path, inside: bool = False) -> None:
    """Make the folder 0700; one that exists is used as it is, unless `inside` the state folder it is a
    link (someone else's folder, where xshare's files would land)."""
    try:
        os.mkdir(folder, FOLDER_MODE)
    except FileExistsError:
        if inside and os.path.islink(folder):
            raise OSError(errno.ELOOP, LINK_REFUSED, str(folder)) from None
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
    if not _xshares_own(state, found):  # a folder the user made for more than xshare: theirs, as it is
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
        # a hard link's other name is outside the state folder: its file is not ours to change
        kind_ok = stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode) and found.st_nlink == 1
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
    no_link = getattr(os, "O_NOFOLLOW", 0) if inside else 0
    try:
        fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_BINARY", 0) | no_link, FILE_MODE)
    except OSError as error:
        if inside and error.errno == errno.ELOOP:  # said plainly: "too many levels of symbolic links" is not
            raise OSError(errno.ELOOP, LINK_REFUSED, str(path)) from None
        raise
    if not inside:
        return fd
    try:
        found = os.fstat(fd)
        _refuse_foreign_file(found, path)
        if found.st_mode & _OTHERS and stat.S_ISREG(found.st_mode):
            with contextlib.suppress(OSError):
                os.fchmod(fd, stat.S_IMODE(found.st_mode) & ~_OTHERS)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse_foreign_file(found: os.stat_result, path: Path) -> None:
    """A file in the state folder xshare would write in place must be the user's and nowhere else: another
    account's file, or a hard link to a file elsewhere (a planted `hook.log`), is refused (an OSError)."""
    if _POSIX and (found.st_uid != os.getuid() or stat.S_ISREG(found.st_mode) and found.st_nlink > 1):
        raise PermissionError(errno.EPERM, "not xshare's own file (another account's, or a hard link); "
                              "left alone", str(path))


def append_text(path: Path, text: str, limit: int | None = None) -> None:
    """Append to a private log (the hook's), started over once it holds more than `limit` bytes; never
    raises (a log that cannot be written has no one to tell)."""
    with contextlib.suppress(OSError):
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            if limit is not None and os.fstat(fd).st_size > limit:
                handle.truncate(0)
            handle.write(text)


def _tightened_later(state: Path) -> bool:
    """An earlier xshare's open state folder, which its first write closes (see _tighten_once)."""
    found = os.stat(state)
    return _ours(found) and os.path.abspath(state) != str(home()) and _xshares_own(state, found)


def writable() -> str | None:
    """None when xshare can keep its state, else why not, in a few words the status line can show."""
    try:
        state = state_dir()
    except BadStateFolder as error:
        return error.strerror
    except OSError:
        return NO_HOME
    if os.path.lexists(state) and not state.is_dir():
        return NOT_A_FOLDER
    if state.is_dir() and _foreign(state) and not _tightened_later(state):
        return NOT_OURS
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
    if why is not None and why != READ_ONLY:  # nothing to read there (a read-only one still has its counts)
        if needed:
            print(f"xshare: {why}, or give --output", file=sys.stderr)
            yield False
            return
        import tempfile  # the status line imports this module: tempfile only for a throwaway folder

        given = os.environ.get("XSHARE_HOME")
        with tempfile.TemporaryDirectory(prefix="xshare-state-") as scratch:
            print(f"xshare: {why}; nothing is remembered after this run", file=sys.stderr)
            os.environ["XSHARE_HOME"] = scratch
            try:
                yield True
            finally:
                if given is None:
                    os.environ.pop("XSHARE_HOME", None)
                else:
                    os.environ["XSHARE_HOME"] = given
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
