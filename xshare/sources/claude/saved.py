"""A Claude Code reader's state, as the live hook saves it (JSON, live/session_state.py) and resumes it: the
round trip is exact, so a transcript read in one piece or in a thousand appended ones gives the same figures.

The maps of every row and call (transcript.py, xshare/measure/digests.py) are saved as base64 of their packed
arrays, a few dozen bytes a call (200K calls took 67 MB of JSON as lists and dicts of ids). A state saved
before digests (its ids as text) still loads: its ids are digested as they are read.
"""

from __future__ import annotations

from xshare.measure.digests import DigestMap, digest
from xshare.measure.ledger import CATEGORIES, ROUNDING_PER_MESSAGE, Ledger
from xshare.sources.claude.copies import Copies, request_of

MAPS = ("seen_rows", "tool_categories", "calls", "requests", "result_rows")
_PLAIN = ("offset", "identity", "entrypoint", "cost", "snapshots", "last_call", "forked", "preserved",
          "fingerprint", "open_call", "held")


def reader_state(reader) -> dict:
    """The state of a reader (a transcript.ClaudeTranscript) as JSON types."""
    state = {name: getattr(reader, name) for name in _PLAIN}
    state.update((name, getattr(reader, name).text()) for name in MAPS)
    state["ledger"] = reader.ledger.to_state()
    state["copies"] = reader.copies.to_state()
    return state


def restore(reader, state: dict) -> None:
    """A fresh reader of the same file brought to a saved state (KeyError, TypeError or ValueError: a state
    of another shape, read again from the start by the caller)."""
    reader.ledger = Ledger.from_state(state["ledger"])
    reader.ledger.rounding = ROUNDING_PER_MESSAGE  # a state saved before the tolerance: the same from now
    reader.offset = state["offset"]
    reader.identity = state["identity"]
    reader.entrypoint = state["entrypoint"]
    reader.cost = state["cost"]
    reader.snapshots = [dict(snapshot) for snapshot in state["snapshots"]]
    reader.last_call = {thread: list(pair) for thread, pair in state["last_call"].items()}
    reader.forked = state["forked"]
    reader.preserved = list(state.get("preserved", []))
    reader.fingerprint = state["fingerprint"]
    reader.open_call = state["open_call"]
    reader.held = [list(entry) for entry in state["held"]]
    reader.copies = Copies.from_state(state["copies"], reader.file.path, reader.copies.internal)
    if isinstance(state["seen_rows"], str):
        for name in MAPS:  # each map's shape is the fresh reader's
            empty = getattr(reader, name)
            setattr(reader, name, DigestMap.from_text(state[name], empty.width, empty.typecode))
    else:
        _restore_ids(reader, state)


def _restore_ids(reader, state: dict) -> None:
    """The maps of a state saved before digests: row uuids, tool ids and call keys as text."""
    reader.seen_rows = DigestMap.of(map(digest, state["seen_rows"]))
    for tool_id, category in state["tool_categories"].items():
        reader.tool_categories.put(digest(tool_id), (CATEGORIES.index(category),))
    for key, snapshot in state["calls"].items():
        reader.calls.put(digest(key), snapshot)
        reader.requests.put(digest(request_of(key)))  # not saved then: rebuilt from the calls, as it was
    for uuid, tool_ids in state.get("result_rows", {}).items():
        for tool_id in tool_ids:
            reader.result_rows.add(digest(uuid), (digest(tool_id),))
