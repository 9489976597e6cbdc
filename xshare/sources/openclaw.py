"""OpenClaw (pi-agent based): one JSONL transcript per session under the state folder
($OPENCLAW_STATE_DIR, else $OPENCLAW_HOME/.openclaw, else ~/.openclaw).

Where. `agents/<agentId>/sessions/<uuid>.jsonl`, with rotated copies `<uuid>.jsonl.reset.<time>` (a
/reset started a new session) and `<uuid>.jsonl.deleted.<time>`: they are sessions that were billed, so
they are read too. `sessions.json` beside them maps session keys to ids: a key with `:subagent:` is
`openclaw/subagent`, with `:cron:` `openclaw/automated`; the others (the person's chats, on any channel)
are `openclaw/interactive`.

What is recorded. Entries `{type, id, parentId, timestamp, ...}`: `session` (the header), `model_change`,
`message` (`user`; `assistant` with `text`/`thinking`/`toolCall {id, name, arguments}` content and its
`usage`; `toolResult {toolCallId, toolName, content}`), `compaction {summary, firstKeptEntryId}`,
`branch_summary`, `custom_message` (an extension's text for the model) and bookkeeping entries.

Usage. Each assistant message is one API call with `usage {input, output, cacheRead, cacheWrite,
totalTokens}`, where `input` excludes cache reads and writes (totalTokens = the four summed): prompt billed
= input + cacheRead + cacheWrite; cache write counted as 5-minute writes. An errored request whose usage is
all zero billed nothing and is no call.

Presence and compaction. A message is present from the call after it. A compaction entry drops every
entry before `firstKeptEntryId` (all of them when that id is unknown) and adds its summary. OpenClaw's
transcript is a tree (`parentId`): a branch the person moved away from stays present until the billing cap
(each call's bill) drops it, as it drops the oldest context first.

Unknown. No reasoning-token figure (output includes it, if billed); the system prompt is overhead.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from xshare.sources import same_file
from xshare.sources.agent_common import Replay, as_text, content_text, parse_json
from xshare.state.paths import home as user_home
from xshare.state.store import loads

AGENT = "openclaw"
NAME = "OpenClaw"
FLAG = "openclaw_home"
KIND = "files"
ROTATED = (".jsonl.reset.", ".jsonl.deleted.")


def default_homes() -> list[Path]:
    state = os.environ.get("OPENCLAW_STATE_DIR")
    if state:
        return [Path(state).expanduser()]
    home = os.environ.get("OPENCLAW_HOME")
    base = Path(home).expanduser() if home else user_home()
    return [base / ".openclaw"] if base else []


def describe(homes: list[Path]) -> list[str]:
    return [f"OpenClaw transcripts under {home}/agents/*/sessions" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        for path in sorted(home.glob("agents/*/sessions/*.jsonl*")):
            if path.name.endswith(".jsonl") or any(mark in path.name for mark in ROTATED):
                found.append(path)
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _groups(folder: Path) -> dict[str, str]:
    """session id -> group, from the folder's sessions.json index (missing or unreadable: none)."""
    try:
        index = loads((folder / "sessions.json").read_bytes())
    except (OSError, ValueError):
        return {}
    groups = {}
    for key, entry in index.items() if isinstance(index, dict) else ():
        session_id = entry.get("sessionId") if isinstance(entry, dict) else None
        if isinstance(session_id, str) and isinstance(key, str):
            groups[session_id] = "subagent" if ":subagent:" in key else "automated" if ":cron:" in key else \
                "interactive"
    return groups


class _Transcript:
    def __init__(self, path: Path, count: Callable[[str], int], problems: Counter, detail: bool) -> None:
        self.replay = Replay(AGENT, count, problems, detail)
        self.session_id = path.name.split(".jsonl", 1)[0]
        self.order: list[str] = []  # entry ids in the order their text became present

    def entry(self, entry: object) -> None:
        if not isinstance(entry, dict):
            return
        replay = self.replay
        stamp = replay.seen(entry.get("timestamp"))
        kind = entry.get("type")
        key = entry.get("id") if isinstance(entry.get("id"), str) else None
        if key:
            self.order.append(key)
        if kind == "session":
            if isinstance(entry.get("id"), str) and entry["id"]:
                self.session_id = entry["id"]
        elif kind == "model_change":
            if isinstance(entry.get("modelId"), str):
                replay.model = entry["modelId"]
        elif kind == "message" and isinstance(entry.get("message"), dict):
            self._message(entry["message"], key, stamp)
        elif kind == "compaction":
            self._compaction(entry)
        elif kind == "branch_summary":
            replay.add("conversation", as_text(entry.get("summary")), key)
        elif kind == "custom_message":
            replay.add("injected", content_text(entry.get("content")), key)

    def _message(self, message: dict, key: str | None, stamp: str | None) -> None:
        replay, role = self.replay, message.get("role")
        if role == "assistant":
            if isinstance(message.get("model"), str):
                replay.model = message["model"]
            for part in message.get("content") if isinstance(message.get("content"), list) else ():
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "toolCall":
                    arguments = part.get("arguments")
                    replay.tool_call(part.get("id"), part.get("name"), parse_json(arguments) or arguments, key)
                else:
                    replay.output("conversation", content_text([part]), key)
            usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
            counts = replay.usage((usage.get(name) for name in ("input", "cacheRead", "cacheWrite", "output")), 3)
            fresh, read, write, output = counts or (0, 0, 0, 0)  # impossible: no call
            counted = {"input": fresh, "cache_read": read, "cache_write_5m": write, "output": output}
            replay.call(counted["input"] + counted["cache_read"] + counted["cache_write_5m"], counted, stamp)
        elif role == "toolResult":
            replay.tool_result(message.get("toolCallId"), content_text(message.get("content")),
                               message.get("toolName"), key)
        elif role == "user":
            replay.add("conversation", content_text(message.get("content")), key)

    def _compaction(self, entry: dict) -> None:
        replay = self.replay
        replay.flush()
        kept = entry.get("firstKeptEntryId")
        if isinstance(kept, str) and kept in self.order:
            ledger, trimmed = replay.ledger, replay.ledger.trimmed
            ledger.trim(self.order[:self.order.index(kept)])
            ledger.trimmed = trimmed  # a compaction, not the agent clearing tool results: counted as one
            if ledger.detail:
                ledger.markers.pop()
            ledger.compactions += 1
            ledger.mark("compaction")
            replay.add("conversation", as_text(entry.get("summary")), entry.get("id"))
        else:
            replay.compact(as_text(entry.get("summary")))


def read(path: Path, count: Callable[[str], int], tokenizer: str, problems: Counter,
         ledgers: dict | None = None) -> list[dict]:
    """The session row of one transcript (with `ledgers`, its detailed ledger too)."""
    try:
        data = path.read_bytes()
    except OSError:
        problems["OpenClaw transcripts that vanished or could not be read"] += 1
        return []
    transcript = _Transcript(path, count, problems, ledgers is not None)
    bad = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            transcript.entry(loads(line))
        except ValueError:
            bad += 1
    if bad:
        problems["OpenClaw transcript lines that are not JSON (skipped)"] += bad
    source = _groups(path.parent).get(transcript.session_id, "interactive")
    row = transcript.replay.row(transcript.session_id, source, tokenizer)
    if ledgers is not None:
        ledgers[row["id"]] = transcript.replay.ledger
    return [row]
