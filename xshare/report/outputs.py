"""Files the user names for xshare to write (`--rows`, `html -o`): what it refuses to put there.

`store.atomic_write` already refuses to replace anything but a regular file and writes through a
symlink to the file it names; here are the checks that need to know what the user's other files are:
a folder that does not exist (xshare creates none for a path it was given), a Claude Code transcript
(a `.jsonl` under a projects folder, or one whose first line is a transcript row) and a database.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from xshare.agents.claude_code import transcript as claude
from xshare.state.store import loads

FIRST_LINE = 64 << 10  # enough for any first row worth recognising; a longer line is not ours to guess at
SQLITE_MAGIC = b"SQLite format 3\x00"
# keys of Claude Code's rows (claude-code.md §6.3): a transcript row has one of them, a rows-file row none
TRANSCRIPT_KEYS = frozenset({"sessionId", "uuid", "parentUuid", "leafUuid", "messageId", "requestId"})


def refusal(path: Path, claude_roots: list[str] | None = None) -> str | None:
    """Why xshare must not write to `path`, or None when it may (the file is absent or replaceable)."""
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
        return "it is a symlink to no regular file" if os.path.islink(path) else _transcript_place(real, claude_roots)
    if not stat.S_ISREG(found.st_mode):
        return "it is not a regular file (a folder, device, FIFO or socket)"
    return _transcript_place(real, claude_roots) or _contents(real)


def _transcript_place(real: Path, claude_roots: list[str] | None) -> str | None:
    """A `.jsonl` inside a projects folder would be read as a transcript, if it is not one already."""
    if real.suffix != ".jsonl":
        return None
    roots = claude.default_roots() + [claude.resolve_root(root) for root in claude_roots or []]
    for root in roots:
        if real.is_relative_to(os.path.realpath(root)):
            return f"it is inside Claude Code's projects folder {root}, where transcripts live"
    return None


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
