"""The scripted fake model servers (tests/support/fake_server.py and the three fakes on it) answered over HTTP, without
any agent: the real-host tests lean on them, so their shared part (log, budget, 404/400/503, streams) is
checked where it always runs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from chat_wire import ChatWire
from fake_gemini import FakeGemini, tool
from fake_openai import FakeOpenAI
from fake_openai import Reply as ChatReply
from fake_responses import FakeResponses, command

# straight to the fake on 127.0.0.1, whatever proxy the environment names (the fresh-clone pass names a closed one)
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def post(url: str, body: object, headers: dict[str, str] | None = None) -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with LOCAL.open(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def events(stream: str) -> list[dict]:
    return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: {")]


CHAT = {"tools": [{"type": "function", "function": {"name": "read_file"}}],
        "messages": [{"role": "user", "content": "Read notes.txt"}]}


def test_chat_completions_play_the_script_and_bill_the_wire_count() -> None:
    with FakeOpenAI([ChatReply(tool_calls=[("read_file", {"path": "notes.txt"})])], max_requests=5,
                    wire=ChatWire("hermes")) as fake:
        status, text = post(f"{fake.base_url}/chat/completions", {**CHAT, "stream": True})
        assert status == 200 and text.rstrip().endswith("data: [DONE]")
        chunks = events(text)
        assert chunks[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "read_file"
        (billed,) = fake.billed("main")
        assert chunks[-1]["usage"]["prompt_tokens"] == billed["prompt_tokens"] == sum(billed["wire"].values()) > 0
        status, text = post(f"{fake.base_url}/chat/completions", CHAT)  # not streamed, the script is spent
        assert status == 200 and json.loads(text)["choices"][0]["message"]["content"] == "Done."
        assert fake.totals("main")["calls"] == 2 and fake.totals("main")["cached_tokens"] > 0


def test_what_is_not_the_endpoint_is_a_404_bad_json_a_400_and_past_the_budget_a_503() -> None:
    with FakeOpenAI([], max_requests=3) as fake:
        with pytest.raises(urllib.error.HTTPError) as probe:
            LOCAL.open(f"{fake.base_url}/models", timeout=10)
        assert probe.value.code == 404
        assert post(f"{fake.base_url}/embeddings", CHAT)[0] == 404
        assert post(f"{fake.base_url}/chat/completions", b"{not json") == (400, '{"error": {"message": "not JSON"}}')
        status, text = post(f"{fake.base_url}/chat/completions", CHAT)
        assert status == 503 and "budget" in text
        assert [entry["method"] for entry in fake.requests] == ["GET", "POST", "POST", "POST"]
        assert fake.billed() == []
    with pytest.raises(AssertionError):
        fake.base_url  # noqa: B018 - stopped: no address


def test_responses_stream_events_and_read_the_cache_from_the_lanes_previous_request() -> None:
    first = {"model": "gpt-5.5", "prompt_cache_key": "k", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the files."}]}]}
    with FakeResponses([command("ls")]) as fake:
        status, text = post(f"{fake.base_url}/responses", first, {"x-codex-turn-metadata": "{}"})
        assert status == 200 and "event: response.created\n" in text
        assert events(text)[1]["item"]["name"] == "exec_command"
        call = events(text)[1]["item"]
        second = {**first, "input": [*first["input"], call,
                                     {"type": "function_call_output", "call_id": call["call_id"], "output": "a b"}]}
        status, text = post(f"{fake.base_url}/responses", second, {"x-codex-turn-metadata": "{}"})
        one, two = fake.billed("turn")
        assert status == 200 and two["cached_tokens"] == one["prompt_tokens"] > 0  # the user message, again
        assert two["wire"]["exploration"] > 0
        assert post(f"{fake.base_url}/chat/completions", first)[0] == 404


def test_gemini_routes_and_streams_and_its_errors_carry_the_code() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Read notes.txt"}]}]}
    with FakeGemini([tool("read_file", file_path="notes.txt")]) as fake:
        status, text = post(f"{fake.base_url}/v1beta/models/flash:generateContent", body)
        assert status == 200 and "model_choice" in json.loads(text)["candidates"][0]["content"]["parts"][0]["text"]
        status, text = post(f"{fake.base_url}/v1beta/models/pro:streamGenerateContent?alt=sse", body)
        (candidate,) = events(text)
        assert candidate["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "read_file"
        assert candidate["modelVersion"] == "pro"
        assert [entry["kind"] for entry in fake.billed()] == ["router", "main"]
        status, text = post(f"{fake.base_url}/v1beta/models/pro:countTokens", body)
        assert status == 404 and json.loads(text) == {"error": {"code": 404, "message": "not found"}}
