"""Hermes-Agent: a state.db message's text and tool calls as Hermes sends them to the model.

Hermes stores what the model returned, but before every request it normalises its API copy of the
messages (hermes-agent 0.13.0 run_agent.py, 0.16.0 and 0.19.0 agent/conversation_loop.py, "Normalize
message whitespace and tool-call JSON", after sanitize_tool_call_arguments):
  * a content that is a string is sent stripped of leading and trailing whitespace;
  * a live-shape call's arguments (`{"function": {"arguments": ...}}`) are parsed and re-serialised with
    `json.dumps(args, separators=(",", ":"), sort_keys=True)` (ensure_ascii left on: non-ASCII goes out as
    `\\uXXXX`); arguments that are empty, blank, not JSON or not a string are sent as `{}`.
What is counted is what is sent; the stored arguments still decide a call's category.
"""

from __future__ import annotations

import json

from xshare.agents.common.replay import parse_json
from xshare.state.store import dumps

JSON_PREFIX = "\x00json:"
# every current and frozen summary prefix starts with one of these (agent/context_compressor.py)
SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
MERGED_SUMMARY_DELIMITER = "[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]"
EMPTY_ARGUMENTS = "{}"


def _content(value: object) -> tuple[str, bool]:
    """A content cell's text, and whether Hermes holds it as one string (then it is sent stripped)."""
    if value is None:
        return "", False
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = str(value)
    if not text.startswith(JSON_PREFIX):
        return text, True
    parts = parse_json(text[len(JSON_PREFIX):])
    if isinstance(parts, str):
        return parts, True
    found = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, str):
            found.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            found.append(part["text"])  # images and audio are not text
    return "\n".join(found), False


def message_text(value: object) -> str:
    """What the model saw of a content cell: text as stored, or the text parts of a multimodal list."""
    return _content(value)[0]


def sent_text(value: object) -> str:
    """A content cell as Hermes sends it: a string stripped, a multimodal list's text parts as they are."""
    text, whole = _content(value)
    return text.strip() if whole else text


def sent_arguments(arguments: object) -> str:
    """A live-shape call's arguments as Hermes re-serialises them before every request (module docstring)."""
    if not isinstance(arguments, str) or not arguments.strip():
        return EMPTY_ARGUMENTS
    try:
        parsed = json.loads(arguments)  # the stdlib, as Hermes: its float and escape spelling
    except (ValueError, RecursionError):
        return EMPTY_ARGUMENTS  # sanitize_tool_call_arguments: unparseable arguments go out as {}
    try:
        return json.dumps(parsed, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # never for parsed JSON: a surprise is counted, not raised
        return EMPTY_ARGUMENTS


def tool_calls(value: object) -> list[tuple[list[str], str, str, str]]:
    """(ids, name, arguments, arguments as sent) of an assistant row's calls, in either stored shape:
    [{"id", "call_id", "function": {"name", "arguments"}}] (live) or [{"name", "arguments"}] (fallback,
    which Hermes's normalisation does not touch: sent as stored)."""
    parsed = parse_json(value)
    if isinstance(parsed, dict):
        parsed = [parsed]
    calls = []
    for call in parsed if isinstance(parsed, list) else ():
        if not isinstance(call, dict):
            continue
        live = isinstance(call.get("function"), dict)
        function = call["function"] if live else call
        name = value if isinstance(value := function.get("name"), str) else ""
        arguments = function.get("arguments")
        sent = sent_arguments(arguments) if live else None
        if arguments is not None and not isinstance(arguments, str):
            arguments = dumps(arguments).decode()
        ids = [call[key] for key in ("id", "call_id") if isinstance(call.get(key), str) and call[key]]
        calls.append((ids, name, arguments or "", (arguments or "") if sent is None else sent))
    return calls


def is_summary(text: str) -> bool:
    """Hermes's own test (_is_context_summary_content), for databases without `_compressed_summary`."""
    text = text.lstrip()
    if MERGED_SUMMARY_DELIMITER in text:
        text = text.split(MERGED_SUMMARY_DELIMITER, 1)[1].lstrip()
    return text.startswith(SUMMARY_PREFIXES)
