"""The session entries pi's coding agent writes (session header version 3, and OpenClaw's version 4 built on
it), replayed into a ledger: the part OpenClaw's and pi's readers share. Each reader says its name (for its
problems), its tools and its shell tool (how a person's own `!command` is judged); what the entries are, and
how usage and compaction are read, is in agents/openclaw/reader.py's and agents/pi/reader.py's docstrings."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, content_text, parse_json
from xshare.measure.row import SessionRow
from xshare.measure.tool_tables import ToolTable, explain_tool

# entry types and message roles these entries may have; anything else is counted as unknown
BOOKKEEPING = frozenset({"thinking_level_change", "custom", "label", "session_info", "leaf"})
ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage"})


@dataclass(frozen=True)
class EntryKind:
    """Whose entries these are: its name in problems, its tools, the shell tool a `!command` is judged as, and
    the roles it records that are known but hold no text of their own to replay (pi 1.6's `system` message:
    the system prompt, which the first call's overhead already holds)."""
    name: str
    tools: ToolTable
    shell_tool: str
    skipped_roles: frozenset[str] = frozenset()

    @property
    def unknown_entry(self) -> str:
        return f"{self.name} transcript entries of a type this xshare does not know (skipped)"

    @property
    def unknown_role(self) -> str:
        return f"{self.name} messages with a role this xshare does not know (skipped)"

    @property
    def no_usage(self) -> str:
        return f"{self.name} assistant messages without usage (not counted as calls)"


class Transcript:
    """One session's entries, fed in order, replayed into its row and ledger."""

    def __init__(self, kind: EntryKind, session_id: str, counter: TokenCounter, problems: Counter,
                 detail: bool) -> None:
        self.kind = kind
        self.replay = Replay(kind.tools, counter, problems, detail)
        self.problems = problems
        self.session_id = session_id
        self.order: list[str] = []  # entry ids in the order their text became present

    def entry(self, entry: object) -> None:
        if not isinstance(entry, dict):
            return
        replay = self.replay
        stamp = replay.seen(entry.get("timestamp"))
        kind = entry.get("type")
        key = value if isinstance(value := entry.get("id"), str) else None
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
        elif kind in ("compaction", "reset"):
            self._compaction(entry)
        elif kind == "branch_summary":
            replay.add("conversation", as_text(entry.get("summary")), key)
        elif kind == "custom_message":
            replay.add("injected", content_text(entry.get("content")), key)
        elif not isinstance(kind, str) or kind not in BOOKKEEPING:
            self.problems[self.kind.unknown_entry] += 1

    def _message(self, message: dict, key: str | None, stamp: str | None) -> None:
        replay, role = self.replay, message.get("role")
        if isinstance(role, str) and role in self.kind.skipped_roles:
            return
        if not isinstance(role, str) or role not in ROLES:
            self.problems[self.kind.unknown_role] += 1
            return
        if message.get("excludeFromContext") is True:  # kept for the person, never sent to the model
            return
        if role == "assistant":
            if isinstance(message.get("model"), str):
                replay.model = message["model"]
            for part in value if isinstance(value := message.get("content"), list) else ():
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "toolCall":
                    arguments = part.get("arguments")
                    replay.tool_call(part.get("id"), part.get("name"), parse_json(arguments) or arguments, key)
                else:
                    replay.output("conversation", content_text([part]), key)
            usage = value if isinstance(value := message.get("usage"), dict) else {}
            if not usage:
                self.problems[self.kind.no_usage] += 1
            self.bill(usage, stamp)
        elif role == "toolResult":
            replay.tool_result(message.get("toolCallId"), content_text(message.get("content")),
                               message.get("toolName"), key)
        elif role == "user":
            replay.add("conversation", content_text(message.get("content")), key)
        elif role == "bashExecution":  # the person's own `!command`: judged as the agent's shell tool would be
            command = value if isinstance(value := message.get("command"), str) else ""
            category = explain_tool(self.kind.tools, self.kind.shell_tool, {"command": command}).category
            replay.add(category, f"{command}\n{as_text(message.get('output'))}".strip(), key)
        else:  # custom, hookMessage: an extension's text for the model
            replay.add("injected", content_text(message.get("content")), key)

    def bill(self, usage: dict, stamp: str | None) -> None:
        """One API call from its `usage {input, output, cacheRead, cacheWrite}` (input excludes the cache's
        parts, so the prompt billed is the three summed); an all-zero usage billed nothing and is no call."""
        replay = self.replay
        counts = replay.usage((usage.get(name) for name in ("input", "cacheRead", "cacheWrite", "output")), 3)
        fresh, read, write, output = counts or (0, 0, 0, 0)  # impossible: no call
        counted = {"input": fresh, "cache_read": read, "cache_write_5m": write, "output": output}
        replay.call(counted["input"] + counted["cache_read"] + counted["cache_write_5m"], counted, stamp)

    def _compaction(self, entry: dict) -> None:
        """A compaction (or a reset: no summary) drops the entries before its first kept one."""
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

    def row(self, source: str, ledgers: dict | None) -> SessionRow:
        """The session's row (its ledger kept in `ledgers` by id, when given)."""
        row = self.replay.row(self.session_id, source)
        if ledgers is not None:
            ledgers[row["id"]] = self.replay.ledger
        return row
