"""OpenAI Codex CLI: one rollout file per session under $CODEX_HOME (default ~/.codex).

Where. `sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`, archived ones under `archived_sessions/`, and a
fork's legacy `sessions/rollout-<date>-<uuid>.json`. A subagent (e.g. `/review`) writes its own file whose
`session_meta.source` is an object (`{"subagent": "review"}`): group `codex/subagent`; `exec` and `mcp`
sources are `codex/automated`; the CLI, the TUI and the IDE (`cli`, `vscode`) are `codex/interactive`.

What is recorded. From 0.36 every line is `{timestamp, type, payload}`: `session_meta` (id, source,
instructions), `turn_context` (the model, per turn), `response_item` (the model-visible history: messages,
reasoning summaries, `function_call`/`function_call_output`, `custom_tool_call` `apply_patch` and its
output), `event_msg` (UI events, among them `token_count`) and `compacted` (a compaction's summary, and in
newer versions its `replacement_history`). Reads are shell commands: the tool is `shell` (argv list,
0.36-0.55), `shell_command` (a string, 0.63-0.77) or `exec_command` (`cmd`, 0.98+).

Usage. One API call = one `token_count` event whose `total_token_usage` differs from the previous one
(events repeat around task_complete and rate-limit updates); its usage is `last_token_usage`. Totals can
go down after a resume or compaction, so they are never differenced. `cached_input_tokens` is part of
`input_tokens`: prompt billed = input_tokens; cache read = cached_input_tokens; input (uncached) = the
difference; cache write: none (OpenAI has no such charge). The model is the last `turn_context.model`.

Presence and compaction. Each history item is present from the call after it; the model's own items
(reasoning, messages, tool calls) come before their call's `token_count` and join after it. A `compacted`
line drops everything before it; its summary (or its replacement history) is present after. Reasoning is
counted by its summary text: the encrypted reasoning sent back to the model is overhead. The base system
prompt (`base_instructions`) is never counted as a message: it is overhead, as for Claude Code.

0.171. Every response also gets a `token_usage_record` line (its `response_id` and usage) right after the
items it produced; where a file has them they are the calls (a response id and its usage once: the same id
with other usage, as a proxy's constant id gives, is another call, said on stderr), and `token_count` events
only repeat them. The base prompt is sent as the first developer message, equal to
`session_meta.base_instructions.text`: overhead, not injected context. With no model configured, the GPT-6
models work in code mode: one `exec` tool taking JavaScript, judged by the nested calls it ran
(agents/codex/code_mode.py). An app-server session (`source` "vscode": the TUI and the IDE extension) also makes
a title request in a thread of its own that no file records: the row names it (`unseen_calls`,
agents/common/unseen.py), uncounted. The TUI leaves `codex app-server` running after it exits.

Unknown. The oldest format (Aug 2025: a bare header line, then Responses items) and the fork's `.json`
record no token usage at all: such a session is counted, with no call and an unknown share (`usage_unknown`).
A line type or history item type not named here, or a usage record without usage, is counted on stderr and
left out. Checked against: Codex CLI 0.171.0 driven offline (exec, resume, the TUI;
tests/agents/codex/test_realhost.py), and rollouts of 0.40-0.104 in `../shared/corpus`.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.codex.code_mode import CodeMode
from xshare.agents.codex.tools import TOOLS
from xshare.agents.common import same_file, unseen
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import (
    Replay,
    as_text,
    content_text,
    holds_no_record,
    json_objects,
    number,
    parse_json,
)
from xshare.agents.common.sniff import one_document
from xshare.agents.common.stated import read_stated
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home
from xshare.state.store import loads

AGENT = "codex"
NAME = "Codex CLI"
FLAG = "codex_home"
KIND = "files"
ROLLOUT = "Codex rollout"  # what its problems call the files and lines they were met in
NO_USAGE = "Codex before 0.3x recorded no token usage"
LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "compacted", "event_msg",
                        "token_usage_record", "world_state"})
# history items never sent as text: git snapshots for /undo; the tool schemas (overhead, as for every agent)
SILENT_ITEMS = frozenset({"ghost_snapshot", "additional_tools"})
REUSED_RESPONSE = ("Codex usage records whose response id an earlier record had with other usage (a proxy's "
                   "constant id?), each counted as its own call")
TITLED_FROM = (0, 171)  # the first version seen making a title request nothing records (see agents/common/unseen.py)
INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions",
                     "<collaboration_mode>", "<user_shell_command>")


def default_homes() -> list[Path]:
    explicit, home = os.environ.get("CODEX_HOME"), user_home()
    return [Path(explicit).expanduser()] if explicit else [home / ".codex"] if home else []


def describe(homes: list[Path]) -> list[str]:
    return [f"Codex CLI rollouts under {home}/sessions" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        for folder in ("sessions", "archived_sessions"):
            base = home / folder
            if base.is_dir():
                found += sorted(base.rglob("rollout-*.jsonl")) + sorted(base.glob("rollout-*.json"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


def _source(source: object) -> tuple[str, str | None]:
    """(group, parent thread id) of a session_meta source."""
    if isinstance(source, dict):
        parent = _find(source, "parent_thread_id")
        return "subagent", parent
    if source in ("exec", "mcp"):
        return "automated", None
    return "interactive", None


def _find(value: object, key: str) -> str | None:
    if isinstance(value, dict):
        if isinstance(value.get(key), str):
            return value[key]
        for inner in value.values():
            found = _find(inner, key)
            if found:
                return found
    return None


class _Rollout:
    def __init__(self, path: Path, counter: TokenCounter, problems: Counter, detail: bool) -> None:
        self.path, self.problems = path, problems
        self.replay = Replay(TOOLS, counter, problems, detail)
        self.session_id = path.stem.removeprefix("rollout-")
        self.source = "interactive"
        self.parent: str | None = None
        self.total: tuple | None = None
        self.usage_seen = False
        self.meta_seen = False
        self.records = False  # 0.171+: a token_usage_record per response, so token_count events are not calls
        self.responses: dict[str, set[tuple]] = {}  # a response id -> the usages recorded under it
        self.base_prompt: str | None = None
        self.titled = False  # an app-server session (TUI, IDE) of a version known to make a title request
        self.code = CodeMode(self.replay)

    def line(self, row: object) -> None:
        if not isinstance(row, dict):
            return
        replay = self.replay
        stamp = replay.seen(row.get("timestamp"))
        kind, payload = row.get("type"), row.get("payload")
        if kind is None and "payload" not in row:  # the oldest format: bare items after a header line
            if "instructions" in row and "id" in row and not self.meta_seen:
                self._meta(row)
            elif "record_type" not in row:  # {"record_type": "state"} lines mark saves, nothing sent
                self.item(row)
            return
        if not isinstance(payload, dict):
            return
        if not isinstance(kind, str) or kind not in LINE_TYPES:
            self.problems["Codex rollout lines of an unknown type (skipped)"] += 1
            return
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                replay.model = payload["model"]
        elif kind == "response_item":
            self.item(payload)
        elif kind == "compacted":
            self._compacted(payload)
        elif kind == "token_usage_record":
            self._usage_record(payload, stamp)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self._token_count(payload, stamp)
        elif kind == "event_msg" and payload.get("type") == "item_completed":
            self.code.nested(payload.get("item"))

    def _meta(self, meta: dict) -> None:
        if self.meta_seen:
            return  # a resumed session repeats its meta
        self.meta_seen = True
        if isinstance(meta.get("id"), str) and meta["id"]:
            self.session_id = meta["id"]
        self.source, self.parent = _source(meta.get("source"))
        self.replay.seen(meta.get("timestamp"))
        base = meta.get("base_instructions")
        base = base.get("text") if isinstance(base, dict) else base
        self.base_prompt = base if isinstance(base, str) and base else None
        self.titled = meta.get("source") == "vscode" and _version(meta.get("cli_version")) >= TITLED_FROM
        instructions = meta.get("instructions")
        if isinstance(instructions, str):
            self.replay.add("injected", instructions)  # the user's AGENTS.md, not the base prompt

    def item(self, item: dict) -> None:
        replay, kind = self.replay, item.get("type")
        if kind == "message":
            text = content_text(item.get("content"))
            role = item.get("role")
            if role == "assistant":
                replay.output("conversation", text)
            elif role == "developer" and text == self.base_prompt:
                return  # 0.171 sends the base prompt as the first developer message: overhead, as before
            elif role in ("developer", "system") or text.lstrip().startswith(INJECTED_PREFIXES):
                replay.add("injected", text)
            else:
                replay.add("conversation", text)
        elif kind == "reasoning":
            summary = item.get("summary")
            replay.output("conversation", content_text(summary) if isinstance(summary, list) else "")
        elif kind == "custom_tool_call" and item.get("name") == "exec":
            self.code.call(item.get("call_id"), item.get("input"))
        elif kind == "custom_tool_call_output" and self.code.is_open(call_id := item.get("call_id")):
            assert isinstance(call_id, str)  # is_open holds only str ids
            self.code.result(call_id, _output_text(item.get("output")))
        elif kind in ("function_call", "custom_tool_call"):
            arguments = item.get("arguments") if kind == "function_call" else {"input": item.get("input")}
            replay.tool_call(item.get("call_id"), item.get("name"), parse_json(arguments) or arguments)
        elif kind == "local_shell_call":
            action = value if isinstance(value := item.get("action"), dict) else {}
            replay.tool_call(item.get("call_id"), "local_shell", {"command": action.get("command")})
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            output = item.get("output")
            replay.tool_result(item.get("call_id"), _output_text(output))
        elif kind == "web_search_call":
            replay.output("web", as_text(item.get("action")))
        elif not isinstance(kind, str) or kind not in SILENT_ITEMS:
            self.problems["Codex history items of an unknown type (not counted)"] += 1

    def _compacted(self, payload: dict) -> None:
        replay = self.replay
        history = payload.get("replacement_history")
        replay.compact(value if isinstance(value := payload.get("message"), str) else "")
        for item in history if isinstance(history, list) else ():
            if isinstance(item, dict):
                self.item(item)
        replay.flush()

    def _usage_record(self, payload: dict, stamp: str | None) -> None:
        """0.171+: one record per response, right after the items the response produced."""
        usage, response = payload.get("usage"), payload.get("response_id")
        if not isinstance(usage, dict):
            self.problems["Codex usage records without usage (not counted)"] += 1
            return
        self.usage_seen = True
        if isinstance(response, str) and response:
            recorded = self.responses.setdefault(response, set())
            same = tuple(sorted((str(name), repr(value)) for name, value in usage.items()))
            if same in recorded:
                return  # the same response recorded again
            if recorded:  # another usage under one id: another call (a proxy's constant id?), not folded
                self.problems[REUSED_RESPONSE] += 1
            recorded.add(same)
        self._call(usage, stamp)

    def _token_count(self, payload: dict, stamp: str | None) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        if not isinstance(total, dict) or not isinstance(last, dict):
            return
        self.usage_seen = True
        key = tuple(sorted((name, number(value)) for name, value in total.items()))
        if key == self.total or self.records:
            return  # the same total again (no new request), or the calls come from usage records
        self.total = key
        self._call(last, stamp)

    def _call(self, last: dict, stamp: str | None) -> None:
        self.code.before_call()
        counts = self.replay.usage((last.get("input_tokens"), last.get("cached_input_tokens"),
                                    last.get("output_tokens")), prompt_parts=1)
        if counts is None:
            self.replay.call(0, {}, stamp)
            self.code.after_call()
            return
        prompt, cached, output = counts
        cached = min(cached, prompt)
        usage = {"input": prompt - cached, "cache_read": cached, "output": output}
        self.replay.call(prompt, usage, stamp)
        self.code.after_call()

    def row(self) -> SessionRow:
        self.code.close()
        unknown = None if self.usage_seen else NO_USAGE
        row = self.replay.row(self.session_id, self.source, self.parent, unknown)
        if self.titled and self.source == "interactive" and row["api_calls"]:
            row[unseen.FIELD] = {"codex_title": 1}
        return row


def _version(text: object) -> tuple[int, ...]:
    """A cli_version such as '0.171.0' as numbers; () when it is not one."""
    parts = text.split(".") if isinstance(text, str) else []
    return tuple(int(part) for part in parts[:3]) if parts and all(p.isdecimal() for p in parts[:3]) else ()


def _output_text(output: object) -> str:
    """A tool output: older versions wrap it as a JSON string {"output": ..., "metadata": ...}."""
    if isinstance(output, str) and output.startswith("{"):
        parsed = parse_json(output)
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            return parsed["output"]
    if isinstance(output, list):
        return content_text(output)
    return as_text(output)


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one rollout file (with `ledgers`, its detailed ledger too)."""
    try:
        data = read_stated(path)
    except OSError:
        problems["Codex rollouts that vanished or could not be read"] += 1
        return []
    rollout = _Rollout(path, counter, problems, ledgers is not None)
    rollout.records = b'"token_usage_record"' in data
    held: int  # records read (a legacy document: one, or none)
    if one_document(path, data):
        held = _legacy_json(rollout, data)
    else:
        held = 0
        for record in json_objects(data, problems, ROLLOUT):
            held += 1
            rollout.line(record)
    if not held:  # no record of Codex's: no session, not one with no calls
        holds_no_record(ROLLOUT, data, problems)
        return []
    row = rollout.row()
    if ledgers is not None:
        ledgers[row["id"]] = rollout.replay.ledger
    return [row]


def _legacy_json(rollout: _Rollout, data: bytes) -> bool:
    """The fork's `{session: {...}, items: [...]}` with chat-completions items; no usage. False when the file
    holds no such document (a JSON array, an object with neither)."""
    try:
        document = loads(data)
    except ValueError:
        document = None
    if not isinstance(document, dict) or not (isinstance(document.get("session"), dict)
                                              or isinstance(document.get("items"), list)):
        return False
    if isinstance(document.get("session"), dict):
        rollout._meta(document["session"])
    replay = rollout.replay
    for item in value if isinstance(value := document.get("items"), list) else ():
        if not isinstance(item, dict):
            continue
        role, text = item.get("role"), content_text(item.get("content"))
        if role == "assistant":
            replay.output("conversation", text)
            for call in value if isinstance(value := item.get("tool_calls"), list) else ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    arguments = function.get("arguments")
                    replay.tool_call(call.get("id"), function.get("name"), parse_json(arguments) or arguments)
        elif role == "tool":
            replay.tool_result(item.get("tool_call_id"), text)
        elif role in ("user", "system", "developer"):
            replay.add("conversation" if role == "user" else "injected", text)
    return True
