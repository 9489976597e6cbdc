"""Opening an agent's SQLite database (Hermes's state.db, OpenCode's opencode.db, OpenClaw's openclaw-agent.sqlite)
without writing to it, or beside it; reading one again when a writer changed it under the read.

Hermes's own SessionDB migrates a database it opens, and a plain sqlite3 connection can create one,
checkpoint its WAL into it or leave sidecar files behind; this opens the user's file only in ways that
write nothing, and falls back to a private copy where it cannot (docs: hermes.md §1.1).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 400  # Hermes's writes take milliseconds; a lock held longer is reported, not waited out
READ_TRIES = 3
LOCKED = "is locked by another program"  # a locked database's problem words, which `xshare html` looks for
Found = TypeVar("Found")


class Unreadable(Exception):
    """A database that cannot be measured; the message is the stderr line's kind."""


def _uri(path: Path, query: str) -> str:
    return f"file:{urllib.parse.quote(str(path))}?{query}"


def _identity(path: Path) -> tuple | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


@contextlib.contextmanager
def open_database(
    path: Path, problems: Counter, careful: bool = False, label: str = "Hermes"
) -> Iterator[tuple[sqlite3.Connection, Callable[[], bool]]]:
    """A read-only connection to a Hermes database (or OpenCode's: `label` names it in messages), and a
    check that what was read is still current.

    Never a writable connection to the user's file, and no new files beside it: `mode=ro` on a WAL
    database with no `-wal`/`-shm` creates both and leaves them behind, so the way in depends on what is
    there (SQLite 3.40 behaviour, checked):
      * WAL with no `-wal`, or an empty one: every commit is in the main file, so `immutable=1` reads it
        without creating, locking or touching anything (not even the `-shm`); the check says whether a
        writer moved the file meanwhile, and the caller then reads again `careful`ly;
      * a rollback-journal database, or WAL with a `-wal` holding commits and its `-shm` (a live writer,
        or one that died): `mode=ro`, which creates nothing and sees every committed row;
      * a `-wal` without its `-shm` (a copied database), or `mode=ro` refused (a read-only folder):
        a private copy of the files in a temporary folder, said so on stderr.
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError as error:
        raise Unreadable(f"{label} database {path} could not be opened ({error.strerror or error})") from error
    if not header.startswith(SQLITE_MAGIC):
        raise Unreadable(f"{label} database {path} is not an SQLite database; skipped")
    wal_mode = len(header) > 19 and header[18] == 2
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    wal_state = _identity(wal)
    before = (_identity(path), wal_state)

    def unchanged() -> bool:
        return (_identity(path), _identity(wal)) == before

    if wal_mode and (wal_state is None or (wal_state[1] == 0 and not careful)):
        connection = sqlite3.connect(_uri(path, "immutable=1"), uri=True, isolation_level=None)
        try:
            yield connection, unchanged
        finally:
            connection.close()
        return
    if not wal_mode or shm.exists():
        connection = sqlite3.connect(_uri(path, "mode=ro"), uri=True, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as error:
            connection.close()
            if is_locked(error) or not isinstance(error, sqlite3.OperationalError):
                raise
            # read-only folder, unreadable -shm, hot journal: read a copy instead (below)
        else:
            try:
                yield connection, lambda: True  # mode=ro reads a consistent snapshot by itself
            finally:
                connection.close()
            return
    with tempfile.TemporaryDirectory(prefix="xshare-hermes-") as private:
        copy = Path(private) / "state.db"
        shutil.copyfile(path, copy)
        for suffix in ("-wal", "-journal"):
            if Path(f"{path}{suffix}").exists():
                shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
        problems[f"{label} databases read from a private copy (a read-only folder, or a -wal without its -shm)"] += 1
        # our own copy in our own folder: opened normally so SQLite can replay its WAL or hot journal
        connection = sqlite3.connect(copy, isolation_level=None)
        try:
            yield connection, lambda: True
        finally:
            connection.close()


def read_with_retries(path: Path, label: str, problems: Counter,
                      read: Callable[[sqlite3.Connection, Counter], list[Found]]) -> list[Found]:
    """What `read` finds in one database (OpenCode's, OpenClaw's: `label`), opened by open_database; problems
    are counted, never raised. When a writer moved the file under a read, or a read failed, it is read again,
    `careful`ly; a lock or an error that lasts is one line on stderr. Only the kept read's problems are
    counted, so a read done again does not count what it met twice."""
    for attempt in range(READ_TRIES):
        last = attempt == READ_TRIES - 1
        trouble: Counter = Counter()
        try:
            with open_database(path, trouble, careful=attempt > 0, label=label) as (connection, unchanged):
                found = read(connection, trouble)
                if unchanged() or last:
                    problems.update(trouble)
                    return found
        except Unreadable as error:
            problems.update(trouble)
            problems[str(error)] += 1
            return []
        except sqlite3.Error as error:
            if last or not is_locked(error) and attempt > 0:
                problems.update(trouble)
                problems[f"{label} database {path} could not be read ({error}); skipped"] += 1
                return []
        except OSError as error:
            problems[f"{label} database {path} could not be read ({error.strerror or error}); skipped"] += 1
            return []
    return []


def is_locked(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def table_columns(connection: sqlite3.Connection, table: str) -> set[str]:
    """The names of a table's columns (none when it has no such table)."""
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def tables(path: Path) -> set[str]:
    """The tables a SQLite file holds, read without writing or creating anything (immutable: its schema
    only, to tell whose database it is); empty when it is not a readable database."""
    try:
        with open(path, "rb") as handle:
            if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                return set()
        connection = sqlite3.connect(_uri(Path(path), "mode=ro&immutable=1"), uri=True)
        try:
            return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            connection.close()
    except (OSError, sqlite3.Error):
        return set()
