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

A call is held by its key's 64-bit digest (xshare/measure/digests.py, which states the collision bound), and
its time packed in one number (`CallTimes`): a file's own calls cost about 16 bytes each in the worker's
answer and in the rows cache, and in the reader past PLAIN_KEYS calls (below it, as text: no digest to
compute); the calls another file bills travel as digests too.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from xshare.agents.claude_code import files, lines
from xshare.measure import digests
from xshare.measure.digests import DigestMap, digest

_IDS = re.compile(rb'"(requestId|id)"\s*:\s*"([^"\\]{1,200})"')
_OVERLAP = 256  # bytes kept from one chunk to the next, so an id cut between chunks is still found
_LAST = "\uffff"  # sorts after every timestamp: a call without one loses every tie it can
# calls up to which repeats are found with a set (see _repeated); a big history's 1.2 GB holds about 80,000
SMALL_HISTORY = 1 << 19
SEPARATOR = "\x1f"  # between a call key's parts (the ASCII unit separator: no id holds it)
# Claude Code's own form of a time: its digits, read as one number, sort as the text does
_STAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_NO_TIME, _ODD_TIME = -1, -2  # a call without a time; one in another form, kept as text


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


# the last few scans, by path, size and time: a session's internal agents all check their calls against its own
# transcript, one after another in one process (a family is read together), which is then scanned once
_SCANNED: dict[tuple[str, int, int], tuple[frozenset[str], frozenset[str]]] = {}
_SCANS_KEPT = 2


