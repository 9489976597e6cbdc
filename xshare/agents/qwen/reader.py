"""Qwen Code: one JSON Lines chat per session under ~/.qwen/projects/<cwd, every separator "-">/chats/
($QWEN_HOME instead of ~/.qwen when that variable is set).

Where. `chats/<session id>.jsonl`, appended to as the session goes; `--resume <id>` and `--continue` append to
the same file (the resumed request re-sends the whole history). A subagent (the `agent` tool, run in the
background) writes its own chat, `subagents/<parent session id>/agent-<type>-<tool call id>.jsonl` beside a
`.meta.json`, in the same format with `agentId` and `isSidechain` on each record; its calls are billed apart from
the parent's, so it is a row of its own (source subagent, its parent the session), id `<session>-<agentId>`.

Records. `{uuid, parentUuid, sessionId, timestamp, type, cwd, version, ...}`; `type` is:
  user         `message.parts[].text`: the person's prompt, or (subtype "notification") a background task's
               result handed to the model as a user turn
  assistant    one API response: `model`, `message.parts[]` (`text`, `functionCall {id, name, args}`; a part
               with `thought: true` is reasoning, not sent back) and `usageMetadata {promptTokenCount,
               candidatesTokenCount, thoughtsTokenCount, totalTokenCount, cachedContentTokenCount}`
  tool_result  `message.parts[].functionResponse {id, name, response: {output} or {error}}`
  system       the CLI's own records (`subtype`: ui_telemetry, attribution_snapshot, chat_compression, rewind,
               ...), never sent as such; `ui_telemetry` repeats each response's usage (`qwen-code.api_response`)
               and is not read, so each call counts once. ~/.qwen/usage/token-usage-<month>.jsonl repeats it too.

Usage. Per call, not cumulative. `cachedContentTokenCount` is part of `promptTokenCount`: prompt billed =
promptTokenCount; cache read = cached; input (uncached) = the difference; no cache write is recorded. Output:
totalTokenCount - promptTokenCount, as Qwen Code itself reads it (with an OpenAI-compatible provider
`candidatesTokenCount` already holds the reasoning `thoughtsTokenCount` counts; with Gemini's it does not, and
the total holds both), else candidates + thoughts. An assistant record without a prompt count is no call,
counted on stderr (never read as zero), except in a subagent's chat, which writes a billed reply first with
no tool calls, then its tool calls in an assistant record of their own without `usageMetadata` (read as the
same call's); a record of another type is counted and left out; lines that are not
JSON objects are skipped and counted.

Presence. Prompts, the model's text and tool calls, and tool results are present from the next call. A
`chat_compression` record (its `compressedHistory` is what later calls carry) is a compaction. After a
rewind the file keeps the dead branch; the billing cap (each call's bill) drops what is no longer sent.

Unseen. In print mode every request the CLI made is an assistant record. The TUI then asks the model, after each
turn, what the person might type next (a "SUGGESTION MODE" request re-sending the conversation, with tools),
billed and recorded nowhere, and the chat does not say whether it ran in the TUI: a session's row names up to
one such call per prompt (`unseen_calls`, agents/common/unseen.py), never counted; a subagent's row none. The
version is each record's `version`.
Checked against: Qwen Code 0.24.4 (`@qwen-code/qwen-code`) driven offline against a fake Chat Completions server
(`--auth-type openai`, OPENAI_BASE_URL): reads, grep_search, run_shell_command, edit, an `agent` subagent and a
`--resume` (tests/agents/qwen/test_realhost.py), and its TUI in tmux (tests/agents/qwen/test_tui.py). No chat
compression or rewind was driven: their handling is from the CLI's source (its session-history rebuild), not
from a file it wrote here.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.common import same_file, unseen
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, holds_no_record, json_objects
from xshare.agents.common.stated import read_stated
from xshare.agents.qwen.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home

AGENT = "qwen"
NAME = "Qwen Code"
FLAG = "qwen_home"
KIND = "files"
CHAT = "Qwen Code chat"  # what its problems call the files and lines they were met in
CHATS = "projects/*/chats/*.jsonl"
SUBAGENT_CHATS = "projects/*/subagents/*/agent-*.jsonl"
NO_USAGE = "Qwen Code replies without a prompt token count (not counted as calls)"
UNKNOWN_TYPE = "Qwen Code chat records of an unknown type (not counted)"


def default_homes() -> list[Path]:
    explicit = os.environ.get("QWEN_HOME")
    if explicit:
        return [Path(explicit).expanduser()]
    base = user_home()
    return [base / ".qwen"] if base else []


def describe(homes: list[Path]) -> list[str]:
    return [f"Qwen Code chats under {home}/projects/*/chats" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        base = home.parent if home.name == "projects" else home  # a .qwen folder, or its projects/
        found += sorted(base.glob(CHATS)) + sorted(base.glob(SUBAGENT_CHATS))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _parts(record: dict) -> list[dict]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return [part for part in parts if isinstance(part, dict)] if isinstance(parts, list) else []


def _response_text(response: object) -> str:
    """A tool's result as the model is sent it: its output, else its error, else the whole response."""
    if isinstance(response, dict):
        for key in ("output", "error"):
            if key in response:
                return as_text(response[key])
    return as_text(response)


