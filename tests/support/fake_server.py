"""What the scripted fake model servers (tests/support/fake_openai.py, fake_responses.py, fake_gemini.py) share: an HTTP
server on a free 127.0.0.1 port, served from a thread until `stop()` or `lifetime` seconds (so a hung agent cannot
keep it alive), and a request log bounded by `max_requests` (past it every POST is answered 503). The handler
reads a POST's JSON body and answers what is not the fake's own endpoint with a 404; each fake's handler
answers its own endpoint (`reply`) in its own protocol. `assert_row_matches`: a subagent test's check of one
row against the requests billed to its agent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

Server = TypeVar("Server", bound="FakeServer")
TOLERANCE = 0.001  # 0.1 percentage point


def scripts_of(replies: list | dict[str, list], default: str) -> dict[str, list]:
    """The scripts by agent: a dict as given (copied), a list as the one script of agent `default`."""
    if isinstance(replies, dict):
        return {name: list(script) for name, script in replies.items()}
    return {default: list(replies)}


def shared_prefix(previous: list[int], items: list[int]) -> int:
    """Tokens of the leading items (their counts) this request shares with the previous one of its lane."""
    shared = 0
    for before, now in zip(previous, items, strict=False):
        if before != now:
            break
        shared += now
    return shared


def assert_row_matches(row: dict, requests: list[dict], output: str = "output_tokens") -> None:
    """xshare's row of one agent's session against the requests a fake billed it (`output`: the log's key of
    the output tokens, fake_openai's "completion_tokens")."""
    assert row["api_calls"] == len(requests)
    bill = sum(entry["prompt_tokens"] for entry in requests)
    assert row["prompt_tokens_billed"] == bill
    assert row["usage"]["cache_read"] == sum(entry["cached_tokens"] for entry in requests)
    assert row["usage"]["output"] == sum(entry[output] for entry in requests)
    wire = sum(entry["wire"]["exploration"] for entry in requests) / bill
    assert abs(row["billed_tokens"]["exploration"] / bill - wire) <= TOLERANCE, (row, wire)
    assert abs(row["exploration_share_of_prompt"] - wire) <= TOLERANCE, (row, wire)


class FakeHandler(BaseHTTPRequestHandler):
    """One request; a fake's handler says which paths it `serves` and how it `reply`s to them."""

    fake: FakeServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *_) -> None:  # the log is `fake.requests`, not stderr
        pass

    def serves(self, path: str) -> bool:
        raise NotImplementedError

    def reply(self, entry: dict, body: dict, raw: bytes) -> None:
        raise NotImplementedError

    def error_payload(self, status: int, message: str) -> dict:
        return {"error": {"message": message}}

    def send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, status: int, message: str) -> None:
        self.send_json(status, self.error_payload(status, message))

    def start_stream(self, *headers: tuple[str, str]) -> None:
        """A server-sent-events reply's head; the connection closes after it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_event(self, payload: dict, event: str | None = None) -> None:
        head = f"event: {event}\n" if event else ""
        self.wfile.write(f"{head}data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        self.fake.log("GET", self.path)
        self.send_error_json(404, "not found")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        entry = self.fake.log("POST", self.path)
        if entry is None:
            self.send_error_json(503, "fake server: request budget spent")
            return
        if not self.serves(self.path.split("?")[0]):
            self.send_error_json(404, "not found")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self.send_error_json(400, "not JSON")
            return
        self.reply(entry, body, raw)


class FakeServer:
    """Start with `start()` (or as a context manager); `base_url` is what the agent's config points at."""

    base_path = ""  # what `base_url` ends with

    def __init__(self, handler: type[FakeHandler], lifetime: float, max_requests: int) -> None:
        self.handler = handler
        self.lifetime, self.max_requests = lifetime, max_requests
        self.requests: list[dict] = []  # every request: method, path, time, number; the billed ones their bill
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    def start(self: Server) -> Server:
        owner = self

        class Handler(self.handler):
            fake = owner  # the handler's way back to its server's script and log

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
        if self._timer is not None:
            self._timer.cancel()

    def __enter__(self: Server) -> Server:
        return self.start()

    def __exit__(self, *_) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self.server is not None, "start() the server first"
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.base_path}"

    def billed(self, kind: str | None = None) -> list[dict]:
        """The requests billed, in order; of one kind (each fake names its kinds) or all."""
        with self.lock:
            return [dict(entry) for entry in self.requests
                    if "prompt_tokens" in entry and (kind is None or entry["kind"] == kind)]

    def log(self, method: str, path: str) -> dict | None:
        """Logs a request; None once the request budget is spent."""
        entry = {"method": method, "path": path, "at": time.time(), "number": 0}
        with self.lock:
            self.requests.append(entry)
            entry["number"] = len(self.requests)
            return entry if len(self.requests) <= self.max_requests else None
