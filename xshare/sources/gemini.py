"""Gemini CLI: one chat file per session under ~/.gemini/tmp/<project>/chats/ ($GEMINI_CLI_HOME/.gemini
when that variable is set).

Where. `session-<time>-<id8>.json` (2025 to March 2026: a ConversationRecord `{sessionId, startTime,
lastUpdated, messages, kind?}`, rewritten whole on each update) and, from April 2026, `session-*.jsonl`: a
header line `{sessionId, ..., kind}`, then message records appended as they fill in (the same `id` again:
the last record of an id wins, in the place its first one took), `{"$set": {...}}` updates, and in the
A2A server's files `{"$set": {"messages": [...]}}` replacing the whole list. `kind` "main" (or none) is
`gemini/interactive`; any other kind (a subagent's chat) is `gemini/subagent`. `logs.json` and
`checkpoint-*.json` in the same folders are prompt history and /chat saves, not sessions.

Usage. Each `gemini` message carries the `tokens` of the one API response that produced it: `{input,
output, cached, thoughts, tool, total}`, per call, not cumulative. `cached` is part of `input`: prompt
billed = input; cache read = cached; input (uncached) = the difference; output = output + thoughts; cache
write: none (Gemini's implicit caching has no write charge). The model is the message's `model`.

Presence. User messages, the model's text, its tool calls (`toolCalls[].args`) and their results (which
Gemini CLI stores inside the call, `result[].functionResponse.response`) are present from the next call.
Thoughts are not sent back, so they are not counted; `info` and `error` messages are UI notices, never
sent. Gemini CLI writes no record of its chat compression, so the billing cap (each call's bill) is what
drops the oldest messages after one.

Unknown. A gemini message without `tokens` (a cancelled request) is no call; the version is not recorded.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xshare.sources import same_file
from xshare.sources.agent_common import Replay, as_text, content_text
from xshare.state.paths import home as user_home
from xshare.state.store import loads

AGENT = "gemini"
NAME = "Gemini CLI"
FLAG = "gemini_home"
KIND = "files"


def default_homes() -> list[Path]:
    explicit = os.environ.get("GEMINI_CLI_HOME")
    base = Path(explicit).expanduser() if explicit else user_home()
    return [base / ".gemini"] if base else []


def describe(homes: list[Path]) -> list[str]:
    return [f"Gemini CLI chats under {home}/tmp/*/chats" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        base = home / "tmp" if (home / "tmp").is_dir() else home  # a .gemini folder, or its tmp/
        found += sorted(base.glob("*/chats/session-*.json")) + sorted(base.glob("*/chats/session-*.jsonl"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _document(path: Path, data: bytes, problems: Counter) -> tuple[dict, list[dict]]:
    """The session's header and its messages, from either file shape."""
    if path.suffix == ".json":
        try:
            document = loads(data)
        except ValueError:
            problems["Gemini CLI chat files that are not JSON (skipped)"] += 1
            return {}, []
        if not isinstance(document, dict):
            return {}, []
        messages = document.get("messages")
        return document, [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    header: dict = {}
    by_id: dict[str, dict] = {}
    bad = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(record, dict):
            continue
        update = record.get("$set")
        if isinstance(update, dict):
            if isinstance(update.get("messages"), list):
                by_id = {str(index): m for index, m in enumerate(update["messages"]) if isinstance(m, dict)}
            header.update({key: value for key, value in update.items() if key != "messages"})
        elif "sessionId" in record and "type" not in record:
            header = {**record, **header}  # the first header wins (the A2A server writes it again)
        elif record.get("id") is not None and "type" in record:
            by_id[str(record["id"])] = record  # the latest record of a message replaces its earlier ones
    if bad:
        problems["Gemini CLI chat lines that are not JSON (skipped)"] += bad
    return header, list(by_id.values())


def _result_text(call: dict) -> str:
    parts = []
    for item in call.get("result") if isinstance(call.get("result"), list) else ():
        response = item.get("functionResponse") if isinstance(item, dict) else None
        if isinstance(response, dict):
            inner = response.get("response")
            output = inner.get("output") if isinstance(inner, dict) and "output" in inner else inner
            parts.append(as_text(output))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
    return "\n".join(parts)


def replay_messages(replay: Replay, messages: list[dict]) -> None:
    for message in messages:
        stamp = replay.seen(message.get("timestamp"))
        kind = message.get("type")
        if kind == "user":
            replay.add("conversation", content_text(message.get("content")))
        elif kind == "gemini":
            if isinstance(message.get("model"), str):
                replay.model = message["model"]
            tokens = message.get("tokens") if isinstance(message.get("tokens"), dict) else {}
            counts = replay.usage((tokens.get(name) for name in ("input", "cached", "output", "thoughts")), 1)
            prompt, cached, output, thoughts = counts or (0, 0, 0, 0)  # impossible: no call, as when cancelled
            cached = min(cached, prompt)
            usage = {"input": prompt - cached, "cache_read": cached, "output": output + thoughts}
            replay.output("conversation", content_text(message.get("content")))
            calls = message.get("toolCalls") if isinstance(message.get("toolCalls"), list) else []
            for call in calls:
                if isinstance(call, dict):
                    replay.tool_call(call.get("id"), call.get("name"), call.get("args"))
            replay.call(prompt, usage, stamp)
            for call in calls:
                if isinstance(call, dict) and call.get("result") is not None:
                    replay.tool_result(call.get("id"), _result_text(call), call.get("name"))
        # info and error messages are the CLI's notices to the person, never sent to the model


def read(path: Path, count: Callable[[str], int], tokenizer: str, problems: Counter,
         ledgers: dict | None = None) -> list[dict]:
    """The session row of one chat file (with `ledgers`, its detailed ledger too)."""
    try:
        data = path.read_bytes()
    except OSError:
        problems["Gemini CLI chats that vanished or could not be read"] += 1
        return []
    header, messages = _document(path, data, problems)
    replay = Replay(AGENT, count, problems, ledgers is not None)
    replay.seen(header.get("startTime"))
    replay_messages(replay, messages)
    replay.seen(header.get("lastUpdated"))
    session_id = header.get("sessionId")
    if not isinstance(session_id, str) or not session_id or session_id == "a2a-server":
        session_id = path.stem  # the A2A server gives every chat the same id; the file name is unique
    kind = header.get("kind")
    source = "interactive" if kind in (None, "main") else "subagent"
    row = replay.row(session_id, source, tokenizer)
    if ledgers is not None:
        ledgers[row["id"]] = replay.ledger
    return [row]
