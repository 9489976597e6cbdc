"""A fake Gemini API on 127.0.0.1, for driving the real Gemini CLI offline.

It answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` from a scripted list of replies
(text, or function calls), and `:generateContent` (the CLI's model router, which asks which model should
answer; never from the script) with a fixed choice. Every other path gets a 404.

What it bills is the request's exact o200k count (tests/wire.py's tokenizer, as xshare counts), split by
category from the request alone, independently of xshare's reader (GeminiWire below): cache read = the
count of the leading contents this request shares with the previous streamed one of the same agent; output = the
reply's count + 1. Every request and its bill is logged in `requests` (kind "main" or "router"). The server stops by
itself after `lifetime` seconds or `max_requests` requests (then it answers 503).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class FakeGemini:
    """Start with `start()` (or as a context manager); `base_url` is GOOGLE_GEMINI_BASE_URL."""

    def __init__(self, replies: list[Reply] | dict[str, list[Reply]], lifetime: float = 300.0,
                 max_requests: int = 100, route: Callable[[dict], str] | None = None) -> None:
        # one script per agent: `route(body)` names the agent a streamed request is from (a subagent's turns
        # interleave with its parent's in no fixed order), "main" when there is no route
        self.scripts = {name: list(script) for name, script in replies.items()} if isinstance(replies, dict) \
            else {"main": list(replies)}
        self.route = route or (lambda body: "main")
        self.wire = GeminiWire()
        self.lifetime, self.max_requests = lifetime, max_requests
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.previous: dict[str, list[int]] = {}  # each agent's previous request, for its cache reads

    def start(self) -> FakeGemini:
        owner = self

        class Handler(_Handler):
            fake = owner

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if getattr(self, "_timer", None) is not None:
            self._timer.cancel()

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *_) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self.server is not None, "start() the server first"
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def billed(self, kind: str | None = None) -> list[dict]:
        """The requests billed, in order; kind "main" (streamed turns) or "router"."""
        with self.lock:
            return [dict(entry) for entry in self.requests
                    if "prompt_tokens" in entry and (kind is None or entry["kind"] == kind)]

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
                cached = 0
                for previous, now in zip(self.previous.get(agent, []), items, strict=False):
                    if previous != now:
                        break
                    cached += now
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

    def log(self, method: str, path: str) -> dict | None:
        entry = {"method": method, "path": path, "at": time.time(), "number": 0}
        with self.lock:
            self.requests.append(entry)
            entry["number"] = len(self.requests)
            return entry if len(self.requests) <= self.max_requests else None


def _candidate(reply: Reply, model: str, usage: dict) -> dict:
    parts = ([{"text": reply.text}] if reply.text else []) + \
        [{"functionCall": {"name": name, "args": args}} for name, args in reply.calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage, "modelVersion": model}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGemini
    protocol_version = "HTTP/1.1"

    def log_message(self, *_) -> None:
        pass

    def _send(self, status: int, payload: dict | None) -> None:
        data = json.dumps(payload or {"error": {"code": status, "message": "not found"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.fake.log("GET", self.path)
        self._send(404, None)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        entry = self.fake.log("POST", self.path)
        if entry is None:
            self._send(503, {"error": {"code": 503, "message": "fake server: request budget spent"}})
            return
        path = self.path.split("?")[0]
        model, _, method = path.rsplit("/", 1)[-1].partition(":")
        if not path.startswith("/v1beta/models/") or method not in ("streamGenerateContent", "generateContent"):
            self._send(404, None)
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, {"error": {"code": 400, "message": "not JSON"}})
            return
        kind = "main" if method == "streamGenerateContent" else "router"
        reply, usage = self.fake.answer(entry, body, kind, model)
        payload = _candidate(reply, model, usage)
        if kind == "router":
            self._send(200, payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()
