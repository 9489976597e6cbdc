"""A fake OpenAI-compatible model server on 127.0.0.1, for driving the real Hermes-Agent offline.

It answers `POST /v1/chat/completions` from a scripted list of replies (text, or tool calls), streamed as
server-sent events with a usage chunk when the request streams, as one JSON body otherwise. Every other
path (Hermes probes /v1/models, /api/tags, /props, ...) gets a 404. A request without tools is Hermes's
title-generation call: it is answered with a title and never consumes a scripted reply; nor does a request
whose user turn is Hermes's background-review prompt (kind 'review': it carries the parent's tools).

What it bills is deterministic and derived from the request itself, so a test compares what xshare
reports with what was billed without hard-coding a number: prompt tokens = request body bytes / 4
(rounded up), of which half are "cached" on every main call after the first; completion tokens = reply
bytes / 4 + 1. With a `wire` counter (tests/support/chat_wire.py), prompt tokens are instead the request's exact
o200k count, and its tokens by category are logged beside the bill. Every request and its bill is logged
in `requests`. The server stops by itself after `lifetime` seconds or `max_requests` requests (then it
answers 503), so a hung agent cannot keep it alive.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fake_server import FakeHandler, FakeServer, scripts_of

MODEL = "fake-model"
TITLE = "Reading the fixture file"
DONE_TEXT = "Done."
REVIEW_TEXT = "Nothing to save."
REVIEW_PROMPTS = ("Review the conversation above",)  # agent/background_review.py's harness prompts


@dataclass
class Reply:
    """One scripted answer: text, or tool calls as (name, arguments) pairs."""

    text: str = ""
    tool_calls: list[tuple[str, dict]] = field(default_factory=list)


def _tokens(size: int) -> int:
    return -(-size // 4)


class FakeOpenAI(FakeServer):
    """Start with `start()` (or as a context manager); `base_url` is what Hermes's config points at."""

    base_path = "/v1"

    def __init__(self, replies: list[Reply] | dict[str, list[Reply]], lifetime: float = 300.0, max_requests: int = 100,
                 wire: Callable[[dict], dict[str, int]] | None = None,
                 route: Callable[[dict], str] | None = None) -> None:
        super().__init__(_Handler, lifetime, max_requests)
        # a list: one script for every main call; a dict: one script per agent, `route(body)` naming the agent
        # a request is from, so a spawned session's turns and its parent's may come in any order
        self.scripts = scripts_of(replies, "")
        self.route = route
        self.wire = wire
        self.main_calls = 0

    # --- what was billed (`billed(kind)`: kind 'main', the agent loop, 'title' or 'review') ----------

    def totals(self, kind: str | None = None) -> dict:
        calls = self.billed(kind)
        return {
            "calls": len(calls),
            "prompt_tokens": sum(call["prompt_tokens"] for call in calls),
            "cached_tokens": sum(call["cached_tokens"] for call in calls),
            "completion_tokens": sum(call["completion_tokens"] for call in calls),
        }

    # --- answers ---------------------------------------------------------------------------------

    def answer(self, entry: dict, body: dict, size: int) -> tuple[str, Reply, dict]:
        """The kind of call, its reply and its usage; the bill goes into the request's log entry."""
        kind = "main" if body.get("tools") else "title"
        if kind == "main" and _is_review(body):
            kind = "review"
        counted = self.wire(body) if self.wire else None
        with self.lock:
            if kind == "title":
                reply = Reply(text=TITLE)
            elif kind == "review":
                reply = Reply(text=REVIEW_TEXT)
            else:
                agent = self.route(body) if self.route else ""
                script = self.scripts.get(agent) or []
                reply = script.pop(0) if script else Reply(text=DONE_TEXT)
                entry["agent"] = agent
                self.main_calls += 1
            prompt = sum(counted.values()) if counted is not None else _tokens(size)
            cached = prompt // 2 if kind == "main" and self.main_calls > 1 else 0
            spoken = reply.text + "".join(name + json.dumps(args) for name, args in reply.tool_calls)
            usage = {"prompt_tokens": prompt, "completion_tokens": _tokens(len(spoken.encode())) + 1,
                     "prompt_tokens_details": {"cached_tokens": cached}}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            entry.update(kind=kind, prompt_tokens=prompt, cached_tokens=cached,
                                     completion_tokens=usage["completion_tokens"],
                                     stream=bool(body.get("stream")), messages=len(body.get("messages") or []))
            if counted is not None:
                entry["wire"], entry["body"] = counted, body  # the body: to see what differs when a check fails
        return kind, reply, usage


def _is_review(body: dict) -> bool:
    users = [message for message in body.get("messages") or [] if message.get("role") == "user"]
    last = users[-1].get("content") if users else None
    return isinstance(last, str) and last.lstrip().startswith(REVIEW_PROMPTS)


def _tool_calls(reply: Reply, number: int) -> list[dict]:
    return [{"index": index, "id": f"call_{number}_{index}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for index, (name, arguments) in enumerate(reply.tool_calls)]


class _Handler(FakeHandler):
    fake: FakeOpenAI

    def serves(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/chat/completions"

    def reply(self, entry: dict, body: dict, raw: bytes) -> None:
        _, reply, usage = self.fake.answer(entry, body, len(raw))
        number = entry["number"]
        if body.get("stream"):
            self._stream(reply, usage, number)
        else:
            message = {"role": "assistant", "content": reply.text or None}
            if reply.tool_calls:
                message["tool_calls"] = [{k: v for k, v in call.items() if k != "index"}
                                         for call in _tool_calls(reply, number)]
            self.send_json(200, {
                "id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
                "model": MODEL, "usage": usage,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            })

    def _stream(self, reply: Reply, usage: dict, number: int) -> None:
        self.start_stream(("Cache-Control", "no-cache"))

        def chunk(choices: list, extra: dict | None = None) -> None:
            self.send_event({"id": f"chatcmpl-{number}", "object": "chat.completion.chunk",
                             "created": int(time.time()), "model": MODEL, "choices": choices, **(extra or {})})

        chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if reply.text:
            chunk([{"index": 0, "delta": {"content": reply.text}, "finish_reason": None}])
        if reply.tool_calls:
            chunk([{"index": 0, "delta": {"tool_calls": _tool_calls(reply, number)}, "finish_reason": None}])
        chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}])
        chunk([], {"usage": usage})  # stream_options.include_usage: the last chunk carries the bill
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
