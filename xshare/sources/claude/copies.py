"""Calls one transcript copied from another: a request is billed once, in the file that made it.

Claude Code copies a conversation's assistant rows, `requestId` and usage included, into other files:
- `--resume <id> --fork-session` (2.1.x) starts the new file with the parent's history since its last
  compaction; each copied assistant row keeps the parent's id as `requestSessionId` (its `sessionId` is
  the fork's). A call marked so is a copy wherever it is read: no other file needs to be looked at.
- Its internal agents (`agent-acompact-*`, `agent-aside_question-*`, `agent-aprompt_suggestion-*`,
  2.1.2x-2.1.8x) replay their session's rows, unmarked, before their own call: a call of such a file whose
  request id and message id the session's main transcript also holds is the main transcript's. That file is
  scanned for ids once per read of the agent file, when its first call comes.
- 1.0.x `--resume` wrote a new file that repeats the whole history, unmarked, with the rows' timestamps
  set to the moment of the resume. Only other files tell these apart: across the files read, a call is
  billed by the file whose row for it is earliest (then: a main transcript before a subagent's,
  before an internal agent's; then the first path), and every other file holding it reads it as a copy.

A copy is still context: its text and tool calls stay present for the file's own calls, which re-send
them. It is just not a call of this file: no bill, no cap, no overhead taken from it.

A call is named by its request id, its message id and the prompt it was billed (`call_key`): every row of
one response repeats all three, and so does every copy of it. A proxy that sends one constant request id
(or message id) on every call still gives each call another message id, or another prompt, so its calls
stay apart. Copies are settled across every file one command reads (`settle`), whatever folder or root
holds them: a backup copied into `<project>/sessions/` or into another root bills nothing twice.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from xshare.sources.claude import files, lines

_IDS = re.compile(rb'"(requestId|id)"\s*:\s*"([^"\\]{1,200})"')
_OVERLAP = 256  # bytes kept from one chunk to the next, so an id cut between chunks is still found
_LAST = "\uffff"  # sorts after every timestamp: a call without one loses every tie it can
SEPARATOR = "\x1f"  # between a call key's parts (the ASCII unit separator: no id holds it)


def call_key(request_id: object, message_id: object, snapshot: list[int] | None) -> str | None:
    """The key of the call an assistant row belongs to: its request id, its message id and the prompt it
    was billed (the same on every row of one response, however the rows split it between fresh input and
    cache). None when the row has neither id."""
    ids = [value if isinstance(value, str) else "" for value in (request_id, message_id)]
    if not any(ids):
        return None
    return SEPARATOR.join([*ids, str(snapshot[0]) if snapshot else ""])


def request_of(key: str) -> str:
    """The id a call key goes by: its request id, else its message id (else the key itself: a row's uuid)."""
    request, _, rest = key.partition(SEPARATOR)
    return request or rest.partition(SEPARATOR)[0] or key


def scan_ids(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """Every `requestId`, and every other `id` (messages', tool calls'), written in a transcript, without
    parsing it (a regular file only; none if it cannot be read)."""
    found: dict[bytes, set[bytes]] = {b"requestId": set(), b"id": set()}
    try:
        handle, status = lines.open_regular(path)
    except (OSError, lines.NotRegularFile):
        return frozenset(), frozenset()
    with handle:
        tail = b""
        for chunk in lines.chunks_to(handle, status.st_size):
            data = tail + chunk
            for match in _IDS.finditer(data):
                found[match.group(1)].add(match.group(2))
            tail = data[-_OVERLAP:]
    requests, ids = (frozenset(value.decode("utf-8", "replace") for value in found[name]) for name in found)
    return requests, ids


def holds(scanned: tuple[frozenset[str], frozenset[str]], key: object) -> bool:
    """Whether a transcript whose ids are `scanned` can hold this call: its request id and its message id
    are both written there (a key without ids, a row's uuid: never)."""
    if not isinstance(key, str) or SEPARATOR not in key:
        return False
    request, message, _ = key.split(SEPARATOR, 2)
    return (not request or request in scanned[0]) and (not message or message in scanned[1])


def main_transcript(path: Path) -> Path | None:
    """The session's own transcript for a file under `<session>/subagents/`: `<session>.jsonl` beside the
    session's folder."""
    parts = path.parts
    if "subagents" not in parts:
        return None
    index = len(parts) - 1 - parts[::-1].index("subagents")
    return Path(*parts[: index - 1]) / f"{parts[index - 1]}.jsonl" if index >= 2 else None


def project_folder(path: Path) -> Path | None:
    """The project folder a transcript belongs to (where a resume writes its new file)."""
    main = main_transcript(path)
    return (main or path).parent


def transcripts_in(project: Path) -> list[Path]:
    """The transcripts of one project folder, as discovery finds them (not tool-results/, and only the
    agent-* files of subagents/)."""
    found = []
    for path in project.rglob("*.jsonl"):
        if not files.passed_over(path.relative_to(project).parts[:-1], path.name) and lines.is_regular(path):
            found.append(path)
    return sorted(found)


class Copies:
    """One reader's copies: which of the file's calls are another file's, and when each of its own began."""

    def __init__(self, path: Path, internal: bool, copied: Iterable[str] = ()) -> None:
        self.path = path
        self.internal = internal
        self.copied: set[str] = set(copied)  # call keys this file holds but does not bill
        self.times: dict[str, str | None] = {}  # the file's own calls: key -> its first row's timestamp
        self._parent_ids: tuple[frozenset[str], frozenset[str]] | None = None  # internal agents' (scan_ids)

    def is_copy(self, key: object, row: dict) -> bool:
        """Whether this assistant row's call is a copy of another file's."""
        if isinstance(key, str) and key in self.copied:
            return True
        origin = row.get("requestSessionId")
        marked = isinstance(origin, str) and origin != row.get("sessionId")
        if not marked and self.internal and isinstance(key, str) and key not in self.times:
            marked = holds(self._parents(), key)
        if marked and isinstance(key, str):
            self.copied.add(key)
        return marked

    def _parents(self) -> tuple[frozenset[str], frozenset[str]]:
        if self._parent_ids is None:
            main = main_transcript(self.path)
            self._parent_ids = scan_ids(main) if main is not None else (frozenset(), frozenset())
        return self._parent_ids

    def own(self, key: object, time: object) -> None:
        """One of the file's own calls, first seen at `time`."""
        if isinstance(key, str) and key not in self.times:
            self.times[key] = time if isinstance(time, str) else None

    def to_state(self) -> dict:
        return {"copied": sorted(self.copied), "times": self.times}

    @classmethod
    def from_state(cls, state: dict, path: Path, internal: bool) -> Copies:
        copies = cls(path, internal, state["copied"])
        copies.times = dict(state["times"])
        return copies


def _rank(source: str) -> int:
    return {"subagent": 1, "internal": 2}.get(source, 0)


def owner_key(time: str | None, source: str, path: str) -> tuple:
    """Of the files holding one call, the one with the smallest key bills it."""
    return (time or _LAST, _rank(source), path)


def billing_files(held: dict[str, tuple[str, dict[str, str | None]]]) -> dict[str, str]:
    """Of the files (path -> (source, its own calls' times)), the one that bills each call; independent of the
    order the files come in."""
    best: dict[str, tuple] = {}
    for path, (source, times) in held.items():
        for key, time in times.items():
            candidate = owner_key(time, source, path)
            if key not in best or candidate < best[key]:
                best[key] = candidate
    return {key: owner[2] for key, owner in best.items()}


def lost_calls(held: dict[str, tuple[str, dict[str, str | None]]]) -> dict[str, frozenset[str]]:
    """For each file (path -> (source, its own calls' times)), the calls an earlier file holds too."""
    billed_by = billing_files(held)
    return {path: frozenset(key for key in times if billed_by[key] != path) for path, (_, times) in held.items()}


def copies_a_session(times: dict, lost: Iterable[str]) -> bool:
    """Whether a file is a copy of another's session, not a session: it holds calls (`times`, its own as read
    alone) and every one of them is billed by another file (`lost`); it adds no call of its own. A file with
    one call of its own stays a session: that call is billed nowhere else. A fork whose every call is marked
    as its parent's (`requestSessionId`) is not one either: Claude Code gave it an id of its own."""
    return bool(times) and set(times) <= set(lost)


def settle(files: Sequence[tuple[str, str]], times_of: Callable[[int], dict[str, str | None]]
           ) -> dict[str, frozenset[str]]:
    """`lost_calls` over any number of files (name, source), each one's calls and times given by
    `times_of(index)`; only the files that lose a call are named. Every file's times are decoded once, and
    again only for a file holding a call another file may hold too: what stays in memory meanwhile is one
    hash a call, and the times of the calls whose hash two files share."""
    hashes, ends = array("q"), array("q")
    for index in range(len(files)):
        hashes.extend(hash(key) for key in times_of(index))
        ends.append(len(hashes))
    seen: set[int] = set()
    shared: set[int] = set()
    for value in hashes:
        (shared if value in seen else seen).add(value)
    del seen
    held: dict[str, tuple[str, dict[str, str | None]]] = {}
    start = 0
    for index, end in enumerate(ends):
        if shared and any(value in shared for value in hashes[start:end]):
            name, source = files[index]
            held[name] = (source, {key: time for key, time in times_of(index).items() if hash(key) in shared})
        start = end
    return {name: lost for name, lost in lost_calls(held).items() if lost}
