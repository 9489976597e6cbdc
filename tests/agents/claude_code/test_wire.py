"""The wire check: xshare's figures against what the real Claude Code actually sent.

tests/support/fake_anthropic.py counts every request with o200k_base (tests/support/wire.py) and bills exactly that,
with each request's tokens by category. Each scenario drives the pinned CLI ($XSHARE_TEST_CLAUDE), then
compares `xshare session <transcript> --json` with the wire, category by category (exploration, edits,
other shell, re-sent reads): xshare's share of the bill and of its modelled context must each be within
0.1 percentage point of the wire's share (the wire's context is its bill). Compaction calls, which no
transcript records, are on the wire and in xshare's figures (from Claude Code's cost-state totals).
Skips without the CLI (or tmux for the TUI). About 2 minutes in all (each `claude -p` run 3-6 s).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from claude_host import ClaudeHost, Tmux, claude_missing, tmux_missing, wait_until
from fake_anthropic import FakeAnthropic
from wire import wire_shares

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(claude_missing() is not None, reason=str(claude_missing()))]

TOLERANCE = 0.001  # 0.1 percentage point
COMPARED = ("exploration", "edit", "shell", "reread")
TOOLS = "Read,Grep,Glob,Bash,Edit,Write,Agent"
MCP_SERVER = Path(__file__).resolve().parents[2] / "support" / "mcp_server.py"


def module_text(functions: int) -> str:
    """An invented Python module of some size (about 27 tokens a function)."""
    return "".join(f"def handler_{n}(request, retries={n % 7}):\n    return dispatch(request, 'route_{n}', retries)\n\n"
                   for n in range(functions))


def wire_host(root: Path, fake: FakeAnthropic) -> ClaudeHost:
    """A Claude Code home on the fake server, and a small project: a module, notes, a todo list."""
    made = ClaudeHost(root, fake)
    (made.project / "app.py").write_text(module_text(120))
    (made.project / "notes.txt").write_text("".join(f"note {n}: the retry budget is {n * 3} seconds\n"
                                                    for n in range(40)))
    (made.project / "todo.txt").write_text("- write the tests\n- ship it\n")
    return made


@pytest.fixture
def host(tmp_path: Path):
    with FakeAnthropic(lifetime=900) as fake:
        yield wire_host(tmp_path / "cc", fake)


def agreement(host: ClaudeHost, requests: list, transcript: Path) -> dict:
    """xshare's row for the transcript, checked against the wire's account of `requests`."""
    row = host.xshare("session", str(transcript))
    assert row["api_calls"] == len(requests)
    assert row["prompt_tokens_billed"] == sum(request.prompt_tokens for request in requests)
    wire = wire_shares(requests)
    measured = {}
    for category in COMPARED:
        of_bill = row["billed_tokens"][category] / row["prompt_tokens_billed"]
        of_context = row["billed_tokens"][category] / row["context_tokens"]
        measured[category] = {"wire": wire[category], "bill": of_bill, "context": of_context}
    _log(transcript, row, measured)
    for category, shares in measured.items():
        assert abs(shares["bill"] - shares["wire"]) <= TOLERANCE, (category, "bill", measured)
        assert abs(shares["context"] - shares["wire"]) <= TOLERANCE, (category, "context", measured)
    return row


def _log(transcript: Path, row: dict, measured: dict) -> None:
    """With $XSHARE_WIRE_REPORT set, one JSON line per comparison (the README's figures come from it)."""
    target = os.environ.get("XSHARE_WIRE_REPORT")
    if target:
        scenario = os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[-1].split(" ")[0]
        line = {"scenario": scenario, "file": "subagent" if transcript.name.startswith("agent-") else "main",
                "calls": row["api_calls"], "billed": row["prompt_tokens_billed"], "shares": measured}
        with open(target, "a") as handle:
            handle.write(json.dumps(line) + "\n")


def body(request) -> dict:
    return json.loads(request.body_text)


def content_blocks(request, kind: str) -> list[dict]:
    return [block for message in body(request)["messages"] if isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == kind]


def test_the_instrument_bills_exactly_what_it_counted(host: ClaudeHost):
    _, requests = host.claude_p(f"XREAD {host.project / 'app.py'}")
    for request in requests:
        assert request.prompt_tokens == sum(request.wire.values())
        assert request.usage["input_tokens"] <= 3
    first, second = requests
    # the second request repeats the first (system prompt, tools, prompt) and adds the call and its result
    assert second.usage["cache_read_input_tokens"] >= first.prompt_tokens - first.wire["rest"] // 4
    assert second.wire["exploration"] > first.wire["exploration"] == 0


def test_parallel_tool_calls_in_one_turn(host: ClaudeHost):
    project = host.project
    prompt = "\n".join([f"XREAD {project / 'app.py'}", f"XREAD {project / 'notes.txt'}", "XGREP def handler_1",
                        "XGLOB *.txt", "XBASH wc -l todo.txt"])
    _, requests = host.claude_p(prompt, "--tools", TOOLS)
    assert len(requests) == 2 and len(content_blocks(requests[1], "tool_result")) == 5
    assert requests[1].commands == [("wc -l todo.txt", "exploration")]
    (transcript,) = host.transcripts()
    row = agreement(host, requests, transcript)
    assert row["billed_tokens"]["exploration"] > 0.2 * row["prompt_tokens_billed"]


def test_shell_edits_continue_and_resume(host: ClaudeHost):
    project = host.project
    _, first = host.claude_p("XBASH cat notes.txt\nXBASH sed -n 1,40p app.py")
    _, second = host.claude_p("XBASH python3 -c 'print(6 * 7)'", "--continue")
    (transcript,) = host.transcripts()
    _, third = host.claude_p(f"XEDIT {project / 'todo.txt'}|ship it|ship it today\n"
                             f"XWRITE {project / 'plan.txt'}|first the tests, then the release", "--resume",
                             transcript.stem)
    assert (project / "plan.txt").read_text() == "first the tests, then the release"
    commands = dict(command for request in first + second for command in request.commands)
    assert commands == {"cat notes.txt": "exploration", "sed -n 1,40p app.py": "exploration",
                        "python3 -c 'print(6 * 7)'": "shell"}
    row = agreement(host, first + second + third, transcript)
    assert all(row["billed_tokens"][category] > 0 for category in ("exploration", "edit", "shell"))


def test_thinking_blocks_are_re_sent_and_counted_by_neither(host: ClaudeHost):
    _, requests = host.claude_p(f"XTHINK\nXREAD {host.project / 'app.py'}")
    assert len(requests) == 2
    thinking = content_blocks(requests[1], "thinking")
    assert thinking and thinking[0]["thinking"].startswith("Let me look")  # the tool loop re-sends it
    # 2.1.332 asks the API to keep thinking (its only context-management edit)
    assert body(requests[1])["context_management"]["edits"] == [{"type": "clear_thinking_20251015", "keep": "all"}]
    (transcript,) = host.transcripts()
    agreement(host, requests, transcript)


def test_a_subagent_against_its_own_requests(host: ClaudeHost):
    _, requests = host.claude_p(f"XAGENT XREAD {host.project / 'app.py'}\nXBASH ls")
    main_calls = [request for request in requests if not request.subagent]
    sub_calls = [request for request in requests if request.subagent]
    assert main_calls and sub_calls
    (transcript,) = host.transcripts()
    (agent,) = (transcript.parent / transcript.stem / "subagents").glob("agent-*.jsonl")
    sub_row = agreement(host, sub_calls, agent)
    assert sub_row["billed_tokens"]["exploration"] > 0.1 * sub_row["prompt_tokens_billed"]
    agreement(host, main_calls, transcript)


def test_an_mcp_tool(host: ClaudeHost, tmp_path: Path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"files": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}))
    host.env["ENABLE_TOOL_SEARCH"] = "false"  # offer the MCP tool itself, not through ToolSearch
    arguments = json.dumps({"path": str(host.project / "notes.txt")})
    _, requests = host.claude_p(f"XMCP mcp__files__read_text {arguments}\nXREAD {host.project / 'todo.txt'}",
                                "--mcp-config", str(config))
    assert "mcp__files__read_text" in [tool["name"] for tool in body(requests[0])["tools"]]
    results = content_blocks(requests[1], "tool_result")
    assert any("note 39: the retry budget" in json.dumps(result["content"]) for result in results)
    (transcript,) = host.transcripts()
    row = agreement(host, requests, transcript)
    # an MCP tool is "other" for xshare, the rest for the wire: its result is in neither's exploration
    assert row["billed_tokens"]["other"] > row["billed_tokens"]["exploration"] > 0


