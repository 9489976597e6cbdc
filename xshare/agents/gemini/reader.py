"""Gemini CLI: one chat file per session under ~/.gemini/tmp/<project>/chats/ ($GEMINI_CLI_HOME/.gemini
when that variable is set).

Where. `session-<time>-<id8>.json` (2025 to March 2026: a ConversationRecord `{sessionId, startTime,
lastUpdated, messages, kind?}`, rewritten whole on each update) and, from April 2026, `session-*.jsonl`: a
header line `{sessionId, ..., kind}`, then message records appended as they fill in (the same `id` again:
the last record of an id wins, in the place its first one took), `{"$set": {...}}` updates, and in the
A2A server's files `{"$set": {"messages": [...]}}` replacing the whole list. `kind` "main" (or none) is
`gemini/interactive`; any other kind (a subagent's chat) is `gemini/subagent`. 0.61's subagents (the
`invoke_agent` tool) write each run's chat, kind "subagent", to `chats/<parent session id>/<run id>.jsonl`,
in the same format; its calls are billed apart from the parent's, so it is a row of its own. `logs.json` and
`checkpoint-*.json` in the same folders are prompt history and /chat saves, not sessions.

Usage. Each `gemini` message carries the `tokens` of the one API response that produced it: `{input,
output, cached, thoughts, tool, total}`, per call, not cumulative. `cached` is part of `input`: prompt
billed = input; cache read = cached; input (uncached) = the difference; output = output + thoughts; cache
write: none (Gemini's implicit caching has no write charge). The model is the message's `model`.

Resumes (0.61). `--resume` within the same minute appends the whole history again as one `$set` of
`messages`, under the ids it had but without `tokens` (and with each tool result split into a `<id>_response`
user message): a record that carried a bill keeps it, so each billed call is counted once. Resumed in a
later minute, the CLI writes a new file (`session-<later time>-<id8>.jsonl`) holding only the header and
the session context, and goes on appending to the first file: a file without calls whose twin in the
folder has the same session id is not a session of its own.

One id, several files. Before /clear gave the chat a new id (2026), it started a new file under the same id
(`252bf0d8` of the corpus: its second file's first call carries none of the first's context), and Gemini
CLI's own session list keeps one session an id. So the files of the folder holding one session id (and a
billed call) are one session, its row the first file's: a message two of them hold (the same id: a copy)
counts once, and a file that repeats none of the earlier ones' messages starts a new conversation, whose
calls carry nothing said before it (`_replay_chats`). The others have no row, said on stderr.

Presence. User messages, the model's text, its tool calls (`toolCalls[].args`) and their results (which
Gemini CLI stores inside the call, `result[].functionResponse.response`) are present from the next call.
Thoughts are not sent back, so they are not counted; `info` and `error` messages are UI notices, never
sent. Gemini CLI writes no record of its chat compression, so the billing cap (each call's bill) is what
drops the oldest messages after one.

Injected and unseen. The `<session_context>` user turn the CLI writes first (date, OS, folders and a
listing of up to 200 entries) is injected context, as Codex's `<environment_context>` is. With the model on
auto (the default), the CLI asks a router model which model should answer each prompt; that request is
billed and recorded nowhere, and the file does not say whether the model was on auto: a row names up to one
such call per prompt (`unseen_calls`, agents/common/unseen.py), never counted.

Unknown. A gemini message without `tokens` (a cancelled request) is no call; a message of a type other than
user, gemini, info, error and warning is counted on stderr and left out; the version is not recorded. A file
that holds no chat record (valid JSON of another shape: an array, as logs.json and checkpoints are, an object
with no list of messages, messages that are all arrays) is no session, counted on stderr, never a session with
no calls; an empty one is still being created.
Checked against: Gemini CLI 0.61.0 driven offline (tests/agents/gemini/test_realhost.py, its TUI in
tests/agents/gemini/test_tui.py, a subagent in tests/agents/gemini/test_subagents.py), and the 2025-26 files of
`../shared/corpus`.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.common import same_file, unseen
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, content_text, holds_no_record, json_objects, names_by
from xshare.agents.common.sniff import one_document
from xshare.agents.common.stated import read_stated
from xshare.agents.gemini.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home
from xshare.state.store import loads

AGENT = "gemini"
NAME = "Gemini CLI"
FLAG = "gemini_home"
KIND = "files"
CHAT = "Gemini CLI chat"  # what its problems call the files and lines they were met in
# the CLI's own context about the machine and the folder (a listing of up to 200 entries), sent as a user turn:
# injected context, as Codex's <environment_context> and Claude Code's reminders are
INJECTED_PREFIXES = ("<session_context>",)
NOTICES = frozenset({"info", "error", "warning"})  # the CLI's notices to the person, never sent to the model
# 0.61's subagents (`invoke_agent`): each run's chat, kind "subagent", in a folder named for the parent session
SUBAGENT_CHATS = "*/chats/*-*-*-*-*/*.jsonl"
A2A_ID = "a2a-server"  # the id the A2A server gives every chat
SAME_SESSION = ("Gemini CLI chats of a session an earlier file of the folder holds too (read with it as one "
                "session, each call once)")


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
        found += sorted(base.glob(SUBAGENT_CHATS))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _chat(path: Path, data: bytes, problems: Counter) -> tuple[dict, list[dict]] | None:
    """The session's header and its messages, from either file shape; None, counted, when the file holds no
    chat (not JSON, or JSON of another shape: an array, an object with no list of messages, messages that are
    all arrays): such a file is no session, not a session with no calls."""
    if not one_document(path, data):
        return _appended_chat(data, problems)
    try:
        document = loads(data)
    except ValueError:
        document = None
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list) or (messages and not any(isinstance(m, dict) for m in messages)):
        holds_no_record(CHAT, data, problems)
        return None
    return document, _message_objects(messages, problems)


def _appended_chat(data: bytes, problems: Counter) -> tuple[dict, list[dict]] | None:
    """A JSON Lines chat: its header, then its messages (the last record of each), `$set` updates applied."""
    header: dict = {}
    by_id: dict[str, dict] = {}
    chat_records = 0
    for record in json_objects(data, problems, CHAT):
        update = record.get("$set")
        if isinstance(update, dict):
            chat_records += 1
            if isinstance(update.get("messages"), list):
                by_id = _rewritten(by_id, _message_objects(update["messages"], problems))
            elif "messages" in update:
                problems["Gemini CLI chat updates whose messages are not a list (skipped)"] += 1
            header.update({key: value for key, value in update.items() if key != "messages"})
        elif "sessionId" in record and "type" not in record:
            chat_records += 1
            header = {**record, **header}  # the first header wins (the A2A server writes it again)
        elif record.get("id") is not None and "type" in record:
            chat_records += 1
            by_id[str(record["id"])] = record  # the latest record of a message replaces its earlier ones
    if not chat_records:
        holds_no_record(CHAT, data, problems)
        return None
    return header, list(by_id.values())


def _message_objects(messages: list, problems: Counter) -> list[dict]:
    """The messages that are objects; any other (an array, a number) is counted and left out."""
    kept = [message for message in messages if isinstance(message, dict)]
    if len(kept) < len(messages):
        problems["Gemini CLI chat messages that are not JSON objects (skipped)"] += len(messages) - len(kept)
    return kept


def _billed(message: object) -> bool:
    return isinstance(message, dict) and isinstance(message.get("tokens"), dict)


def _rewritten(by_id: dict[str, dict], messages: list[dict]) -> dict[str, dict]:
    """A `$set` of the whole list. The A2A server sends its history so; a resume within the same minute
    (0.61) appends the history again without `tokens`, under the ids it had: a record that carried a bill
    keeps it (and its tool results), and a billed record the list leaves out stays, so each billed call
    is counted once."""
    merged = {key: old for key, old in by_id.items() if _billed(old)}
    listed: dict[str, dict] = {}
    for index, message in enumerate(messages):
        key = str(message["id"]) if message.get("id") is not None else f"#{index}"
        old = by_id.get(key)
        listed[key] = old if old is not None and _billed(old) and not _billed(message) else message
    for key in listed:
        merged.pop(key, None)
    return {**merged, **listed}


def _result_text(call: dict) -> str:
    parts = []
    for item in value if isinstance(value := call.get("result"), list) else ():
        response = item.get("functionResponse") if isinstance(item, dict) else None
        if isinstance(response, dict):
            inner = response.get("response")
            output = inner.get("output") if isinstance(inner, dict) and "output" in inner else inner
            parts.append(as_text(output))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
    return "\n".join(parts)


def replay_messages(replay: Replay, messages: list[dict]) -> int:
    """Replays a chat's messages; returns its prompts (each one the model router may have been asked about)."""
    prompts = 0
    for message in messages:
        stamp = replay.seen(message.get("timestamp"))
        kind = message.get("type")
        if kind == "user":
            text = content_text(message.get("content"))
            injected = text.lstrip().startswith(INJECTED_PREFIXES)
            prompts += 1 if text.strip() and not injected else 0
            replay.add("injected" if injected else "conversation", text)
        elif kind == "gemini":
            if isinstance(message.get("model"), str):
                replay.model = message["model"]
            tokens = value if isinstance(value := message.get("tokens"), dict) else {}
            counts = replay.usage((tokens.get(name) for name in ("input", "cached", "output", "thoughts")), 1)
            prompt, cached, output, thoughts = counts or (0, 0, 0, 0)  # impossible: no call, as when cancelled
            cached = min(cached, prompt)
            usage = {"input": prompt - cached, "cache_read": cached, "output": output + thoughts}
            replay.output("conversation", content_text(message.get("content")))
            calls = value if isinstance(value := message.get("toolCalls"), list) else []
            for call in calls:
                if isinstance(call, dict):
                    replay.tool_call(call.get("id"), call.get("name"), call.get("args"))
            replay.call(prompt, usage, stamp)
            for call in calls:
                if isinstance(call, dict) and call.get("result") is not None:
                    replay.tool_result(call.get("id"), _result_text(call), call.get("name"))
        elif not isinstance(kind, str) or kind not in NOTICES:
            replay.problems["Gemini CLI chat messages of an unknown type (not counted)"] += 1
    return prompts


