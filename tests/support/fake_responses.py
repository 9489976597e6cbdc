"""A fake OpenAI Responses server on 127.0.0.1, for driving the real Codex CLI offline.

It answers `POST /v1/responses` (always streamed, as Codex asks) from a scripted list of replies: text, a
function call (`exec_command`, `apply_patch` as Codex's models call them) or a custom tool call (code
mode's `exec`, whose input is JavaScript). Every other path gets a 404.

What it bills is the request's exact o200k count (tests/support/wire.py's tokenizer, as xshare counts), split by
category from the request alone, independently of xshare's reader (ResponsesWire below); cache read = the
count of the leading input items this request shares with its lane's previous one (a lane: Codex's
`prompt_cache_key` and the agent, as a subagent's thread shares its parent's key); output = the reply's
count + 1. Codex tells its requests apart in the `x-codex-turn-metadata` header: "turn" requests play the
script (one per agent, its `agent_name`, when the script is a dict); the TUI's title thread (`thread_source`
"thread_title", kind "title") and any other `request_kind` (a compaction) are answered with a fixed text and
never consume a scripted reply. Every request and its bill is logged in `requests`. The server stops by
itself after `lifetime` seconds or `max_requests` requests (then it answers 503), so a hung agent cannot
keep it alive.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from fake_server import FakeHandler, FakeServer, scripts_of, shared_prefix
from wire import bash_category, content_text

from xshare.measure.tokens import Counter, choose

CATEGORIES = ("exploration", "edit", "shell", "rest")
DONE_TEXT = "Done."
TITLE_TEXT = "Reading the project files"
ANY_AGENT = "*"
COLLABORATION_TOOLS = frozenset({"spawn_agent", "wait_agent", "send_message", "followup_task", "list_agents",
                                 "interrupt_agent"})
_NESTED = re.compile(r"tools\.(exec_command|apply_patch)\s*\(")
_CMD = re.compile(r"""cmd\s*:\s*(?P<q>["'`])(?P<cmd>(?:\\.|(?!(?P=q)).)*)(?P=q)""")


@dataclass
class Reply:
    """One scripted answer: text, and tool calls as (kind, name, payload): kind "function" (payload: the
    arguments dict) or "custom" (payload: the free-form input text)."""

    text: str = ""
    calls: list[tuple[str, str, object]] = field(default_factory=list)


def command(cmd: str) -> Reply:
    return Reply(calls=[("function", "exec_command", {"cmd": cmd})])


def patch(text: str) -> Reply:
    return Reply(calls=[("custom", "apply_patch", text)])


def code(script: str) -> Reply:
    return Reply(calls=[("custom", "exec", script)])


def script_category(script: str) -> str:
    """Code mode's `exec`, judged from its JavaScript alone: an apply_patch in it is an edit; only
    read-only exec_command calls (their `cmd` literals, by the wire's own rule) are exploration; any other
    command is shell; a script that calls neither is rest."""
    nested = _NESTED.findall(script)
    if not nested:
        return "rest"
    if "apply_patch" in nested:
        return "edit"
    commands = [match.group("cmd") for match in _CMD.finditer(script)]
    if len(commands) != nested.count("exec_command"):
        return "shell"  # a command built at run time: not judged as a read
    return "exploration" if all(bash_category(cmd) == "exploration" for cmd in commands) else "shell"


def call_category(name: str, payload: str) -> str:
    if name == "exec":
        return script_category(payload)
    if name == "apply_patch":
        return "edit"
    if name in ("exec_command", "shell_command", "shell"):
        try:
            arguments = json.loads(payload)
        except ValueError:
            return "shell"
        cmd = arguments.get("cmd") or arguments.get("command") if isinstance(arguments, dict) else None
        return bash_category(cmd) if isinstance(cmd, str) else "shell"
    return "rest"


class ResponsesWire:
    """Counts a Responses request's pieces by category: (tokens by category, each input item's count)."""

    def __init__(self) -> None:
        self.counter = Counter(choose())

    def __call__(self, body: dict) -> tuple[dict[str, int], list[int]]:
        tokens = dict.fromkeys(CATEGORIES, 0)
        categories: dict[str, str] = {}

        def add(category: str, text: str) -> int:
            counted = self.counter.count(text) if text else 0
            tokens[category] += counted
            return counted

        add("rest", body.get("instructions") or "")
        if body.get("tools"):
            add("rest", json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False))
        items = []
        for item in body.get("input") or []:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind in ("function_call", "custom_tool_call"):
                payload = item.get("arguments") if kind == "function_call" else item.get("input")
                payload = payload if isinstance(payload, str) else json.dumps(payload)
                category = categories[item.get("call_id")] = call_category(item.get("name") or "", payload)
                items.append(add(category, f"{item.get('name')} {payload}"))
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                items.append(add(categories.get(item.get("call_id"), "rest"),
                                 output if isinstance(output, str) else content_text(output)))
            elif kind == "message":
                items.append(add("rest", content_text(item.get("content"))))
            else:  # additional_tools (the tool schemas), reasoning: as sent
                items.append(add("rest", json.dumps(item, separators=(",", ":"), ensure_ascii=False)))
        return tokens, items


