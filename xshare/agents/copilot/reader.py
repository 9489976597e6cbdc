"""GitHub Copilot CLI (npm `@github/copilot`): one events file per session under $COPILOT_HOME (default ~/.copilot).

Where. `session-state/<session uuid>/events.jsonl`, beside the session's `workspace.yaml` (id, cwd, name),
checkpoints and file snapshots. A resume (`--resume=<id>`, `--continue`) appends to the same file.

What is recorded. Every line is `{type, data, id, timestamp, parentId}`. `session.start` (sessionId,
copilotVersion, context.cwd) opens the file; `session.resume` marks a resume. `user.message` holds the prompt
as typed (`content`) and as sent (`transformedContent`, with a `<current_datetime>` prefix); `system.message`
the system prompt (overhead, as every agent's base prompt is). `assistant.message` holds the reply's
`content` and its `toolRequests` (`toolCallId`, `name`, `arguments` as an object); `assistant.reasoning` the
thinking text; `tool.execution_complete` the result (`result.content`, what the model is sent; the
`detailedContent` diff is shown to the person only). Events of the UI and of bookkeeping (turn starts and
ends, `tool.execution_start`, `subagent.*`, `session.model_change`, hooks, permissions ...) say nothing
sent, nor do the `model.*` events a compaction writes (its request, response and a snapshot of the messages).
`session.compaction_complete` (`/compact`, or automatic) holds the summary request's usage
(`compactionTokensUsed`, the usage record's shape): that request carried the history and is one call, which
neither a usage record nor the shutdown totals count; then the history is its `summaryContent`.

Usage. One API call = one `session.usage_record` line (`data.usage`: inputTokens, outputTokens,
cacheReadTokens, cacheWriteTokens, model, apiCallId), written just before the `assistant.message` it
produced. `inputTokens` is the whole prompt billed (the cache reads and writes are part of it, as the
provider's `prompt_tokens` is): input (uncached) = inputTokens - cacheRead - cacheWrite; a cache write is
counted as a 5-minute one (no duration is recorded). `apiCallId` is the provider's response id, which may
repeat across runs, so every record is a call. `session.shutdown`
holds the session's per-model totals (`modelMetrics`: requests, usage), cumulative over resumes: a
session-level bill, compared with the records' sum; more requests there than records is said on stderr.

Subagents. A `task` call runs a subagent inside the same file: its usage records, assistant messages and
turns carry `parentToolCallId` (the task's call id); its prompt is a `user.message` whose `source` starts
with "agent-", between `subagent.started` and `subagent.completed`. Each subagent is a thread of the
session's ledger (its own context and overhead); the task's result joins the parent's thread.

Unknown. A line type no version seen writes (the 1.0.102 schema's event types are known), or a usage
record without usage, is counted on stderr and left out; a session whose file holds only session totals (no
usage records) is counted with no call and an unknown share (`usage_unknown`), never as zero.
Checked against: GitHub Copilot CLI 1.0.102 (`@github/copilot` + `@github/copilot-linux-x64`) driven offline
against a fake OpenAI-compatible server (`COPILOT_OFFLINE`, `COPILOT_PROVIDER_BASE_URL`: print mode, a
resume, a `task` subagent; the TUI in tmux, which writes the same events) and a fake Anthropic one
(`COPILOT_PROVIDER_TYPE=anthropic`: `inputTokens` is then input + cache_read + cache_creation, the same whole
prompt); tests/agents/copilot/test_realhost.py; `/compact` in print mode. Not seen: usage through GitHub's own
model routing (it needs a sign-in), an automatic compaction.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from xshare.agents.common import same_file
from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.replay import Replay, as_text, holds_no_record, json_objects, number
from xshare.agents.common.stated import read_stated
from xshare.agents.copilot.tools import TOOLS
from xshare.measure.row import SessionRow
from xshare.state.paths import home as user_home

AGENT = "copilot"
NAME = "GitHub Copilot CLI"
FLAG = "copilot_home"
KIND = "files"
EVENTS = "Copilot CLI events file"  # what its problems call the files and lines they were met in
TOTALS_ONLY = "Copilot CLI recorded this session's usage as session totals only, not per call"
# the event families of 1.0.102's schema that say nothing sent to the model (UI, bookkeeping, telemetry)
SILENT_PREFIXES = ("assistant.", "tool.", "subagent.", "session.", "hook.", "permission.", "skill.", "mcp",
                   "elicitation.", "user_input.", "workflow", "command", "external_tool.", "sampling.",
                   "exit_plan_mode.", "auto_mode_switch.", "system.", "user.", "abort", "model.",
                   "shell_", "capabilities.", "pending_messages.", "session_limits_exhausted.", "human_response.",
                   "tool_search.", "ui.", "sandbox.", "agent", "prompt_cache_break", "instruction_discovered",
                   "new_inbox_message")
AGGREGATED = "Copilot CLI compactions whose usage sums several requests (counted as one call)"
FEWER_RECORDS = "Copilot CLI sessions whose totals hold more requests than their usage records (not counted)"


def default_homes() -> list[Path]:
    explicit, home = os.environ.get("COPILOT_HOME"), user_home()
    return [Path(explicit).expanduser()] if explicit else [home / ".copilot"] if home else []


def describe(homes: list[Path]) -> list[str]:
    return [f"GitHub Copilot CLI sessions under {home}/session-state" for home in homes]


def discover(homes: list[Path]) -> list[Path]:
    found: list[Path] = []
    for home in homes:
        base = home / "session-state"
        if base.is_dir():
            found += sorted(base.glob("*/events.jsonl"))
    return same_file.unique_files(found)  # a file reached twice (a symlinked home, a hard link) is read once


class _Session:
    def __init__(self, path: Path, counter: TokenCounter, problems: Counter, detail: bool) -> None:
        self.problems = problems
        self.replay = Replay(TOOLS, counter, problems, detail)
        self.session_id = path.parent.name
        self.records = 0  # usage records read: the calls
        self.totals_requests: int | None = None  # the last session.shutdown's requests, over its models
        self.call_threads: dict[str, str] = {}  # a tool call id -> the thread whose model asked for it
        self.open_subagents: list[str] = []  # task call ids of subagents started and not yet completed

    def line(self, row: object) -> None:
        if not isinstance(row, dict):
            return
        kind, data = row.get("type"), row.get("data")
        stamp = self.replay.seen(row.get("timestamp"))
        if not isinstance(kind, str) or not isinstance(data, dict):
            self.problems["Copilot CLI event lines of an unknown shape (skipped)"] += 1
            return
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, data, stamp)
        elif not kind.startswith(SILENT_PREFIXES):
            self.problems["Copilot CLI event lines of an unknown type (skipped)"] += 1

    def _thread(self, parent_call: object) -> None:
        """Route what follows to the main thread or to the subagent that a task call started."""
        thread = f"subagent {parent_call}" if isinstance(parent_call, str) and parent_call else "main"
        if thread != self.replay.thread:
            self.replay.flush()  # what one thread produced stays in it
            self.replay.thread = thread

    def _start(self, data: dict, _stamp: str | None) -> None:
        if isinstance(data.get("sessionId"), str) and data["sessionId"]:
            self.session_id = data["sessionId"]

    def _user(self, data: dict, _stamp: str | None) -> None:
        source = data.get("source")
        from_agent = isinstance(source, str) and source.startswith("agent-") and self.open_subagents
        self._thread(self.open_subagents[-1] if from_agent else None)
        text = data.get("transformedContent")
        self.replay.add("conversation", text if isinstance(text, str) else as_text(data.get("content")))

    def _assistant(self, data: dict, _stamp: str | None) -> None:
        self._thread(data.get("parentToolCallId"))
        if isinstance(data.get("model"), str):
            self.replay.model = data["model"]
        self.replay.output("conversation", as_text(data.get("content")))
        for request in value if isinstance(value := data.get("toolRequests"), list) else ():
            if isinstance(request, dict):
                call_id = request.get("toolCallId")
                if isinstance(call_id, str):
                    self.call_threads[call_id] = self.replay.thread
                self.replay.tool_call(call_id, request.get("name"), request.get("arguments"))

    def _reasoning(self, data: dict, _stamp: str | None) -> None:
        self._thread(data.get("parentToolCallId"))
        self.replay.output("conversation", as_text(data.get("content")))

    def _result(self, data: dict, _stamp: str | None) -> None:
        call_id = data.get("toolCallId")
        thread = self.call_threads.get(call_id) if isinstance(call_id, str) else None
        self._thread(thread.removeprefix("subagent ") if thread and thread != "main" else None)
        result = data.get("result")
        text = result.get("content") if isinstance(result, dict) else None
        if text is None and isinstance(data.get("error"), dict):
            text = data["error"].get("message")
        self.replay.tool_result(call_id, as_text(text))

    def _subagent(self, data: dict, _stamp: str | None, started: bool = True) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            return
        if started:
            self.open_subagents.append(call_id)
        elif call_id in self.open_subagents:
            self.open_subagents.remove(call_id)

    def _ended(self, data: dict, stamp: str | None) -> None:
        self._subagent(data, stamp, started=False)

    def _usage(self, data: dict, stamp: str | None) -> None:
        usage = data.get("usage")
        if not isinstance(usage, dict):
            self.problems["Copilot CLI usage records without usage (not counted)"] += 1
            return
        self.records += 1
        self._thread(usage.get("parentToolCallId"))
        self._bill(usage, stamp)

    def _bill(self, usage: dict, stamp: str | None) -> None:
        """One call of a usage record's (or a compaction's) shape: inputTokens the whole prompt."""
        if isinstance(usage.get("model"), str):
            self.replay.model = usage["model"]
        counts = self.replay.usage((usage.get("inputTokens"), usage.get("cacheReadTokens", 0),
                                    usage.get("cacheWriteTokens", 0), usage.get("outputTokens")), prompt_parts=1)
        if counts is None:
            self.replay.call(0, {}, stamp)
            return
        prompt, cache_read, cache_write, output = counts
        cache_read = min(cache_read, prompt)
        cache_write = min(cache_write, prompt - cache_read)
        self.replay.call(prompt, {"input": prompt - cache_read - cache_write, "cache_read": cache_read,
                                  "cache_write_5m": cache_write, "output": output}, stamp)

    def _compacted(self, data: dict, stamp: str | None) -> None:
        """The summary request carried the history; no usage record holds it, only this event (and no
        shutdown total counts it): a call, then the history is the summary."""
        if data.get("success") is False or data.get("outcome") not in (None, "applied"):
            return
        self._thread(None)
        used = data.get("compactionTokensUsed")
        if isinstance(used, dict):
            if number(used.get("requestCount")) > 1:
                self.problems[AGGREGATED] += 1
            self._bill(used, stamp)
        summary = data.get("summaryContent")
        self.replay.compact(summary if isinstance(summary, str) else "")

    def _shutdown(self, data: dict, _stamp: str | None) -> None:
        metrics = data.get("modelMetrics")
        if isinstance(metrics, dict):  # cumulative over resumes: the last one holds the session's totals
            self.totals_requests = sum(number(requests.get("count")) for model in metrics.values()
                                       if isinstance(model, dict)
                                       and isinstance(requests := model.get("requests"), dict))

    def row(self) -> SessionRow:
        self._thread(None)
        totals_only = not self.records and bool(self.totals_requests)
        if self.totals_requests is not None and self.totals_requests > self.records and self.records:
            self.problems[FEWER_RECORDS] += 1
        return self.replay.row(self.session_id, "interactive", None, TOTALS_ONLY if totals_only else None)


_HANDLERS = {
    "session.start": _Session._start,
    "user.message": _Session._user,
    "assistant.message": _Session._assistant,
    "assistant.reasoning": _Session._reasoning,
    "tool.execution_complete": _Session._result,
    "subagent.started": _Session._subagent,
    "subagent.completed": _Session._ended,
    "subagent.failed": _Session._ended,
    "session.usage_record": _Session._usage,
    "session.compaction_complete": _Session._compacted,
    "session.shutdown": _Session._shutdown,
}


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """The session row of one events file (with `ledgers`, its detailed ledger too)."""
    try:
        data = read_stated(path)
    except OSError:
        problems["Copilot CLI events files that vanished or could not be read"] += 1
        return []
    session = _Session(path, counter, problems, ledgers is not None)
    held = 0
    for record in json_objects(data, problems, EVENTS):
        held += 1
        session.line(record)
    if not held:  # no record of Copilot's: no session, not one with no calls
        holds_no_record(EVENTS, data, problems)
        return []
    row = session.row()
    if ledgers is not None:
        ledgers[row["id"]] = session.replay.ledger
    return [row]