def _session_of_name(name: str) -> str | None:
    """The start of the session id a chat file is named for (`session-<time>-<id8>.json`, `.jsonl`); None for
    any other file. The A2A server's chats all end `-a2a-serv` and are each a session of their own."""
    if not name.startswith("session-") or not name.endswith((".json", ".jsonl")):
        return None
    short = name.rsplit(".", 1)[0].rsplit("-", 1)[-1]
    return None if short == A2A_ID[:8] else short


def session_files(path: Path) -> list[Path]:
    """The chat files of this one's folder named for the same session (the first 8 characters of its id), in
    name order, which is their start's: they may hold one session between them (see `session_file`)."""
    short = _session_of_name(path.name)
    names = names_by(path.parent, _session_of_name).get(short, ()) if short is not None else ()
    return [path.parent / name for name in names] or [path]


def _same_session(path: Path, session_id: str, own: tuple[dict, list[dict]]) -> list[tuple[Path, dict, list[dict]]]:
    """Of this file's `session_files`, those holding this session (its id in their header), with their header
    and messages (this file's given: `own`); another file's problems are counted when it is read itself."""
    chats = []
    for other in session_files(path):
        if other.name == path.name:
            chats.append((path, *own))
            continue
        try:
            chat = _chat(other, read_stated(other), Counter())
        except OSError:
            continue
        if chat is not None and chat[0].get("sessionId") == session_id:
            chats.append((other, *chat))
    return chats