class FakeResponses(FakeServer):
    """Start with `start()` (or as a context manager); `base_url` is what Codex's provider points at;
    `billed(kind)`: kind "turn" (the agent loop) or another request_kind."""

    base_path = "/v1"

    def __init__(self, replies: list[Reply] | dict[str, list[Reply]], lifetime: float = 300.0,
                 max_requests: int = 100) -> None:
        super().__init__(_Handler, lifetime, max_requests)
        # a list plays for every agent; a dict, one script per agent (the `agent_name` of Codex's turn metadata:
        # "/root", a subagent "/root/<task>"), so a subagent's turns and its parent's may come in any order
        self.scripts = scripts_of(replies, ANY_AGENT)
        self.wire = ResponsesWire()
        self.lanes: dict[str, list[int]] = {}  # prompt_cache_key -> the previous request's item counts

    def answer(self, entry: dict, body: dict, kind: str, agent: str = "") -> tuple[Reply, dict]:
        counted, items = self.wire(body)
        prompt = sum(counted.values())
        lane = f"{body.get('prompt_cache_key') or ''} {agent}"  # a subagent shares its parent's cache key
        with self.lock:
            script = self.scripts.get(agent, self.scripts.get(ANY_AGENT, []))
            reply = (script.pop(0) if script else Reply(text=DONE_TEXT)) if kind == "turn" else Reply(text=TITLE_TEXT)
            shared = shared_prefix(self.lanes.get(lane, []), items)
            self.lanes[lane] = items
            spoken = reply.text + "".join(f"{name} {json.dumps(payload)}" for _, name, payload in reply.calls)
            output = self.wire.counter.count(spoken) + 1
            usage = {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": min(shared, prompt)},
                     "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                     "total_tokens": prompt + output}
            entry.update(kind=kind, agent=agent, prompt_tokens=prompt,
                         cached_tokens=usage["input_tokens_details"]["cached_tokens"],
                         output_tokens=output, wire=counted, model=body.get("model"), body=body)
        return reply, usage


def _metadata(header: str | None) -> dict:
    try:
        metadata = json.loads(header or "{}")
    except ValueError:
        return {}
    return metadata if isinstance(metadata, dict) else {}


def _request_kind(header: str | None) -> str:
    metadata = _metadata(header)
    if metadata.get("thread_source") == "thread_title":
        return "title"  # the TUI's title thread: a "turn" of a thread of its own
    kind = metadata.get("request_kind")
    return kind if isinstance(kind, str) and kind else "turn"


def _items(reply: Reply, number: int) -> list[dict]:
    items = []
    if reply.text:
        items.append({"type": "message", "role": "assistant", "id": f"msg_{number}",
                      "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
    for index, (kind, name, payload) in enumerate(reply.calls):
        call_id = f"call_{number}_{index}"
        if kind == "custom":
            items.append({"type": "custom_tool_call", "id": f"ctc_{number}_{index}", "call_id": call_id,
                          "name": name, "input": payload, "status": "completed"})
        else:
            items.append({"type": "function_call", "id": f"fc_{number}_{index}", "call_id": call_id,
                          "name": name, "arguments": json.dumps(payload), "status": "completed"})
            if name in COLLABORATION_TOOLS:
                items[-1]["namespace"] = "collaboration"  # 0.171's subagent tools (multi_agent_v2) are namespaced
    return items


class _Handler(FakeHandler):
    fake: FakeResponses

    def serves(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/responses"

    def reply(self, entry: dict, body: dict, raw: bytes) -> None:
        header = self.headers.get("x-codex-turn-metadata")
        agent = _metadata(header).get("agent_name")
        reply, usage = self.fake.answer(entry, body, _request_kind(header), agent if isinstance(agent, str) else "")
        number = entry["number"]
        self.start_stream()

        def event(payload: dict) -> None:
            self.send_event(payload, payload["type"])

        response_id = f"resp_{number}"
        event({"type": "response.created", "response": {"id": response_id}})
        for item in _items(reply, number):
            event({"type": "response.output_item.done", "item": item})
        event({"type": "response.completed", "response": {"id": response_id, "usage": usage}})