def _prompted(record: dict) -> bool:
    """A prompt the person typed (not a background task's result handed over as a user turn)."""
    return record.get("type") == "user" and record.get("subtype") != "notification" and \
        any(isinstance(part.get("text"), str) and part["text"].strip() for part in _parts(record))


def _input(replay: Replay, record: dict) -> None:
    """A user or tool_result record: prompts and tool results, present from the next call."""
    for part in _parts(record):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            replay.tool_result(response.get("id"), _response_text(response.get("response")), response.get("name"))
        elif isinstance(part.get("text"), str):
            replay.add("conversation", part["text"])


def _usage(replay: Replay, metadata: dict) -> tuple[int, dict[str, int]] | None:
    """A call's bill and usage from its usageMetadata; None when it cannot be read (counted)."""
    if "promptTokenCount" not in metadata:
        replay.problems[NO_USAGE] += 1
        return None
    names = ("promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount")
    counts = replay.usage([metadata["promptTokenCount"], *(metadata.get(name, 0) for name in names[1:])], 1)
    if counts is None:
        return None
    prompt, cached, candidates, thoughts = counts
    total = replay.usage([metadata.get("totalTokenCount", 0)], 1)
    output = total[0] - prompt if total and total[0] >= prompt + candidates else candidates + thoughts
    cached = min(cached, prompt)
    return prompt, {"input": prompt - cached, "cache_read": cached, "output": output}


def _answer(replay: Replay, record: dict, continues: bool) -> bool:
    """An assistant record: one API call, its text and tool calls present from the next one; True when billed.
    `continues`: the record before it was a billed reply, which a subagent's chat writes first, without its
    tool calls, then those in a record of their own without usage (0.24.4): that record is the same call's."""
    if isinstance(record.get("model"), str):
        replay.model = record["model"]
    stamp = replay.seen(record.get("timestamp"))
    for part in _parts(record):
        call = part.get("functionCall")
        if isinstance(call, dict):
            replay.tool_call(call.get("id"), call.get("name"), call.get("args"))
        elif isinstance(part.get("text"), str) and not part.get("thought"):
            replay.output("conversation", part["text"])
    metadata = record.get("usageMetadata")
    if continues and "usageMetadata" not in record:
        return False  # the billed call's own tool calls: present from the next call, as its output is
    if not isinstance(metadata, dict):
        replay.problems[NO_USAGE] += 1
        replay.flush()
        return False
    usage = _usage(replay, metadata)
    if usage is None:
        replay.flush()
        return False
    return replay.call(usage[0], usage[1], stamp)


def _compressed(record: dict) -> str:
    """What a chat_compression record says later calls carry instead of the history before it."""
    payload = record.get("systemPayload")
    history = payload.get("compressedHistory") if isinstance(payload, dict) else None
    texts = [as_text(part.get("text")) for content in history if isinstance(content, dict)
             for part in content.get("parts") or [] if isinstance(part, dict)] if isinstance(history, list) else []
    return "\n".join(texts)


def replay_records(replay: Replay, records: list[dict]) -> None:
    billed = False  # the last record read was a billed reply
    for record in records:
        kind = record.get("type")
        if kind in ("user", "tool_result"):
            replay.seen(record.get("timestamp"))
            _input(replay, record)
            billed = False
        elif kind == "assistant":
            billed = _answer(replay, record, billed)
        elif kind == "system":
            if record.get("subtype") == "chat_compression":
                replay.compact(_compressed(record))
        else:
            replay.problems[UNKNOWN_TYPE] += 1


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one chat file (a subagent's: its own row, its parent the session)."""
    try:
        data = read_stated(path)
    except OSError:
        problems["Qwen Code chats that vanished or could not be read"] += 1
        return []
    records = list(json_objects(data, problems, CHAT))
    if not any("type" in record for record in records):  # no chat record at all: no session, said
        holds_no_record(CHAT, data, problems)
        return []
    session_id = next((record["sessionId"] for record in records if isinstance(record.get("sessionId"), str)
                       and record["sessionId"]), path.stem)
    agent_id = next((record["agentId"] for record in records if isinstance(record.get("agentId"), str)), None)
    if path.parent.parent.name == "subagents" and agent_id is None:
        agent_id = path.stem.removeprefix("agent-")
    replay = Replay(TOOLS, counter, problems, ledgers is not None)
    replay_records(replay, records)
    if agent_id is not None:
        row = replay.row(f"{session_id}-{agent_id}", "subagent", parent=session_id)
    else:
        row = replay.row(session_id, "interactive")
        prompts = sum(1 for record in records if _prompted(record))
        if prompts and row["api_calls"]:  # the TUI's suggestion after each turn, if it ran there
            row[unseen.FIELD] = {"qwen_suggestion": prompts}
    if ledgers is not None:
        ledgers[row["id"]] = replay.ledger
    return [row]
