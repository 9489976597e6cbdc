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

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from xshare.agents.claude_code import lines
from xshare.agents.claude_code.files import TranscriptFile

_FIRST, _MOST = 4096, 1 << 16  # bytes read first, and at most while the first call's row has not ended
# as Claude Code writes them (compact JSON): found with bytes.find, a tenth of a regular expression's time; a
# file written otherwise is only read in another order (and maybe again)
_ASSISTANT, _SESSION, _REQUEST = b'"type":"assistant"', b'"sessionId":"', b'"requestId":"'
_MESSAGE, _TIME = b'"id":"msg_', b'"timestamp":"'  # a message id (1.0.x rows have no request id); a row's time
_NO_CALL = "\uffff"  # sorts after every time: a file whose first call was not found is read last


def first_lines(path: Path) -> tuple[str, frozenset[bytes]]:
    """The time of the file's first call (its first assistant row) and the ids that tie it to the files it
    may copy: the session ids its rows name up to that call, and the call's request id (else its message
    id). Neither for a file that cannot be read; no time when its first 64 KB hold no call."""
    try:
        handle, status = lines.open_regular(path)
    except (OSError, lines.NotRegularFile):
        return _NO_CALL, frozenset()
    with handle:
        data = _to_first_call(handle, min(status.st_size, _MOST))
    call = data.find(_ASSISTANT)
    start, end = data.rfind(b"\n", 0, call) + 1, data.find(b"\n", call) if call >= 0 else len(data)
    end = end if end >= 0 else len(data)
    ids = {b"s" + found for found in _values(data, _SESSION, 0, end)}
    if call < 0:
        return _NO_CALL, frozenset(ids)
    request = next(_values(data, _REQUEST, start, end), None) or next(_values(data, _MESSAGE, start, end), None)
    if request is not None:
        ids.add(b"r" + request)
    return next(_values(data, _TIME, start, end), _NO_CALL.encode()).decode("utf-8", "replace"), frozenset(ids)


def _values(data: bytes, name: bytes, start: int, end: int) -> Iterator[bytes]:
    """The string values after `name` (a key and its opening quote) between start and end."""
    while (at := data.find(name, start, end)) >= 0:
        start = data.find(b'"', at + len(name), end)
        if start < 0:
            return
        yield data[at + len(name):start]


def _to_first_call(handle: BinaryIO, most: int) -> bytes:
    """The file's first bytes, up to the end of its first assistant row's line (or `most` bytes)."""
    data = handle.read(min(_FIRST, most))
    while len(data) < most and ((call := data.find(_ASSISTANT)) < 0 or data.find(b"\n", call) < 0):
        more = handle.read(min(len(data), most - len(data)))
        if not more:
            break
        data += more
    return data


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