def _session_chats(chats: list[tuple[Path, dict, list[dict]]]) -> list[tuple[Path, dict, list[dict]]]:
    """The files one session's row is read from: those holding a billed call, from the first (the row is that
    file's); the first file when none does. A file of the session without a call is none of them: 0.61's
    stub, written when a resume in a later minute goes on appending to the first file."""
    billed = [chat for chat in chats if any(_billed(message) for message in chat[2])]
    return billed or chats[:1]


def session_file(path: Path) -> Path:
    """The chat file whose row is this file's session: itself, unless an earlier file of the folder holds the
    same session id and a billed call (Gemini CLI before /clear gave a new id started a new file under the
    same id; any version may hold a copy), or this file holds none and a later one does."""
    try:
        chat = _chat(path, read_stated(path), Counter())
    except OSError:
        return path
    session_id = chat[0].get("sessionId") if chat else None
    if chat is None or not isinstance(session_id, str) or not session_id or session_id == A2A_ID:
        return path
    return _session_chats(_same_session(path, session_id, chat))[0][0]


def _replay_chats(replay: Replay, chats: list[tuple[Path, dict, list[dict]]]) -> int:
    """One session's chat files replayed as one (returns its prompts): a message another of its files holds too
    (the same id) is read where it came first, with its bill, so each call counts once. A file that repeats
    none of the earlier files' messages is a new conversation under the same id (a /clear): what was said
    before is not sent again."""
    seen: set[str] = set()
    prompts = 0
    for index, (_, header, messages) in enumerate(chats):
        ids = {str(message["id"]) for message in messages if message.get("id") is not None}
        if index and not ids & seen:
            replay.start_over()
        replay.seen(header.get("startTime"))
        prompts += replay_messages(replay, [message for message in messages
                                            if message.get("id") is None or str(message["id"]) not in seen])
        replay.seen(header.get("lastUpdated"))
        seen |= ids
    return prompts


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one chat file, read with the other files of its session (with `ledgers`, its
    detailed ledger too); none when another file's row is the session's."""
    try:
        data = read_stated(path)
    except OSError:
        problems["Gemini CLI chats that vanished or could not be read"] += 1
        return []
    chat = _chat(path, data, problems)
    if chat is None:
        return []
    header, messages = chat
    session_id = header.get("sessionId")
    if not isinstance(session_id, str) or not session_id or session_id == A2A_ID:
        session_id = path.stem  # the A2A server gives every chat the same id; the file name is unique
        chats = [(path, header, messages)]
    else:
        chats = _session_chats(_same_session(path, session_id, chat))
        if chats[0][0].name != path.name:
            if any(_billed(message) for message in messages):  # a stub, holding no call, is no one's news
                problems[SAME_SESSION] += 1
            return []
    replay = Replay(TOOLS, counter, problems, ledgers is not None)
    prompts = _replay_chats(replay, chats)
    kind = header.get("kind")
    source = "interactive" if kind in (None, "main") else "subagent"
    row = replay.row(session_id, source)
    if prompts and row["api_calls"]:  # a subagent's run asks the router too (0.61, model on auto)
        row[unseen.FIELD] = {"gemini_router": prompts}
    if ledgers is not None:
        ledgers[row["id"]] = replay.ledger
    return [row]
