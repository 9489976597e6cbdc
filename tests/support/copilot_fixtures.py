"""Invented GitHub Copilot CLI sessions in the shape 1.0.102 writes (`session-state/<uuid>/events.jsonl`, seen
driving the real CLI offline: agents/copilot/reader.py). Every text, id and number here is made up."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "5d1c0a2e-7b3f-4c8d-9e6a-0f1b2c3d4e5f"
CWD = "/home/ada/orchard"


class Events:
    """Lines of one events file, in order, each with a made-up id and a time a second after the last."""

    def __init__(self) -> None:
        self.lines: list[dict] = []

    def add(self, event: str, **data: object) -> None:
        second = len(self.lines)
        self.lines.append({"type": event, "data": data, "id": f"00000000-0000-4000-8000-{second:012d}",
                           "timestamp": f"2026-11-30T09:{second // 60:02d}:{second % 60:02d}.000Z",
                           "parentId": None})

    def call(self, prompt: int, cached: int, output: int, number: int, parent: str | None = None) -> None:
        usage = {"model": "gpt-4.1", "inputTokens": prompt, "outputTokens": output, "cacheReadTokens": cached,
                 "cacheWriteTokens": 0, "apiCallId": f"chatcmpl-{number}", "initiator": "agent"}
        if parent:
            usage["parentToolCallId"] = parent
        self.add("session.usage_record", usage=usage)

    def asks(self, call_id: str, name: str, parent: str | None = None, text: str = "", **arguments: object) -> None:
        requests = [{"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}] if name else []
        extra = {"parentToolCallId": parent} if parent else {}
        self.add("assistant.message", messageId=f"m-{call_id}", model="gpt-4.1", content=text,
                 toolRequests=requests, **extra)
        if name:
            self.add("tool.execution_start", toolCallId=call_id, toolName=name, arguments=arguments)

    def result(self, call_id: str, content: str) -> None:
        self.add("tool.execution_complete", toolCallId=call_id, success=True,
                 result={"content": content, "detailedContent": "diff --git a/x b/x\n" * 50})

    def write(self, home: Path, session_id: str = SESSION) -> Path:
        path = home / "session-state" / session_id / "events.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def copilot_session(home: Path, resumed: bool = True) -> tuple[Path, dict]:
    """A session: a read, a search, a read-only shell command, an edit, a `task` subagent that reads, and (if
    `resumed`) a resume's call; its totals at each shutdown. Returns the file and what it billed."""
    events = Events()
    events.add("session.start", sessionId=SESSION, version=1, producer="copilot-agent", copilotVersion="1.0.102",
               startTime="2026-11-30T09:00:00.000Z", selectedModel="gpt-4.1", context={"cwd": CWD})
    events.add("user.message", content="tidy the planting notes",
               transformedContent="<current_datetime>2026-11-30</current_datetime>\n\ntidy the planting notes")
    events.add("system.message", role="system", content="You are a made-up assistant. " * 200)
    steps = [("c1", "view", {"path": f"{CWD}/plots.md"}, "apple row 1\npear row 2\n" * 40),
             ("c2", "grep", {"pattern": "pear", "paths": CWD}, f"{CWD}/plots.md\n{CWD}/notes.md"),
             ("c3", "bash", {"command": "cat notes.md", "description": "read notes"}, "plum\n" * 30),
             ("c4", "edit", {"path": f"{CWD}/notes.md", "old_str": "plum", "new_str": "quince"}, "File updated.")]
    calls = [(9000, 0, 20), (9400, 4500, 15), (9500, 4700, 18), (9700, 4800, 30), (9800, 4900, 25),
             (3000, 0, 12), (3300, 1500, 8), (9900, 4950, 6)]
    for number, (call_id, name, arguments, content) in enumerate(steps, 1):
        events.call(*calls[number - 1], number)
        events.asks(call_id, name, **arguments)
        events.result(call_id, content)
    events.call(*calls[4], 5)
    events.asks("c5", "task", description="Look at plots", prompt="Read plots.md", agent_type="explore")
    events.add("subagent.started", toolCallId="c5", agentName="explore", agentType="explore")
    events.add("user.message", content="Read plots.md", transformedContent="Read plots.md", source=f"agent-{SESSION}")
    events.add("system.message", role="system", content="You explore. " * 100)
    events.call(*calls[5], 6, parent="c5")
    events.asks("s1", "view", parent="c5", path=f"{CWD}/plots.md")
    events.result("s1", "apple row 1\npear row 2\n" * 40)
    events.call(*calls[6], 7, parent="c5")
    events.asks("", "", parent="c5", text="Apples and pears.")
    events.add("subagent.completed", toolCallId="c5", agentName="explore")
    events.result("c5", "Apples and pears.")
    events.call(*calls[7], 8)
    events.asks("", "", text="Done: notes tidied.")
    _shutdown(events, calls[:8])
    if resumed:
        events.add("session.resume", resumeTime="2026-11-30T10:00:00.000Z", eventCount=len(events.lines))
        events.add("user.message", content="and the pears?", transformedContent="and the pears?")
        calls.append((10100, 5000, 9))
        events.call(*calls[8], 1)  # a new run: the provider's ids start again
        events.asks("", "", text="Pears are in row 2.")
        _shutdown(events, calls)
    path = events.write(home)
    return path, {"calls": len(calls), "prompt": sum(c[0] for c in calls), "cache_read": sum(c[1] for c in calls),
                  "output": sum(c[2] for c in calls)}


