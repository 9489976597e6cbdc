"""A Claude Code reader's state, as the live hook saves it (JSON, live/session_state.py) and resumes it: the
round trip is exact, so a transcript read in one piece or in a thousand appended ones gives the same figures.

The maps of every row and call (transcript.py, xshare/measure/digests.py KeyMap) are saved as their ids while
they hold them as text (as xshare saved them before digests, so such a state still loads), and as base64 of
their packed arrays once they hold digests: a few dozen bytes a call (200K calls took 67 MB of JSON as lists
and dicts of ids).
"""

from __future__ import annotations

from xshare.agents.claude_code.copies import Copies, request_of
from xshare.measure.ledger import CATEGORIES, ROUNDING_PER_MESSAGE, Ledger

MAPS = ("seen_rows", "tool_categories", "calls", "requests", "result_rows")
_PLAIN = ("offset", "identity", "entrypoint", "cost", "snapshots", "last_call", "forked", "preserved",
          "fingerprint", "open_call", "held")


def reader_state(reader) -> dict:
    """The state of a reader (a transcript.ClaudeTranscript) as JSON types."""
    state = {name: getattr(reader, name) for name in _PLAIN}
    state.update((name, getattr(reader, name).saved()) for name in MAPS)
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
    categories = state["tool_categories"]
    if isinstance(categories, dict):  # saved before digests: tool id -> the category's name
        categories = {tool: [CATEGORIES.index(name)] if isinstance(name, str) else name
                      for tool, name in categories.items()}
    reader.tool_categories.restore(categories)
    for name in ("seen_rows", "calls", "result_rows"):
        getattr(reader, name).restore(state.get(name, {}) if name == "result_rows" else state[name])
    if "requests" in state:
        reader.requests.restore(state["requests"])
    else:  # saved before digests, when they were rebuilt from the calls (then held as text)
        for key in state["calls"]:
            reader.requests.put(request_of(key))