def test_compact_re_sends_reads_counted_as_sent(host: ClaudeHost):
    _, first = host.claude_p(f"XREAD {host.project / 'app.py'}\nXREAD {host.project / 'notes.txt'}")
    _, second = host.claude_p("/compact", "--continue")
    _, third = host.claude_p("XBASH cat todo.txt", "--continue")
    assert [request.compaction for request in second] == [True]
    resent = [request for request in third if request.wire["reread"]]
    assert resent == third, "every call after /compact carries the re-sent files"
    (transcript,) = host.transcripts()
    row = agreement(host, first + second + third, transcript)
    assert row["compactions"] == 1 and row["unrecorded_calls"] == 1
    assert row["billed_tokens"]["reread"] > 0
    assert row["reread_share_of_prompt"] == row["billed_tokens"]["reread"] / row["prompt_tokens_billed"]


def test_automatic_compaction_at_the_context_limit(host: ClaudeHost):
    # 2% of the window Claude Code assumes for the model: above a bare request, below one holding a big read
    host.env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = "2"
    (host.project / "big.py").write_text(module_text(600))
    _, first = host.claude_p(f"XREAD {host.project / 'big.py'}\nXREAD {host.project / 'notes.txt'}")
    _, second = host.claude_p("XBASH cat todo.txt", "--continue")
    assert [request.compaction for request in first] == [False, False]
    assert second[0].compaction and not any(request.compaction for request in second[1:])
    (transcript,) = host.transcripts()
    rows = [json.loads(line) for line in transcript.read_text().splitlines()]
    (boundary,) = [row for row in rows if row.get("subtype") == "compact_boundary"]
    assert boundary["compactMetadata"]["trigger"] == "auto"
    row = agreement(host, first + second, transcript)
    assert row["compactions"] == 1 and row["unrecorded_calls"] == 1


