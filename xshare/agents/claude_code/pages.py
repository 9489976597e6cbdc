"""Claude Code's sessions as their pages take them (agents/protocol.py `Found`): a transcript with the
subagents' files beside it (their pages go beside its page), the session whose subagent it is, and the files
its page is built from (the page is kept while they are unchanged); the most recently active session."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import cast

from xshare.agents.claude_code import files as claude
from xshare.agents.claude_code.files import TranscriptFile
from xshare.agents.protocol import Found
from xshare.measure.row import SessionRow
from xshare.measure.timestamps import stamp


def children_by_parent(files: list[TranscriptFile]) -> dict[str, list[TranscriptFile]]:
    """The subagents' files by their session's id: one pass, not one per session."""
    children: dict[str, list[TranscriptFile]] = {}
    for other in files:
        if other.parent_id:
            children.setdefault(other.parent_id, []).append(other)
    return children


def session_found(file: TranscriptFile, row: SessionRow, files: list[TranscriptFile],
                  children: list[TranscriptFile], problems: Counter | None = None) -> Found:
    """A transcript's session with its family among `files` (its subagents', its parent's)."""
    parent = None
    if file.parent_id:
        held = next((other for other in files if other.session_id == file.parent_id), None)
        source = held.source if held else claude.INTERACTIVE
        parent_row = cast(SessionRow, {"id": file.parent_id, "agent": claude.AGENT, "source": source})  # a link's
        parent = Found(claude.AGENT, parent_row, path=held.path if held else None)
    kids = [Found(claude.AGENT, cast(SessionRow, {"id": child.session_id}), path=child.path,  # read by `detail`
                  sources=[child.path]) for child in children]
    return Found(claude.AGENT, row, problems if problems is not None else Counter(), file.path, children=kids,
                 parent=parent, sources=[file.path, *(child.path for child in children)])


_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([0-9][0-9T:.+\-Z]{9,34})"')


def last_activity(path: Path, tail: int = 256 << 10) -> str | None:
    """The latest timestamp in a transcript's last lines: cheap, with no measuring."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - tail))
            data = handle.read(tail)  # no further: a file that never ends (a link to /proc/self/pagemap)
    except OSError:
        return None
    # compared in the stored form: offsets converted, junk and 9999 left out (they would always sort first)
    stamps = [found for match in _TIMESTAMP.findall(data) if (found := stamp(match.decode()))]
    return max(stamps) if stamps else None


def most_recent(files: list[TranscriptFile]) -> list[tuple[str, TranscriptFile]]:
    """Sessions by latest activity, newest first, each with it (a subagent's activity counts for its parent)."""
    by_id = {file.session_id: file for file in files if file.source == claude.INTERACTIVE}
    latest: dict[str, tuple[str, TranscriptFile]] = {}
    for file in files:
        owner = by_id.get(file.parent_id or "", file)
        when = last_activity(file.path) or ""
        if owner.session_id not in latest or when > latest[owner.session_id][0]:
            latest[owner.session_id] = (when, owner)
    return sorted(latest.values(), key=lambda item: item[0], reverse=True)
