"""Qwen Code through every command, by the registry alone (its folder and table line, nothing else): `report`
(and dollars), `sessions`, `session ID|PREFIX|PATH`, `html`, `html --index` and `advice`, on an invented chat in
its default home (~/.qwen)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from qwen_fixtures import SESSION, Chat, session

from xshare.cli import main


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_sessions_and_session(isolated_home: Path, capsys: pytest.CaptureFixture) -> None:
    path, want = session(isolated_home / ".qwen")
    code, out, _ = run(capsys, "report", "--all", "--json")
    report = json.loads(out)
    assert code == 0 and report["sources"]["Qwen Code"] == "read"
    group = report["groups"]["qwen/interactive"]
    assert group["sessions"] == 1 and group["api_calls"] == want["calls"]
    assert group["prompt_tokens_billed"] == want["prompt"]
    code, out, _ = run(capsys, "sessions")
    assert code == 0 and SESSION[:8] in out and "qwen/interactive" in out and "shop-app" in out  # its project
    for named in (SESSION, SESSION[:6], str(path)):
        code, out, _ = run(capsys, "session", named, "--json")
        found = json.loads(out)
        assert code == 0 and found["agent"] == "qwen" and found["id"] == SESSION
        assert found["api_calls"] == want["calls"] and found["usage"]["cache_read"] == want["cache_read"]
    code, out, _ = run(capsys, "report", "--all")
    assert "Why is the cart total wrong" not in out and "cart.py" not in out  # aggregates only
    assert "up to 1 next-prompt suggestion request Qwen Code's TUI makes" in " ".join(out.split())  # named


def test_pages_index_and_advice(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    session(isolated_home / ".qwen")
    page = tmp_path / "page.html"
    code, out, _ = run(capsys, "html", SESSION[:8], "-o", str(page))
    assert code == 0 and out.strip() == str(page)
    text = page.read_text()
    assert "Qwen Code · " in text and "Call 5: billed" in text
    index = tmp_path / "index.html"
    code, _, _ = run(capsys, "html", "--index", "-o", str(index))
    assert code == 0 and SESSION[:8] in index.read_text()
    code, out, _ = run(capsys, "advice")
    assert code == 0 and "read_file" in out and "7d1e0a52" in out  # its costliest reads, by its tool names


def test_dollars_at_the_models_list_price(isolated_home: Path, capsys: pytest.CaptureFixture) -> None:
    chat = Chat().user("hi").reply(100_000, 40_000, 1_000, text="ok")
    for record in chat.records:
        if record["type"] == "assistant":
            record["model"] = "gpt-5"  # Qwen Code on an OpenAI provider records the provider's model name
    chat.write(isolated_home / ".qwen")
    code, out, _ = run(capsys, "report", "--all", "--json")
    dollars = json.loads(out)["dollars"]
    # gpt-5 per million: fresh input $1.25, cache read $0.125, output $10: 60k + 40k cached + 1k out
    assert code == 0 and dollars["sessions_priced"] == 1 and dollars["by_agent"]["qwen"]["dollars"] == 0.09
    assert dollars["prompt_dollars"] == 0.08
    code, text, _ = run(capsys, "session", SESSION)
    assert re.search(r"Dollars \(list prices of [0-9-]+\): \$0\.09, of which the prompt \$0\.08", text), text