def test_microcompaction_is_not_what_2_1_332_does(host: ClaudeHost):
    """2.1.1x-2.1.6x cleared old tool results ("[Old tool result content cleared]", a microcompact_boundary
    row); 2.1.332 clears them only on the first-party API's context hint, which a custom endpoint never
    gives. What it does instead: it keeps every result and asks the API to keep thinking (see above)."""
    reads = "\n".join(f"XREAD {host.project / name}" for name in ("app.py", "notes.txt", "todo.txt"))
    _, first = host.claude_p(reads)
    _, second = host.claude_p(f"XBASH cat {host.project / 'app.py'}", "--continue")
    for request in first + second:
        assert "[Old tool result content cleared]" not in request.body_text
        assert "context_hint" not in body(request)
    (transcript,) = host.transcripts()
    assert b"microcompact_boundary" not in transcript.read_bytes()
    row = agreement(host, first + second, transcript)
    assert row["trimmed_messages"] == 0


def test_a_model_switch(host: ClaudeHost):
    _, first = host.claude_p(f"XREAD {host.project / 'app.py'}")
    _, second = host.claude_p(f"XREAD {host.project / 'notes.txt'}", "--continue", "--model", "claude-sonnet-5-5")
    assert {body(request)["model"] for request in second} == {"claude-sonnet-5-5"}
    assert {body(request)["model"] for request in first} != {"claude-sonnet-5-5"}
    (transcript,) = host.transcripts()
    row = agreement(host, first + second, transcript)
    assert "claude-sonnet-5-5" in row["models"] and len(row["models"]) == 2


@pytest.mark.skipif(tmux_missing() is not None, reason=str(tmux_missing()))
def test_the_tui(host: ClaudeHost):
    host.trust_project()
    tui = Tmux(host)
    tui.start()
    try:
        assert wait_until(lambda: "bypass" in tui.screen().lower() or ">" in tui.screen(), timeout=30)
        tui.type(f"XREAD {host.project / 'app.py'}")
        assert wait_until(lambda: len(host.fake.requests) >= 2 and host.transcripts(), timeout=60)
        (transcript,) = host.transcripts()
        tui.type("XBASH cat notes.txt")
        assert wait_until(lambda: len(host.fake.requests) >= 4, timeout=60)
        assert wait_until(lambda: b'"Done."' in transcript.read_bytes().split(b"cat notes.txt")[-1], timeout=30)
    finally:
        tui.stop()
    requests = host.fake.requests
    assert all("(external, cli)" in request.user_agent for request in requests)
    agreement(host, requests, transcript)

