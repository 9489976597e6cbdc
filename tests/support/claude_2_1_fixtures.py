"""Invented Claude Code 2.1.3xx sessions in the row shapes 2.1.332 writes, with a simulated provider.

Every call the simulated provider bills, recorded or not, goes into `Provider.calls`, so a test can
compare xshare's figures with what was billed without copying any expected number. Content is made up.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_TEXT = "You are a coding agent working in an invented repository. " * 40
TOOLS = [{"name": name, "description": f"The {name} tool. " * 30, "input_schema": {"type": "object"}}
         for name in ("Read", "Bash", "Grep", "Agent")]
OVERHEAD = 900  # what the simulated provider bills for system prompt and tools on every call
ORPHAN_SESSION = "5b0e9a1c-0d2e-4f3a-8b4c-5d6e7f8091a2"  # its subagents' files remain, its own is gone


def chars(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass
class Provider:
    """Bills every call: its overhead plus the chars/4 size of what it carried."""

    calls: list[int] = field(default_factory=list)
    output: int = 0

    def bill(self, prompt: int) -> dict:
        self.calls.append(prompt)
        self.output += 20
        read = prompt // 2
        return {"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": prompt - 3 - read,
                "output_tokens": 20}

    def totals(self, model: str = "claude-opus-5-5") -> dict:
        prompt = sum(self.calls)
        read = sum(call // 2 for call in self.calls)
        inputs = 3 * len(self.calls)
        return {model: {"inputTokens": inputs, "outputTokens": self.output, "cacheReadInputTokens": read,
                        "cacheCreationInputTokens": prompt - inputs - read, "cacheCreationEphemeral5mInputTokens": 0,
                        "cacheCreationEphemeral1hInputTokens": 0, "webSearchRequests": 0, "costUSD": 0.01}}


class NewSession:
    """One transcript file (main or subagent) in the 2.1.332 layout."""

    def __init__(self, provider: Provider, session_id: str = "9d0c3a57-1e2f-4b6a-8c7d-0e1f2a3b4c5d", *,
                 entrypoint: str = "cli", agent_id: str | None = None) -> None:
        self.provider = provider
        self.session_id = session_id
        self.entrypoint = entrypoint
        self.agent_id = agent_id
        self.rows: list[dict] = []
        self.context = 0  # chars/4 of what the next call carries
        self.count = 0
        self.parent: str | None = None

    def _stamp(self) -> str:
        self.count += 1
        return f"2026-11-0{3 + self.count // 3600}T{9 + self.count // 60 % 12:02d}:{self.count % 60:02d}:00.000Z"

    def _envelope(self, kind: str, body: dict) -> dict:
        uuid = hashlib.sha1(f"{self.session_id}{self.agent_id}{self.count}{kind}".encode()).hexdigest()
        row = {"parentUuid": self.parent, "isSidechain": self.agent_id is not None, "type": kind, **body,
               "uuid": uuid, "timestamp": self._stamp(), "entrypoint": self.entrypoint, "cwd": "/home/dev/app",
               "sessionId": self.session_id, "version": "2.1.332", "userType": "external"}
        if self.agent_id:
            row["agentId"] = self.agent_id
        self.parent = uuid
        return row

    def _bare(self, kind: str, body: dict) -> None:
        """Rows without the envelope (the new bookkeeping types)."""
        row = {"type": kind, "sessionId": self.session_id, **body}
        if self.agent_id:
            row["agentId"] = self.agent_id
        self.rows.append(row)

    def user(self, text: str) -> None:
        self.rows.append(self._envelope("user", {"message": {"role": "user", "content": text},
                                                 "promptId": "p" + str(self.count)}))
        self.context += chars(text)

    def attachment(self, text: str) -> None:
        self.rows.append(self._envelope("attachment", {"attachment": {"type": "hook_additional_context",
                                                                      "content": [text]}}))
        self.context += chars(text)

    def _request_rows(self, request_ref: str, first: bool) -> None:
        """What 2.1.332 writes before each recorded request; none of it is context of its own."""
        shape = {"system": [{"type": "text", "text": SYSTEM_TEXT}], "tools": TOOLS}
        shape_hash = hashlib.sha256(json.dumps(shape).encode()).hexdigest()
        if first:
            self._bare("atis-latch", {"atis": ""})
            self._bare("api-request-shape", {"shapeHash": shape_hash, "timestamp": self._stamp(),
                                             "version": "2.1.332", "shape": shape})
        blob = {"role": "user", "content": [{"type": "text", "text": "a message as it was sent " * 20}]}
        blob_hash = hashlib.sha256(json.dumps(blob).encode()).hexdigest()
        self._bare("api-request-blob", {"hash": blob_hash, "message": blob})
        self._bare("api-request", {"id": request_ref, "timestamp": self._stamp(), "version": "2.1.332",
                                   "querySource": "agent:builtin:general-purpose" if self.agent_id else "sdk",
                                   "shapeHash": shape_hash, "params": {"model": "claude-opus-5-5", "max_tokens": 32000},
                                   "keep": 0, "tail": [blob_hash], "cacheControl": []})
        self._bare("tools-used", {"tools": ["Read", "Bash"]})

    def call(self, reply: str = "", tool: tuple[str, dict] | None = None) -> str | None:
        """One recorded request: its bookkeeping rows, then one assistant row per content block."""
        number = len(self.provider.calls) + 1
        request_ref = f"ref-{self.agent_id or 'main'}-{number}"
        self._request_rows(request_ref, first=not any(row["type"] == "assistant" for row in self.rows))
        usage = self.provider.bill(OVERHEAD + self.context)
        blocks = ([{"type": "text", "text": reply}] if reply else [])
        tool_id = None
        if tool:
            tool_id = f"toolu_{number:04d}"
            blocks.append({"type": "tool_use", "id": tool_id, "name": tool[0], "input": tool[1]})
        for block in blocks:
            message = {"id": f"msg_{number:04d}", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                       "content": [block], "stop_reason": None, "usage": usage}
            self.rows.append(self._envelope("assistant", {"message": message, "requestId": f"req_{number:04d}",
                                                          "requestRef": request_ref}))
            said = block.get("text") or f"{block.get('name')} {json.dumps(block.get('input'))}"
            self.context += chars(said)
        return tool_id

    def result(self, tool_id: str, content: str) -> None:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        self.rows.append(self._envelope("user", {"message": {"role": "user", "content": [block]}}))
        self.context += chars(content)

    def compact(self, summary: str, tries: int = 1, instruction: int = 250) -> None:
        """/compact in 2.1.332: each try is billed (everything present, plus the instruction) and recorded
        nowhere; then the boundary and the summary, which is all the context from here on."""
        for _ in range(tries):
            self.provider.bill(OVERHEAD + self.context + instruction)
        self.rows.append(self._envelope("system", {"subtype": "compact_boundary", "content": "Conversation compacted",
                                                   "compactMetadata": {"trigger": "manual"}}))
        self.rows.append(self._envelope("user", {"message": {"role": "user", "content": summary},
                                                 "isCompactSummary": True, "isVisibleInTranscriptOnly": True}))
        self.context = chars(summary)

    def cost_state(self) -> None:
        """The end of a turn: Claude Code's own totals so far (every file of the session, and compactions)."""
        self._bare("cost-state", {"totalCostUSD": 0.5, "totalAPIDuration": 900, "totalDuration": 4000,
                                  "startTime": 1796057052295, "modelUsage": self.provider.totals(),
                                  "hasUnknownModelCost": False})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row) + "\n" for row in self.rows))
        return path


