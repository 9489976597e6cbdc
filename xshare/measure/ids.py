"""One spelling for what xshare keys its files by: session ids, and the paths its caches are kept under.

A file name that is not valid UTF-8 reaches Python with lone surrogates in it (os.fsdecode), and so does
an id taken from it. xshare's JSON files cannot hold those: store.dumps writes U+FFFD instead. A key that
is spelled one way in memory and another once read back never matches again (a session remembered twice,
a cache entry never found), so ids are given the stored spelling from the start, and a path that has no
stored spelling of its own gets one that can be turned back into the path. Also the short id every view
shows (`sessions`, `advice`, the index), which `session` and `html` take. Stdlib only and import-light.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

_SURROGATE = re.compile("[\ud800-\udfff]")
SHORTEST_ID = 8  # as git abbreviates: long enough to be unique almost always, grown where it is not
_ENCODED = "\0"  # no path holds a NUL: a key starting with one is an encoded path, never a plain one


def normal_id(session_id: str) -> str:
    """The id as xshare's JSON files hold it: each lone surrogate as U+FFFD, as store.dumps writes it."""
    return session_id if session_id.isascii() else _SURROGATE.sub("\ufffd", session_id)


def path_key(path: str | os.PathLike) -> str:
    """A path as a cache key: the path itself, or for one JSON cannot hold (a file name that is not
    UTF-8) its bytes in hex, so two such names never share a key."""
    text = os.fspath(path)
    if text.isascii():  # no surrogate, and no regex search (a warm report keys every transcript four times)
        return text
    return _ENCODED + os.fsencode(text).hex() if _SURROGATE.search(text) else text


def key_path(key: str) -> Path:
    """The path a `path_key` stands for."""
    return Path(os.fsdecode(bytes.fromhex(key[1:]))) if key.startswith(_ENCODED) else Path(key)


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id's shortest prefix (at least SHORTEST_ID characters) no other id starts with; a subagent's
    id (session/agent) in full, as an id prefix names its session first (sessions/registry.py `complete`)."""
    ids = sorted(set(ids))
    short = {session_id: session_id for session_id in ids if "/" in session_id}
    ids = [session_id for session_id in ids if "/" not in session_id]
    for index, session_id in enumerate(ids):
        neighbours = [other for other in ids[max(index - 1, 0):index + 2] if other != session_id]
        length = SHORTEST_ID
        while length < len(session_id) and any(other.startswith(session_id[:length]) for other in neighbours):
            length += 1
        short[session_id] = session_id[:length]
    return short