def scan_parent_ids(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    """`scan_ids` of a session's own transcript, the scan reused while the file is unchanged."""
    try:
        status = path.stat()
    except (OSError, ValueError):
        return scan_ids(path)
    stamp = (str(path), status.st_size, status.st_mtime_ns)
    found = _SCANNED.get(stamp)
    if found is None:
        if len(_SCANNED) >= _SCANS_KEPT:
            _SCANNED.pop(next(iter(_SCANNED)))
        found = _SCANNED[stamp] = scan_ids(path)
    return found


def may_share(mine: tuple[frozenset[str], frozenset[str]], theirs: tuple[frozenset[str], frozenset[str]]) -> bool:
    """Whether two transcripts whose ids are scanned (`scan_ids`) can hold one call: they share a request id
    or another id. Every call `holds` finds in `theirs` passes (its ids are written in both files)."""
    return not (mine[0].isdisjoint(theirs[0]) and mine[1].isdisjoint(theirs[1]))


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


class CallTimes:
    """A file's own calls and when each began. While it holds up to PLAIN_KEYS calls (an ordinary session),
    a plain dict of their keys and times as text; past it, the keys' digests with each time packed: a time
    of Claude Code's form (2026-11-01T09:30:00.123Z) as its digits in one number, any other kept as text.
    What travels to the parent and the rows cache (`to_json`) is always the packed form."""

    def __init__(self) -> None:
        self.plain: dict[str, str | None] | None = {}
        self.packed = DigestMap(1, "q")
        self.odd: dict[int, str] = {}
        self._named: frozenset[int] = frozenset()  # the plain keys' digests, made when `has` is asked

    def __len__(self) -> int:
        return len(self.plain) if self.plain is not None else len(self.packed)

    def __contains__(self, key: str) -> bool:
        return key in self.plain if self.plain is not None else digest(key) in self.packed

    def own(self, key: str, time: object) -> None:
        """One of the file's own calls, first seen at `time` (a later sighting changes nothing)."""
        if self.plain is None:
            self._pack(digest(key), time)
        elif key not in self.plain:
            self.plain[key] = time if isinstance(time, str) else None
            if len(self.plain) > digests.PLAIN_KEYS:
                plain, self.plain = self.plain, None
                for held, first in plain.items():
                    self._pack(digest(held), first)

    def _pack(self, named: int, time: object) -> None:
        if named in self.packed:
            return
        if not isinstance(time, str):
            code = _NO_TIME
        elif _STAMP.fullmatch(time):
            code = int(time[0:4] + time[5:7] + time[8:10] + time[11:13] + time[14:16] + time[17:19] + time[20:23])
        else:
            code, self.odd[named] = _ODD_TIME, time
        self.packed.put(named, (code,))

    def has(self, named: int) -> bool:
        """Whether the call whose key has this digest is held."""
        if self.plain is None:
            return named in self.packed
        if len(self._named) != len(self.plain):  # the plain dict only grows
            self._named = frozenset(map(digest, self.plain))
        return named in self._named

    def keys(self) -> Iterator[int]:
        """The calls' digests."""
        return map(digest, self.plain) if self.plain is not None else self.packed.keys()

    __iter__ = keys

    def items(self) -> Iterator[tuple[int, str | None]]:
        """(digest, time) of every call, the time as the row wrote it."""
        if self.plain is not None:
            yield from ((digest(key), time) for key, time in self.plain.items())
            return
        for named, (code,) in self.packed.items():
            yield named, _time_of(code) if code >= 0 else self.odd.get(named)

    def to_json(self) -> dict:
        """The packed form, as the parent and the rows cache keep it."""
        packed = self
        if self.plain is not None:
            packed = CallTimes()
            packed.plain = None
            for key, time in self.plain.items():
                packed._pack(digest(key), time)
        return {"packed": packed.packed.text(), "odd": {str(named): time for named, time in packed.odd.items()}}

    def saved(self) -> dict:
        """For the reader's state: the keys and times as text while plain, else the packed form."""
        return dict(self.plain) if self.plain is not None else self.to_json()

    @classmethod
    def from_json(cls, saved: dict) -> CallTimes:
        """Times as `to_json` or `saved` gave them (raises ValueError, TypeError or AttributeError for another
        shape). The text form is also what xshare saved before digests."""
        times = cls()
        if len(saved) == 2 and isinstance(saved.get("packed"), str) and isinstance(saved.get("odd"), dict):
            times.plain = None
            times.packed = DigestMap.from_text(saved["packed"], 1, "q")
            times.odd = {int(named): time for named, time in saved["odd"].items() if isinstance(time, str)}
            return times
        for key, time in saved.items():
            times.own(key, time)
        return times


def _time_of(code: int) -> str:
    digits = f"{code:017d}"
    return (f"{digits[0:4]}-{digits[4:6]}-{digits[6:8]}T{digits[8:10]}:{digits[10:12]}:{digits[12:14]}."
            f"{digits[14:17]}Z")


class Copies:
    """One reader's copies: which of the file's calls are another file's (their keys' digests, as the parent
    settles them), and when each of its own began."""

    def __init__(self, path: Path, internal: bool, copied: Iterable[int] = ()) -> None:
        self.path = path
        self.internal = internal
        self.copied = DigestMap.of(copied)  # the calls this file holds but does not bill
        self.times = CallTimes()  # the file's own calls and when each began
        self._parent_ids: tuple[frozenset[str], frozenset[str]] | None = None  # internal agents' (scan_ids)
        self.earlier: EarlierCalls | None = None  # the calls of the files read before it (`after`)
        self.owner: tuple[int, str] = (0, "")  # its rank and name, as `owner_key` has them
        self.settled: list[int] = []  # the calls `earlier` showed to be another file's, as they came

    def after(self, earlier: EarlierCalls, source: str, name: str) -> None:
        """Read after the files `earlier` holds: a call one of them holds earlier is theirs (`settle` decides
        it so unless a file read later holds it earlier still). `name` is the file's name as settled."""
        self.earlier, self.owner = earlier, (_rank(source), name)

    def is_copy(self, key: object, row: dict) -> bool:
        """Whether this assistant row's call is a copy of another file's."""
        if len(self.copied) and isinstance(key, str) and digest(key) in self.copied:
            return True
        origin = row.get("requestSessionId")
        marked = isinstance(origin, str) and origin != row.get("sessionId")
        if not marked and self.internal and isinstance(key, str) and key not in self.times:
            marked = holds(self._parents(), key)
        if marked and isinstance(key, str):
            self.copied.put(digest(key))
        elif self.earlier is not None and isinstance(key, str) and self._held_earlier(key, row):
            return True
        return marked

    def _held_earlier(self, key: str, row: dict) -> bool:
        """At a call's first row: whether a file read before holds it earlier. Then it is held as the file's
        own call too (its time, as read alone: what settling compares) and read as a copy. Only a key with
        both parts and a prompt (a billable row's: one read alone holds it as its own) is decided here."""
        earliest = self.earlier.earliest(key) if self.earlier is not None else None
        if earliest is None or key in self.times or key.count(SEPARATOR) != 2 or key.endswith(SEPARATOR):
            return False
        time = row.get("timestamp") if isinstance(row.get("timestamp"), str) else None
        if earliest >= (time or _LAST, *self.owner):  # owner_key: this file bills it
            return False
        self.times.own(key, time)
        self.settled.append(digest(key))
        self.copied.put(self.settled[-1])
        return True

    def _parents(self) -> tuple[frozenset[str], frozenset[str]]:
        if self._parent_ids is None:
            main = main_transcript(self.path)
            self._parent_ids = scan_parent_ids(main) if main is not None else (frozenset(), frozenset())
        return self._parent_ids

    def own(self, key: object, time: object) -> None:
        """One of the file's own calls, first seen at `time`."""
        if isinstance(key, str):
            self.times.own(key, time)

    def to_state(self) -> dict:
        return {"copied": self.copied.text(), "times": self.times.saved()}

    @classmethod
    def from_state(cls, state: dict, path: Path, internal: bool) -> Copies:
        """A state saved by `to_state`, or by xshare before digests (a list of the copied calls' keys)."""
        copied = state["copied"]
        copies = cls(path, internal, () if isinstance(copied, str) else map(digest, copied))
        if isinstance(copied, str):
            copies.copied = DigestMap.from_text(copied)
        copies.times = CallTimes.from_json(state["times"])
        return copies


class EarlierCalls:
    """The calls of the files one process has read, one after another, each with the key of the file holding it
    earliest (`owner_key`): what a file read next needs to read as copies the calls one of them bills
    (`Copies.after`), as `settle` decides unless a file read elsewhere holds the call earlier still."""

    def __init__(self) -> None:
        self.by_key: dict[str, tuple] = {}  # from files of up to PLAIN_KEYS calls (their times hold the keys)
        self.by_digest: dict[int, tuple] = {}  # from longer ones (their times hold the digests)

    def add(self, name: str, source: str, times: CallTimes) -> None:
        """A file read: its own calls (as read alone) and their times."""
        if times.plain is not None:
            _keep_earliest(self.by_key, times.plain.items(), _rank(source), name)
        else:
            _keep_earliest(self.by_digest, times.items(), _rank(source), name)

    def earliest(self, key: str) -> tuple | None:
        """The key of the earliest file holding this call (None: none read holds it)."""
        found = self.by_key.get(key)
        if self.by_digest and (other := self.by_digest.get(digest(key))) is not None:
            found = other if found is None else min(found, other)
        return found


def _keep_earliest(held: dict, calls: Iterable[tuple[object, str | None]], rank: int, name: str) -> None:
    for call, time in calls:
        owner, before = (time or _LAST, rank, name), held.get(call)  # owner_key's, the rank found once
        if before is None or owner < before:
            held[call] = owner


def _rank(source: str) -> int:
    return {"subagent": 1, "internal": 2}.get(source, 0)


def owner_key(time: str | None, source: str, path: str) -> tuple:
    """Of the files holding one call, the one with the smallest key bills it."""
    return (time or _LAST, _rank(source), path)


def billing_files(held: dict[str, tuple[str, dict[int, str | None]]]) -> dict[int, str]:
    """Of the files (path -> (source, its own calls' times)), the one that bills each call; independent of the
    order the files come in."""
    best: dict[int, tuple] = {}
    for path, (source, times) in held.items():
        for key, time in times.items():
            candidate = owner_key(time, source, path)
            if key not in best or candidate < best[key]:
                best[key] = candidate
    return {key: owner[2] for key, owner in best.items()}


def lost_calls(held: dict[str, tuple[str, dict[int, str | None]]]) -> dict[str, frozenset[int]]:
    """For each file (path -> (source, its own calls' times)), the calls an earlier file holds too."""
    billed_by = billing_files(held)
    return {path: frozenset(key for key in times if billed_by[key] != path) for path, (_, times) in held.items()}


def copies_a_session(times: CallTimes, lost: Iterable[int]) -> bool:
    """Whether a file is a copy of another's session, not a session: it holds calls (`times`, its own as read
    alone) and every one of them is billed by another file (`lost`); it adds no call of its own. A file with
    one call of its own stays a session: that call is billed nowhere else. A fork whose every call is marked
    as its parent's (`requestSessionId`) is not one either: Claude Code gave it an id of its own."""
    lost = lost if isinstance(lost, (set, frozenset)) else set(lost)
    return len(times) > 0 and all(key in lost for key in times.keys())


def _repeated(calls: array) -> set[int] | DigestMap:
    """The digests that occur more than once. A set up to SMALL_HISTORY calls (about 70 bytes a call while it
    is built: a warm report over a year of heavy use settles in milliseconds), sorted arrays past it (8 bytes)."""
    if len(calls) <= SMALL_HISTORY:
        seen: set[int] = set()
        return {named for named in calls if named in seen or seen.add(named)}  # type: ignore[func-returns-value]
    seen_map, shared = DigestMap(), DigestMap()
    for named in calls:
        if named in seen_map:
            shared.put(named)
        else:
            seen_map.put(named)
    return shared


def _holds_any(shared: set[int] | DigestMap, calls: array) -> bool:
    return not shared.isdisjoint(calls) if isinstance(shared, set) else any(named in shared for named in calls)


def settle(files: Sequence[tuple[str, str]], times_of: Callable[[int], CallTimes]) -> dict[str, frozenset[int]]:
    """`lost_calls` over any number of files (name, source), each one's calls and times given by
    `times_of(index)`; only the files that lose a call are named. Every file's times are decoded once, and
    again only for a file holding a call another file holds too: what stays in memory meanwhile is 8 bytes a
    call, 8 more while repeats are found (digests in sorted arrays), and the times of the calls two files share."""
    calls, ends = array("Q"), array("q")
    for index in range(len(files)):
        calls.extend(times_of(index).keys())
        ends.append(len(calls))
    shared = _repeated(calls)
    held: dict[str, tuple[str, dict[int, str | None]]] = {}
    start = 0
    for index, end in enumerate(ends):
        if shared and _holds_any(shared, calls[start:end]):
            name, source = files[index]
            held[name] = (source, {named: time for named, time in times_of(index).items() if named in shared})
        start = end
    return {name: lost for name, lost in lost_calls(held).items() if lost}
