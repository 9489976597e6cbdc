"""Files that resume another file's session, told apart by their first lines, so that a report reads each
after the file it copies and in the same process: the calls it copies are then known as that file's when it
reads them (agents/claude_code/copies.py `EarlierCalls`), not only once every file is read, which meant
reading it a second time.

A 1.0.x `--resume` writes a new file that starts with the history it resumes: its first call is the old
file's first call (the same request id), or its first rows name the old session (`sessionId`); a backup of
a file starts as the file does. Files tied by such an id are one family, read in the order of their first
call's time: the old file's call comes before its copy's. Only the order of reading depends on this: the
report still settles every call across every file and reads again a file this order decided otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from xshare.agents.claude_code import lines
from xshare.agents.claude_code.files import TranscriptFile

_FIRST, _MOST = 4096, 1 << 16  # bytes read first, and at most while no call has come (a long first prompt)
_SESSION = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_REQUEST = re.compile(rb'"requestId"\s*:\s*"([^"\\]{1,200})"')
_TIME = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{1,64})"')
_NO_CALL = "\uffff"  # sorts after every time: a file whose first call was not found is read last


def first_lines(path: Path) -> tuple[str, frozenset[bytes]]:
    """The time of the file's first call (its first row with a request id) and the ids that tie it to the
    files it may copy: the session ids its rows name up to that call, and the call's request id. Neither
    for a file that cannot be read; no time when its first 64 KB hold no call."""
    try:
        handle, status = lines.open_regular(path)
    except (OSError, lines.NotRegularFile):
        return _NO_CALL, frozenset()
    with handle:
        data = handle.read(min(_FIRST, status.st_size))
        while (at := data.find(b'"requestId"')) < 0 and len(data) < min(_MOST, status.st_size):
            more = handle.read(min(len(data), status.st_size - len(data)))
            if not more:
                break
            data += more
    ids = {b"s" + found for found in _SESSION.findall(data, 0, at if at >= 0 else len(data))}
    request = _REQUEST.search(data, at) if at >= 0 else None
    if request is None:
        return _NO_CALL, frozenset(ids)
    start, end = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at)
    time = _TIME.search(data, start, end if end >= 0 else len(data))
    ids.add(b"r" + request.group(1))
    return (time.group(1).decode("ascii", "replace") if time else _NO_CALL), frozenset(ids)


def families(files: Sequence[TranscriptFile], sizes: Sequence[int]) -> list[list[int]]:
    """The files (their indexes) in families, largest first: a session with its subagents' files, and the
    files tied to them by their first lines (`first_lines`), each family in the order of its files' first
    calls, so that a file is read after those it copies."""
    leader: dict[object, object] = {}

    def lead(item: object) -> object:
        while (up := leader.setdefault(item, item)) != item:
            leader[item] = leader.setdefault(up, up)  # halve the path to the family's leader
            item = up
        return item

    starts: list[str] = []
    for index, file in enumerate(files):
        start, ids = first_lines(file.path)
        starts.append(start)
        for tie in (file.parent_id or file.session_id, *ids):
            leader[lead(tie)] = lead(index)
    by_leader: dict[object, list[int]] = {}
    for index in range(len(files)):
        by_leader.setdefault(lead(index), []).append(index)
    found = [sorted(indexes, key=lambda index: (starts[index], index)) for indexes in by_leader.values()]
    return sorted(found, key=lambda indexes: -sum(sizes[index] for index in indexes))
