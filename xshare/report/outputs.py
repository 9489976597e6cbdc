"""Files the user names for xshare to write (`--rows`, `html -o`): what it refuses to put there.

`store.atomic_write` already refuses to replace anything but a regular file and writes through a
symlink to the file it names; here are the checks that need to know what the user's other files are:
a folder that does not exist (xshare creates none for a path it was given), a place among an agent's
records (its adapter's `holds`: a `.jsonl` under Claude Code's projects folder), a file whose first line is a
Claude Code transcript row, and a database.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from xshare.agents.protocol import Homes
from xshare.sessions import registry
from xshare.state.store import loads

FIRST_LINE = 64 << 10  # enough for any first row worth recognising; a longer line is not ours to guess at
SQLITE_MAGIC = b"SQLite format 3\x00"
# keys of Claude Code's rows (claude-code.md §6.3): a transcript row has one of them, a rows-file row none
TRANSCRIPT_KEYS = frozenset({"sessionId", "uuid", "parentUuid", "leafUuid", "messageId", "requestId"})


def refusal(path: Path, homes: Homes | None = None) -> str | None:
    """Why xshare must not write to `path`, or None when it may (the file is absent or replaceable); `homes`:
    the places named for each agent (its default ones are always refused)."""
    real = Path(os.path.realpath(path))
    if not real.parent.is_dir():
        return f"its folder {real.parent} does not exist"
    try:
        found = os.stat(real)
    except FileNotFoundError:
        found = None
    except OSError as error:
        return f"it cannot be examined ({error.strerror or error})"
    if found is None:
        return "it is a symlink to no regular file" if os.path.islink(path) else _records_place(real, homes or {})
    if not stat.S_ISREG(found.st_mode):
        return "it is not a regular file (a folder, device, FIFO or socket)"
    return _records_place(real, homes or {}) or _contents(real)


def _records_place(real: Path, homes: Homes) -> str | None:
    """A file written among an agent's records would be read as one of them (or spoil one)."""
    return next((why for adapter in registry.REGISTRY if (why := adapter.holds(real, homes.get(adapter.agent)))), None)


def _contents(real: Path) -> str | None:
    try:
        with open(real, "rb") as handle:
            head = handle.read(FIRST_LINE)
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    if head.startswith(SQLITE_MAGIC):
        return "it is an SQLite database"
    return "it holds a Claude Code transcript" if looks_like_transcript(head.split(b"\n", 1)[0]) else None


def looks_like_transcript(line: bytes) -> bool:
    """A Claude Code transcript row: a `type` and one of its envelope keys, and no xshare row's `agent`."""
    try:
        row = loads(line)
    except (ValueError, RecursionError):
        return False
    return (isinstance(row, dict) and isinstance(row.get("type"), str) and "agent" not in row
            and not TRANSCRIPT_KEYS.isdisjoint(row))
