"""A fake Anthropic Messages API for driving the real Claude Code offline, and the usage it billed.

Claude Code (with its non-essential traffic switched off) only ever sends `POST /v1/messages?beta=true`,
streamed. The reply is chosen from the last *user* message (the very last message may be a "system"
one carrying the environment):
  - every line `XREAD <path>`, `XBASH <command>` or `XAGENT <prompt>` becomes a Read, Bash or Agent tool
    call (several lines: several calls in one reply, i.e. one tool batch);
  - a compaction request (it asks for a summary, text only) gets a `<summary>` text, as the real model
    would write, else Claude Code retries the compaction;
  - a tool result or anything else gets a short text.
Usage is deterministic: the prompt is the request body's size / 4 tokens, of which the part the same
lane (main session or subagent) sent last time is a cache read, so every figure can be checked against
`FakeAnthropic.requests`. Each reply carries a `request-id` header, which Claude Code records as the
row's `requestId`. The server is bounded: it shuts itself down after `lifetime` seconds.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPACTION_OPENING = "CRITICAL: Respond with TEXT ONLY"
SUMMARY_TEXT = "<summary>The user asked to read two small files and to run cat; both were read.</summary>"
SUBAGENT_MARK = "cc_is_subagent=true"  # in the billing header block of a subagent's system prompt


@dataclass
class Billed:
    """One request as the server saw and billed it."""

    number: int
    request_id: str
    path: str
    user_agent: str
    subagent: bool
    compaction: bool
    usage: dict
    last_user_text: str
    body_text: str = field(repr=False)

    @property
    def prompt_tokens(self) -> int:
        usage = self.usage
        return usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]


def last_user_message(body: dict) -> tuple[str, bool]:
    """The text of the last role-"user" message, and whether it carries a tool result."""
    users = [message for message in body.get("messages") or [] if message.get("role") == "user"]
    if not users:
        return "", False
    content = users[-1].get("content")
    if isinstance(content, str):
        return content, False
    texts = [block.get("text", "") for block in content or [] if block.get("type") == "text"]
    has_result = any(block.get("type") == "tool_result" for block in content or [])
    return "\n".join(texts), has_result


def is_compaction(body: dict, text: str) -> bool:
    return text.lstrip().startswith(COMPACTION_OPENING) and "summary" in text.lower()


def is_subagent(body: dict) -> bool:
    return SUBAGENT_MARK in json.dumps(body.get("system", ""))


def plan(body: dict) -> list[tuple]:
    """The reply's content blocks: ("text", str) or ("tool", name, input)."""
    text, has_result = last_user_message(body)
    if is_compaction(body, text):
        return [("text", SUMMARY_TEXT)]
    if has_result:
        return [("text", "Done.")]
    calls = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("XREAD "):
            calls.append(("tool", "Read", {"file_path": line[6:]}))
        elif line.startswith("XBASH "):
            calls.append(("tool", "Bash", {"command": line[6:], "description": "run it"}))
        elif line.startswith("XAGENT "):
            calls.append(("tool", "Agent", {"description": "look", "prompt": line[7:],
                                            "subagent_type": "general-purpose"}))
    return calls or [("text", "OK.")]


def usage_for(size: int, previous: int) -> dict:
    """Deterministic usage: size/4 prompt tokens; what this lane sent before is read from the cache."""
    prompt = max(size // 4, 8)
    read = previous if 0 < previous < prompt else 0
    return {"input_tokens": 3, "cache_creation_input_tokens": prompt - 3 - read, "cache_read_input_tokens": read,
            "output_tokens": 7}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args) -> None:  # quiet: the test reads FakeAnthropic.requests instead
        pass

    def do_HEAD(self) -> None:
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_HEAD

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        billed = self.server.fake.bill(self.path, self.headers.get("user-agent", ""), body, len(raw))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("request-id", billed.request_id)
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for kind, data in events(billed, body.get("model", "claude-fake"), plan(body)):
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def events(billed: Billed, model: str, blocks: list[tuple]) -> list[tuple[str, dict]]:
    """The SSE events of one streamed reply."""
    out = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_fake_{billed.number:04d}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**billed.usage, "output_tokens": 1}}})]
    stop = "end_turn"
    for index, block in enumerate(blocks):
        if block[0] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block[1]}
        else:
            stop = "tool_use"
            start = {"type": "tool_use", "id": f"toolu_fake_{billed.number:04d}_{index}", "name": block[1], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block[2])}
        out += [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index})]
    out += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": billed.usage["output_tokens"]}}),
            ("message_stop", {"type": "message_stop"})]
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeAnthropic


class FakeAnthropic:
    """The server on 127.0.0.1 (a free port), serving from a thread until stop() or `lifetime` seconds."""

    def __init__(self, lifetime: float = 600.0) -> None:
        self.requests: list[Billed] = []
        self._lock = threading.Lock()
        self._last_prompt = {False: 0, True: 0}  # per lane: main session, subagent
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self._deadline = threading.Timer(lifetime, self.stop)
        self._deadline.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeAnthropic:
        self._thread.start()
        self._deadline.start()
        return self

    def stop(self) -> None:
        self._deadline.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def bill(self, path: str, user_agent: str, body: dict, size: int) -> Billed:
        text, _ = last_user_message(body)
        subagent = is_subagent(body)
        with self._lock:
            number = len(self.requests) + 1
            usage = usage_for(size, self._last_prompt[subagent])
            billed = Billed(number, f"req_fake_{number:04d}", path, user_agent, subagent,
                            is_compaction(body, text), usage, text, json.dumps(body))
            self._last_prompt[subagent] = billed.prompt_tokens
            self.requests.append(billed)
        return billed

    def since(self, start: int) -> list[Billed]:
        """The requests made after the first `start` ones (one claude run's share of the log)."""
        with self._lock:
            return list(self.requests[start:])
