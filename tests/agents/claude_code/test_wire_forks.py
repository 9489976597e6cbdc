"""The wire check (tests/agents/claude_code/test_wire.py) on sessions that span files or lose requests:
`--resume --fork-session`, a plain `--resume`, `/clear`, 529 and 500 retries, and the CLI killed mid-stream. Each
compares xshare's calls and bill with what the fake server billed, and both shares within 0.1 percentage point
(issue 19, item 1)."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from claude_host import CLAUDE, REPO, ClaudeHost, Tmux, claude_missing, tmux_missing, wait_until
from fake_anthropic import FakeAnthropic

from tests.agents.claude_code.test_wire import agreement, wire_host

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(claude_missing() is not None, reason=str(claude_missing()))]


@pytest.fixture
def cc(tmp_path: Path):
    """test_wire's host: the fake server, a Claude Code home and a small project."""
    with FakeAnthropic(lifetime=900) as fake:
        yield wire_host(tmp_path / "cc", fake)


def rows_of(transcript: Path) -> list[dict]:
    return [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]


def report_totals(host: ClaudeHost) -> tuple[int, int]:
    """Calls and bill over every Claude Code group of `xshare report` on this host's sessions."""
    out = host.xshare("report", "--all", "--no-history", "--claude-root", str(host.config), "--hermes-db",
                      str(host.root / "none.db"))
    groups = [group for key, group in out["groups"].items() if key.startswith("claude-code/")]
    return sum(group["api_calls"] for group in groups), sum(group["prompt_tokens_billed"] for group in groups)


def billed(requests: list) -> tuple[int, int]:
    return len(requests), sum(request.prompt_tokens for request in requests)


def test_a_fork_bills_only_its_own_requests(cc: ClaudeHost):
    _, first = cc.claude_p(f"XREAD {cc.project / 'app.py'}\nXREAD {cc.project / 'notes.txt'}")
    (parent,) = cc.transcripts()
    _, forked = cc.claude_p("XBASH cat todo.txt", "--resume", parent.stem, "--fork-session")
    (fork,) = [path for path in cc.transcripts() if path != parent]
    copied = [row for row in rows_of(fork) if row.get("requestSessionId") == parent.stem]
    assert copied, "the fork starts with the parent's calls, marked as the parent's"
    agreement(cc, first, parent)
    row = agreement(cc, forked, fork)
    assert row["billed_tokens"]["exploration"] > 0  # the parent's reads, re-sent by the fork's calls
    assert report_totals(cc) == billed(first + forked)
    # the live ledger the plugin's hook kept (the hooks outlive a -p run: wait for the last write)
    assert cc.wait_for_ledger(fork)["api_calls"] == len(forked)


def test_a_plain_resume_appends_to_the_same_file(cc: ClaudeHost):
    _, first = cc.claude_p(f"XREAD {cc.project / 'app.py'}")
    (transcript,) = cc.transcripts()
    _, second = cc.claude_p("XBASH wc -l notes.txt", "--resume", transcript.stem)
    assert cc.transcripts() == [transcript]
    agreement(cc, first + second, transcript)
    assert report_totals(cc) == billed(first + second)
    assert cc.wait_for_ledger(transcript)["api_calls"] == len(first + second)


@pytest.mark.parametrize("status, attempts", [(529, 2), (500, 1)])
def test_retried_errors_are_not_calls(cc: ClaudeHost, status: int, attempts: int):
    _, first = cc.claude_p(f"XFAIL {status} {attempts}\nXREAD {cc.project / 'app.py'}")
    _, second = cc.claude_p("XBASH cat notes.txt", "--continue")
    assert cc.fake.failed == [status] * attempts
    (transcript,) = cc.transcripts()
    errors = [row for row in rows_of(transcript) if row.get("subtype") == "api_error"]
    assert len(errors) == attempts  # Claude Code records each failed attempt; none of them was billed
    agreement(cc, first + second, transcript)
    assert report_totals(cc) == billed(first + second)


def test_the_cli_killed_mid_stream(cc: ClaudeHost):
    """Ctrl-C (SIGINT) while a reply streams: its tool call is complete, its text is not. Claude Code writes the
    partial reply with the request's usage, so the request is a call like any other."""
    _, first = cc.claude_p(f"XREAD {cc.project / 'app.py'}")
    (transcript,) = cc.transcripts()
    before = len(cc.fake.requests)
    prompt = f"XSTALL\nXBASH cat {cc.project / 'notes.txt'}"
    process = subprocess.Popen([CLAUDE, "-p", prompt, "--continue", "--plugin-dir", str(REPO), "--permission-mode",
                                "bypassPermissions"], cwd=cc.project, env=cc.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        assert cc.fake.stalled.wait(120), "the stalled request never came"
        # the partial reply is out; the CLI takes a moment to read it (nothing on disk shows when it has)
        assert not wait_until(lambda: process.poll() is not None, timeout=3)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    killed = cc.fake.since(before)
    assert [request.request_id for request in killed] == [killed[0].request_id]
    assert killed[0].request_id.encode() in transcript.read_bytes(), "the interrupted reply was not written"
    _, after = cc.claude_p("XBASH cat todo.txt", "--continue")
    agreement(cc, first + killed + after, transcript)
    assert report_totals(cc) == billed(first + killed + after)


@pytest.mark.skipif(tmux_missing() is not None, reason=str(tmux_missing()))
def test_clear_starts_a_new_file(cc: ClaudeHost):
    cc.trust_project()
    tui = Tmux(cc)
    tui.start()
    try:
        assert wait_until(lambda: "bypass" in tui.screen().lower() or ">" in tui.screen(), timeout=60)
        tui.type(f"XREAD {cc.project / 'app.py'}")
        assert wait_until(lambda: len(cc.fake.requests) >= 2 and cc.transcripts(), timeout=90)
        (before,) = cc.transcripts()
        assert wait_until(lambda: b'"Done."' in before.read_bytes(), timeout=60)
        first = list(cc.fake.requests)
        tui.type("/clear")
        tui.type("XBASH cat notes.txt")
        assert wait_until(lambda: len(cc.transcripts()) == 2 and len(cc.fake.requests) >= len(first) + 2,
                          timeout=90)
        (after,) = [path for path in cc.transcripts() if path != before]
        assert wait_until(lambda: b'"Done."' in after.read_bytes(), timeout=60)
    finally:
        tui.stop()
    second = cc.fake.requests[len(first):]
    agreement(cc, first, before)
    agreement(cc, second, after)
    assert report_totals(cc) == billed(first + second)
