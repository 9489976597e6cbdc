"""The Claude Code rows cache: each transcript's row under its path, size and modification time.

One line a transcript after a header line (method, tokenizer, layout): the head `[path, size, mtime_ns,
problems, copied]` (copied: the digests of the calls the file holds that another file bills, see
agents/claude_code/copies.py), a tab, the row's JSON, a tab, and the file's own calls' start times as a JSON
object (copies.CallTimes, packed: 16 bytes a call in base64). JSON holds no raw tab, so the
tabs cut the line, and the row and the times stay bytes: a report over many sessions reads its cache
without turning every cached row (or every call's time) into Python objects, and writes it back a line at a
time. A different tokenizer or method version makes every entry stale.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from xshare import METHOD_VERSION
from xshare.measure.ids import key_path
from xshare.state.store import atomic_write, dumps, loads, open_regular, state_dir


class Entry(NamedTuple):
    size: int
    mtime_ns: int
    problems: dict | None
    row: bytes  # the row's JSON
    times: bytes  # JSON of the file's own calls and their first rows' timestamps (copies.CallTimes.to_json)
    copied: tuple  # digests of the call keys of the calls the file holds but another file bills


def cache_file() -> Path:
    return state_dir() / "cache" / "claude-rows.jsonl"


def _legacy_file() -> Path:
    """The cache as one JSON document (xshare before the line format): read no more, removed on save."""
    return state_dir() / "cache" / "claude-rows.json"


_LAYOUT = 2  # 2: calls by their keys' digests, times packed (a cache of call keys is read again, once)


def _header(tokenizer: str) -> bytes:
    return dumps({"method": METHOD_VERSION, "tokenizer": tokenizer, "layout": _LAYOUT}) + b"\n"


_SETTLED = b"settled\t"  # one tab: never taken for an entry (two), by this version or an older one


def settled_stamp(entries: Mapping[str, Entry]) -> bytes:
    """What settling copies depends on, in a few bytes: each file's path, size and modification time (not
    their order: copies.billing_files)."""
    return files_stamp((name, (entry.size, entry.mtime_ns)) for name, entry in entries.items()).encode()


def files_stamp(files: Iterable[tuple[str, tuple[int, int]]]) -> str:
    """Files in a few bytes: each one's path key, size and modification time (not their order)."""
    digest = hashlib.blake2b(digest_size=16)
    for name, (size, mtime_ns) in sorted(files):
        digest.update(dumps([name, size, mtime_ns]))
    return digest.hexdigest()


def settled(tokenizer: str) -> bytes | None:
    """The stamp of the files the cache's copies were last settled over (None: not known)."""
    try:
        with open_regular(cache_file()) as handle:
            if handle.readline() != _header(tokenizer):
                return None
            line = handle.readline()
    except OSError:
        return None
    return line[len(_SETTLED):].rstrip(b"\n") if line.startswith(_SETTLED) else None


def _entries(path: Path, tokenizer: str) -> Iterator[tuple[list, bytes, bytes]]:
    """(head decoded, its transcript path first; head; the rest: row and times) of every well-formed line of a
    cache made with this tokenizer and method; none for a missing, unreadable or stale cache (a cache is never
    worth a crash)."""
    try:
        handle = open_regular(path)  # a FIFO in its place is refused, not waited on
    except OSError:
        return
    with handle:
        try:
            if handle.readline() != _header(tokenizer):
                return
            for line in handle:
                head, tab, rest = line.rstrip(b"\n").partition(b"\t")
                if tab and rest.count(b"\t") == 1:
                    try:
                        found = loads(head)
                    except ValueError:
                        continue
                    if isinstance(found, list) and found and isinstance(found[0], str):
                        yield found, head, rest
        except OSError:
            return


def load(tokenizer: str, wanted: set[str]) -> dict[str, Entry]:
    """The cached entries of these transcript paths (only these: entries of files not asked about stay on
    disk, not in memory)."""
    entries: dict[str, Entry] = {}
    for found, _, rest in _entries(cache_file(), tokenizer):
        if found[0] not in wanted or len(found) != 5:
            continue
        path, size, mtime, problems, copied = found
        row, _, times = rest.partition(b"\t")
        if (type(size) is int and type(mtime) is int and isinstance(problems, (dict, type(None)))
                and isinstance(copied, list) and row and times.startswith(b"{")):
            entries[path] = Entry(size, mtime, problems or None, row, times, tuple(copied))
    return entries


def save(tokenizer: str, fresh: dict[str, Entry], settled_over: bytes | None = None) -> None:
    """These entries, and the cached ones of other transcripts that still exist, written a line at a time;
    `settled_over`: the stamp of the files `fresh`'s copies were settled over."""
    path = cache_file()

    def lines() -> Iterator[bytes]:
        yield _header(tokenizer)
        if settled_over is not None:
            yield _SETTLED + settled_over + b"\n"
        for name, entry in fresh.items():
            head = [name, entry.size, entry.mtime_ns, entry.problems or {}, list(entry.copied)]
            yield dumps(head) + b"\t" + entry.row + b"\t" + entry.times + b"\n"
        for (name, *_), kept_head, rest in _entries(path, tokenizer):
            if name not in fresh and key_path(name).exists():
                yield kept_head + b"\t" + rest + b"\n"

    try:
        atomic_write(path, lines())
    except OSError as error:
        print(f"xshare: could not write the cache ({error.strerror}); the next report reads everything again",
              file=sys.stderr)
        return
    with contextlib.suppress(OSError):
        _legacy_file().unlink(missing_ok=True)