def _shutdown(events: Events, calls: list[tuple[int, int, int]]) -> None:
    usage = {"inputTokens": sum(c[0] for c in calls), "outputTokens": sum(c[2] for c in calls),
             "cacheReadTokens": sum(c[1] for c in calls), "cacheWriteTokens": 0}
    events.add("session.shutdown", shutdownType="routine",
               modelMetrics={"gpt-4.1": {"requests": {"count": len(calls), "cost": 0}, "usage": usage}})


def compacted_session(home: Path) -> tuple[Path, dict]:
    """A read, its answer, then `/compact`: the summary request's usage only in `session.compaction_complete`
    (with the `model.*` events it writes), then a turn on the summary. Returns the file and what it billed."""
    events = Events()
    events.add("session.start", sessionId=SESSION, copilotVersion="1.0.102", context={"cwd": CWD})
    events.add("user.message", content="read plots", transformedContent="read plots")
    events.call(9000, 0, 12, 1)
    events.asks("c1", "view", path=f"{CWD}/plots.md")
    events.result("c1", "apple row 1\npear row 2\n" * 40)
    events.call(9400, 4500, 5, 2)
    events.asks("", "", text="Apples and pears.")
    _shutdown(events, [(9000, 0, 12), (9400, 4500, 5)])
    events.add("session.resume", eventCount=len(events.lines))
    events.add("session.compaction_start", model="gpt-4.1", trigger="manual")
    events.add("model.model_call_success", kind="model_call_success", modelCall={"api_id": "chatcmpl-3"})
    events.add("model.messages_snapshot", kind="messages_snapshot", messages=[{"role": "user", "content": "x"}])
    events.add("session.compaction_complete", success=True, outcome="applied",
               summaryContent="<summary>Plots read.</summary>",
               compactionTokensUsed={"requestCount": 1, "model": "gpt-4.1", "inputTokens": 9900, "outputTokens": 9,
                                     "cacheReadTokens": 4700, "cacheWriteTokens": 0})
    events.add("user.message", content="and now?", transformedContent="and now?")
    events.call(9100, 4400, 4, 1)
    events.asks("", "", text="Nothing else.")
    _shutdown(events, [(9000, 0, 12), (9400, 4500, 5), (9100, 4400, 4)])  # the summary request is not in it
    calls = [(9000, 0, 12), (9400, 4500, 5), (9900, 4700, 9), (9100, 4400, 4)]
    return events.write(home), {"calls": len(calls), "prompt": sum(c[0] for c in calls),
                                "cache_read": sum(c[1] for c in calls), "output": sum(c[2] for c in calls)}
