"""A fake Gemini API on 127.0.0.1, for driving the real Gemini CLI offline.

It answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` from a scripted list of replies
(text, or function calls), and `:generateContent` (the CLI's model router, which asks which model should
answer; never from the script) with a fixed choice. Every other path gets a 404.

What it bills is the request's exact o200k count (tests/support/wire.py's tokenizer, as xshare counts), split by
category from the request alone, independently of xshare's reader (GeminiWire below): cache read = the
count of the leading contents this request shares with the previous streamed one of the same agent; output = the
reply's count + 1. Every request and its bill is logged in `requests` (kind "main" or "router"). The server stops by
itself after `lifetime` seconds or `max_requests` requests (then it answers 503).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from fake_server import FakeHandler, FakeServer, scripts_of, shared_prefix
from wire import bash_category

from xshare.measure.tokens import Counter, choose

CATEGORIES = ("exploration", "edit", "shell", "rest")
READ_TOOLS = frozenset({"read_file", "read_many_files", "grep_search", "search_file_content", "glob",
                        "list_directory"})
EDIT_TOOLS = frozenset({"replace", "write_file", "edit"})
DONE_TEXT = "Done."
# both of the router's strategies read their own fields from this answer
ROUTER_TEXT = json.dumps({"reasoning": "A simple request.", "model_choice": "flash",
                          "complexity_reasoning": "A simple request.", "complexity_score": 10})


@dataclass
class Reply:
    """One scripted answer: text, and function calls as (name, args) pairs."""

    text: str = ""
    calls: list[tuple[str, dict]] = field(default_factory=list)


def tool(name: str, **args: object) -> Reply:
    return Reply(calls=[(name, args)])


def call_category(name: str, args: object) -> str:
    if name in READ_TOOLS:
        return "exploration"
    if name in EDIT_TOOLS:
        return "edit"
    if name == "run_shell_command":
        command = args.get("command") if isinstance(args, dict) else None
        return bash_category(command) if isinstance(command, str) else "shell"
    return "rest"


class GeminiWire:
    """Counts a generateContent request's parts by category: (tokens by category, each content's count)."""

    def __init__(self) -> None:
        self.counter = Counter(choose())

    def __call__(self, body: dict) -> tuple[dict[str, int], list[int]]:
        tokens = dict.fromkeys(CATEGORIES, 0)
        waiting: dict[str, list[str]] = {}  # function name -> categories of its calls not yet answered

        def add(category: str, text: str) -> int:
            counted = self.counter.count(text) if text else 0
            tokens[category] += counted
            return counted

        system = body.get("systemInstruction") or {}
        add("rest", "\n".join(part.get("text") or "" for part in system.get("parts") or []))
        if body.get("tools"):
            add("rest", json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False))
        items = []
        for content in body.get("contents") or []:
            counted = 0
            for part in content.get("parts") or []:
                if "functionCall" in part:
                    call = part["functionCall"]
                    category = call_category(call.get("name") or "", call.get("args"))
                    waiting.setdefault(call.get("name") or "", []).append(category)
                    counted += add(category, f"{call.get('name')} {json.dumps(call.get('args'), ensure_ascii=False)}")
                elif "functionResponse" in part:
                    response = part["functionResponse"]
                    queue = waiting.get(response.get("name") or "")
                    category = queue.pop(0) if queue else "rest"
                    inner = response.get("response")
                    output = inner.get("output") if isinstance(inner, dict) and "output" in inner else inner
                    counted += add(category, output if isinstance(output, str) else json.dumps(output))
                elif isinstance(part.get("text"), str) and not part.get("thought"):
                    counted += add("rest", part["text"])
            items.append(counted)
        return tokens, items


class FakeGemini(FakeServer):
    """Start with `start()` (or as a context manager); `base_url` is GOOGLE_GEMINI_BASE_URL;
    `billed(kind)`: kind "main" (streamed turns) or "router"."""

    def __init__(self, replies: list[Reply] | dict[str, list[Reply]], lifetime: float = 300.0,
                 max_requests: int = 100, route: Callable[[dict], str] | None = None) -> None:
        super().__init__(_Handler, lifetime, max_requests)
        # one script per agent: `route(body)` names the agent a streamed request is from (a subagent's turns
        # interleave with its parent's in no fixed order), "main" when there is no route
        self.scripts = scripts_of(replies, "main")
        self.route = route or (lambda body: "main")
        self.wire = GeminiWire()
        self.previous: dict[str, list[int]] = {}  # each agent's previous request, for its cache reads

    def answer(self, entry: dict, body: dict, kind: str, model: str) -> tuple[Reply, dict]:
        counted, items = self.wire(body)
        prompt = sum(counted.values())
        with self.lock:
            if kind == "router":
                reply, cached = Reply(text=ROUTER_TEXT), 0
            else:
                agent = self.route(body)
                script = self.scripts.get(agent) or []
                reply = script.pop(0) if script else Reply(text=DONE_TEXT)
                cached = shared_prefix(self.previous.get(agent, []), items)
                self.previous[agent] = items
                entry["agent"] = agent
            spoken = reply.text + "".join(f"{name} {json.dumps(args)}" for name, args in reply.calls)
            output = self.wire.counter.count(spoken) + 1
            usage = {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}
            if cached:
                usage["cachedContentTokenCount"] = min(cached, prompt)
            entry.update(kind=kind, model=model, prompt_tokens=prompt, cached_tokens=min(cached, prompt),
                         output_tokens=output, wire=counted, body=body)
        return reply, usage


def _model_method(path: str) -> tuple[str, str]:
    """The model and the method of `/v1beta/models/<model>:<method>`."""
    model, _, method = path.rsplit("/", 1)[-1].partition(":")
    return model, method


def _candidate(reply: Reply, model: str, usage: dict) -> dict:
    parts = ([{"text": reply.text}] if reply.text else []) + \
        [{"functionCall": {"name": name, "args": args}} for name, args in reply.calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage, "modelVersion": model}


class _Handler(FakeHandler):
    fake: FakeGemini

    def error_payload(self, status: int, message: str) -> dict:
        return {"error": {"code": status, "message": message}}

    def serves(self, path: str) -> bool:
        return path.startswith("/v1beta/models/") and \
            _model_method(path)[1] in ("streamGenerateContent", "generateContent")

    def reply(self, entry: dict, body: dict, raw: bytes) -> None:
        model, method = _model_method(self.path.split("?")[0])
        kind = "main" if method == "streamGenerateContent" else "router"
        reply, usage = self.fake.answer(entry, body, kind, model)
        payload = _candidate(reply, model, usage)
        if kind == "router":
            self.send_json(200, payload)
            return
        self.start_stream()
        self.send_event(payload)