def a_session_with_a_subagent_and_a_compaction(root: Path, *, tries: int = 1, entrypoint: str = "cli",
                                               cost_state: bool = True) -> tuple[Path, Path, Provider]:
    """A read, a subagent that reads, a compaction, and a read after it; returns main, subagent, provider."""
    provider = Provider()
    main = NewSession(provider, entrypoint=entrypoint)
    agent = NewSession(provider, main.session_id, entrypoint=entrypoint, agent_id="a1b2c3d4e5f60718")
    main.user("Where is the retry policy configured?")
    main.attachment("Project instructions: keep functions short. " * 12)
    tool = main.call("Let me look.", ("Read", {"file_path": "/home/dev/app/retry.py"}))
    main.result(tool, "\n".join(f"{n}\tdef attempt_{n}(): return backoff({n})" for n in range(1, 120)))
    main.call("The policy is in retry.py.")
    if cost_state:
        main.cost_state()
    main.user("Ask a helper to check the tests.")
    tool = main.call("", ("Agent", {"description": "check tests", "prompt": "read the tests"}))
    agent.user("read the tests")
    inner = agent.call("", ("Grep", {"pattern": "def test_retry"}))
    agent.result(inner, "\n".join(f"tests/test_retry.py:{n}:def test_retry_{n}():" for n in range(1, 40)))
    agent.call("The tests cover every backoff step.")
    main.result(tool, "The tests cover every backoff step.")
    main.call("All covered.")
    if cost_state:
        main.cost_state()
    main.user("/compact")
    main.compact("Summary: the retry policy lives in retry.py and its tests pass.", tries=tries)
    if cost_state:
        main.cost_state()
    main.user("Show me the first function again.")
    tool = main.call("", ("Read", {"file_path": "/home/dev/app/retry.py", "limit": 5}))
    main.result(tool, "\n".join(f"{n}\tdef attempt_{n}(): return backoff({n})" for n in range(1, 6)))
    main.call("Here it is.")
    if cost_state:
        main.cost_state()
    folder = root / "projects" / "-home-dev-app"
    main_path = main.write(folder / f"{main.session_id}.jsonl")
    agent_path = agent.write(folder / main.session_id / "subagents" / f"agent-{agent.agent_id}.jsonl")
    return main_path, agent_path, provider


def orphan_subagents(projects: Path) -> None:
    """Two subagents' transcripts of a session whose own transcript is gone."""
    provider = Provider()
    for agent_id in ("a1f0c2d3e4b5a697", "a2e1d0c3b4a59687"):
        agent = NewSession(provider, ORPHAN_SESSION, agent_id=agent_id)
        agent.user("read the tests")
        tool = agent.call("", ("Grep", {"pattern": "def test_"}))
        agent.result(tool, "\n".join(f"tests/test_app.py:{n}:def test_{n}():" for n in range(1, 30)))
        agent.call("The tests cover the app.")
        agent.write(projects / "-home-dev-app" / ORPHAN_SESSION / "subagents" / f"agent-{agent_id}.jsonl")
