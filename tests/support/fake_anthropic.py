"""A fake Anthropic Messages API for driving the real Claude Code offline, and the usage it billed.

Claude Code (with its non-essential traffic switched off) sends `POST /v1/messages?beta=true`, streamed,
and `POST /v1/messages/count_tokens?beta=true` about large files (answered with the count, not billed).
The reply is chosen from the last *user* message (the very last message may be a "system" one carrying the environment):
  - every line `XREAD <path>`, `XBASH <command>` or `XAGENT <prompt>` becomes a Read, Bash or Agent tool
    call (several lines: several calls in one reply, i.e. one tool batch);
  - a compaction request (it asks for a summary, text only) gets a `<summary>` text, as the real model
    would write, else Claude Code retries the compaction;
  - a tool result or anything else gets a short text.
More lines: `XGREP <pattern>`, `XGLOB <pattern>` (offered only with `--tools`), `XEDIT <path>|<old>|<new>`,
`XWRITE <path>|<text>`, `XMCP <tool> <json arguments>` (an MCP tool, named as Claude Code offers it), and
`XTHINK` (the reply opens with a thinking block). A scripted turn: the lines after `XSTEPS` are the replies
to the turn's rounds, one a round (the first to the prompt, the next to its results...), each line's calls
joined by ` ;; `; `XREPEAT <n> <call>` stands for n such lines, `{k}` in them for the line's number, and
`{task}` for the id of the last background task a result named. Failures: `XFAIL <status> <n>` answers the
first n attempts of that prompt's request with HTTP <status> (529 overloaded, 500 api error; not billed, kept
in `failed`); `XSTALL` bills the request, streams the prompt's tool calls whole and a text block begun, then
holds it open until the client goes away (a CLI killed mid-stream; `stalled` is set once the partial reply is out).
The bill is what tests/support/wire.py counts the request to be
with o200k_base (cache read: the blocks the same lane, main session or subagent, sent last time), so every
figure can be checked against `FakeAnthropic.requests`, each carrying its tokens by wire category.
Each reply carries a `request-id` header, which Claude Code records as the
row's `requestId`. The server is bounded: it shuts itself down after `lifetime` seconds.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from wire import Block, Wire, usage_of

COMPACTION_OPENING = "CRITICAL: Respond with TEXT ONLY"
SUMMARY_TEXT = "<summary>The user asked to read two small files and to run cat; both were read.</summary>"
SUBAGENT_MARK = "cc_is_subagent=true"  # in the billing header block of a subagent's system prompt
TASK_ID = re.compile(r"with ID: (\w+)")  # a background Bash's result names its task so


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
    wire: dict = field(default_factory=dict)  # tokens by wire category (tests/support/wire.py)
    commands: list = field(default_factory=list)  # (Bash command, wire category)

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


def _call(line: str) -> tuple | None:
    """The tool call one prompt line asks for, or None."""
    word, _, rest = line.partition(" ")
    if word == "XREAD":
        return ("tool", "Read", {"file_path": rest})
    if word == "XBASH":
        return ("tool", "Bash", {"command": rest, "description": "run it"})
    if word == "XAGENT":
        return ("tool", "Agent", {"description": "look", "prompt": rest, "subagent_type": "general-purpose"})
    if word == "XGREP":
        return ("tool", "Grep", {"pattern": rest, "output_mode": "content"})
    if word == "XGLOB":
        return ("tool", "Glob", {"pattern": rest})
    if word == "XEDIT":
        path, old, new = rest.split("|", 2)
        return ("tool", "Edit", {"file_path": path, "old_string": old, "new_string": new})
    if word == "XWRITE":
        path, text = rest.split("|", 1)
        return ("tool", "Write", {"file_path": path, "content": text})
    if word == "XMCP":
        name, _, arguments = rest.partition(" ")
        return ("tool", name, json.loads(arguments or "{}"))
    return None


def _text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or [] if block.get("type") == "text")


def _steps(lines: list[str]) -> list[str]:
    steps: list[str] = []
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "XREPEAT":
            count, _, call = rest.partition(" ")
            steps += [call] * int(count)
        else:
            steps.append(line)
    return [step.replace("{k}", str(number + 1)) for number, step in enumerate(steps)]


def scripted(body: dict) -> list[tuple] | None:
    """The reply of a scripted turn (XSTEPS), or None if the turn is not one."""
    messages = body.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") != "user":
            continue
        lines = [line.strip() for line in _text_of(messages[index]).splitlines()]
        if "XSTEPS" not in lines:
            continue
        steps = _steps(lines[lines.index("XSTEPS") + 1:])
        done = sum(1 for message in messages[index:] if message.get("role") == "assistant")
        if done >= len(steps):
            return [("text", "Done.")]
        tasks = TASK_ID.findall(json.dumps(messages[index:]))
        step = steps[done].replace("{task}", tasks[-1] if tasks else "none")
        return [call for call in map(_call, step.split(" ;; ")) if call] or [("text", "OK.")]
    return None


def plan(body: dict) -> list[tuple]:
    """The reply's content blocks: ("text", str), ("thinking", str) or ("tool", name, input)."""
    text, has_result = last_user_message(body)
    if is_compaction(body, text):
        return [("text", SUMMARY_TEXT)]
    script = scripted(body)
    if script is not None:
        return script
    if has_result:
        return [("text", "Done.")]
    lines = [line.strip() for line in text.splitlines()]
    # `a ;; b` on a line: two calls (an XAGENT line is one call: the rest is its prompt, read the same way)
    calls = [call for line in lines for part in ([line] if line.startswith("XAGENT ") else line.split(" ;; "))
             if (call := _call(part))]
    thinking = [("thinking", "Let me look at what was asked, then act.")] if "XTHINK" in lines else []
    return thinking + (calls or [("text", "OK.")])


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
        if self.path.split("?")[0].endswith("/count_tokens"):
            self._count_tokens(body)
            return
        status = self.server.fake.failure(body)
        if status:
            self._error(status)
            return
        billed = self.server.fake.bill(self.path, self.headers.get("user-agent", ""), body)
        if "XSTALL" in billed.last_user_text.split() and not billed.subagent:
            self._stall(billed, body)
            return
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

    def _error(self, status: int) -> None:
        kind = "overloaded_error" if status == 529 else "api_error"
        reply = json.dumps({"type": "error", "error": {"type": kind, "message": "try again"}}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("x-should-retry", "true")
        self.send_header("content-length", str(len(reply)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(reply)
        self.close_connection = True

    def _stall(self, billed: Billed, body: dict) -> None:
        """The reply's first events, then nothing until the client is gone (or the server stops)."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("request-id", billed.request_id)
        self.send_header("connection", "close")
        self.end_headers()
        # the prompt's tool calls complete (Claude Code runs a tool as soon as its block ends), then a text
        # block begun and never ended
        calls = [block for block in plan(body) if block[0] == "tool"]
        stream = events(billed, body.get("model", "claude-fake"), [*calls, ("text", "And the")])
        for kind, data in stream[:1 + 3 * len(calls) + 2]:  # message_start, whole tool blocks, a text begun
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.server.fake.stalled.set()
        try:
            while not self.server.fake.stopping.wait(0.5):
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
        except OSError:
            pass  # the client went away
        self.close_connection = True

    def _count_tokens(self, body: dict) -> None:
        """The free token-counting endpoint (Claude Code asks it about large files): answered, not billed."""
        tokens = self.server.fake.wire.count(body).total
        self.server.fake.token_counts.append(tokens)
        reply = json.dumps({"input_tokens": tokens}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(reply)
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
            deltas = [{"type": "text_delta", "text": block[1]}]
        elif block[0] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block[1]},
                      {"type": "signature_delta", "signature": f"fake-signature-{billed.number}"}]
        else:
            stop = "tool_use"
            start = {"type": "tool_use", "id": f"toolu_fake_{billed.number:04d}_{index}", "name": block[1], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block[2])}]
        out.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        out += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                for delta in deltas]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
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
        self.token_counts: list[int] = []  # count_tokens requests: not billed, not in `requests`
        self.failed: list[int] = []  # the HTTP status of each attempt answered with an error (not billed)
        self._failures: dict[str, int] = {}  # prompt text -> errors served for it so far
        self.stalled = threading.Event()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._last_blocks: dict[bool, list[Block]] = {False: [], True: []}  # per lane: main session, subagent
        self.wire = Wire()
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
        self.stopping.set()
        self._deadline.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def bill(self, path: str, user_agent: str, body: dict) -> Billed:
        text, _ = last_user_message(body)
        subagent = is_subagent(body)
        counted = self.wire.count(body)
        with self._lock:
            number = len(self.requests) + 1
            usage = usage_of(counted, self._last_blocks[subagent])
            billed = Billed(number, f"req_fake_{number:04d}", path, user_agent, subagent,
                            is_compaction(body, text), usage, text, json.dumps(body), counted.tokens,
                            counted.commands)
            self._last_blocks[subagent] = counted.blocks
            self.requests.append(billed)
        return billed

    def failure(self, body: dict) -> int | None:
        """The error status this attempt gets (an `XFAIL <status> <n>` line, for its first n attempts), or None."""
        text, has_result = last_user_message(body)
        if has_result or is_subagent(body):
            return None
        for line in text.splitlines():
            words = line.split()
            if len(words) == 3 and words[0] == "XFAIL":
                with self._lock:
                    served = self._failures.get(text, 0)
                    if served < int(words[2]):
                        self._failures[text] = served + 1
                        self.failed.append(int(words[1]))
                        return int(words[1])
        return None

    def since(self, start: int) -> list[Billed]:
        """The requests made after the first `start` ones (one claude run's share of the log)."""
        with self._lock:
            return list(self.requests[start:])
