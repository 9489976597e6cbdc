"""The plugin in the real Claude Code CLI, offline: every figure checked against what the fake API billed.

Each scenario runs the pinned CLI ($XSHARE_TEST_CLAUDE) against tests/support/fake_anthropic.py, then compares
`xshare session <transcript> --json` with the server's own log (requests, prompt tokens, usage) and with
`xshare session <id> --json`, which can only come from the live ledger the plugin's hooks keep. Skips
without the CLI (or without tmux for the TUI). About 40 s in all (each `claude -p` run 3-6 s, the TUI 15 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_host import (
    CLAUDE,
    REPO,
    ClaudeHost,
    Tmux,
    claude_missing,
    expected_line,
    status_line,
    tmux_missing,
    wait_until,
)
from fake_anthropic import FakeAnthropic

from xshare.install.statusline_setup import REFRESH_SECONDS
from xshare.live.status_render import DEFAULT_FORMAT, SEPARATOR, cache_fields

pytestmark = [pytest.mark.realhost, pytest.mark.skipif(claude_missing() is not None, reason=str(claude_missing()))]


@pytest.fixture
def host(tmp_path: Path):
    with FakeAnthropic(lifetime=900) as fake:
        made = ClaudeHost(tmp_path / "cc", fake)
        (made.project / "notes.txt").write_text("first line of the notes\nsecond line\n")
        (made.project / "todo.txt").write_text("- write the tests\n- ship it\n")
        yield made


def billed(requests: list) -> dict:
    """The server's side of the account, in the row's terms."""
    return {"api_calls": len(requests), "prompt_tokens_billed": sum(r.prompt_tokens for r in requests),
            "input": sum(r.usage["input_tokens"] for r in requests),
            "cache_read": sum(r.usage["cache_read_input_tokens"] for r in requests),
            "cache_write": sum(r.usage["cache_creation_input_tokens"] for r in requests)}


def recorded(row: dict) -> dict:
    usage = row["usage"]
    return {"api_calls": row["api_calls"], "prompt_tokens_billed": row["prompt_tokens_billed"],
            "input": usage["input"], "cache_read": usage["cache_read"],
            "cache_write": usage["cache_write_5m"] + usage["cache_write_1h"]}


def request_ids(transcript: Path) -> set[str]:
    rows = [json.loads(line) for line in transcript.read_bytes().splitlines() if line.strip()]
    return {row["requestId"] for row in rows if row.get("type") == "assistant" and row.get("requestId")}


def live_equals_transcript(host: ClaudeHost, transcript: Path, session_id: str | None = None) -> dict:
    host.wait_for_ledger(transcript, session_id)
    by_path = host.xshare("session", str(transcript))
    by_id = host.xshare("session", session_id or transcript.stem, hide_transcripts=True)
    assert by_id == by_path
    return by_path


def test_plugin_validate_reports_nothing(host: ClaudeHost):
    done = subprocess.run([CLAUDE, "plugin", "validate", str(REPO)], env=host.env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout and "These checks found nothing to report" in done.stdout
    assert "warning" not in done.stdout.lower() and "(declared)" in done.stdout


def test_print_mode_read_and_cat(host: ClaudeHost):
    prompt = f"XREAD {host.project / 'notes.txt'}\nXBASH cat todo.txt"
    done, requests = host.claude_p(prompt)
    assert done.stdout.strip() == "Done."
    assert len(requests) == 2 and all(r.path == "/v1/messages?beta=true" for r in requests)
    assert "sdk-cli" in requests[0].user_agent
    (transcript,) = host.transcripts()
    assert request_ids(transcript) == {r.request_id for r in requests}
    row = live_equals_transcript(host, transcript)
    assert recorded(row) == billed(requests)
    # both results were read once and carried by the second call: exploration, first seen there
    assert row["first_time_tokens"]["exploration"] > 0 and row["billed_tokens"]["shell"] == 0
    assert 0 < row["exploration_share_of_context"] < 0.05 and row["compactions"] == 0


def test_subagent_has_its_own_transcript_and_ledger(host: ClaudeHost):
    _, requests = host.claude_p(f"XAGENT XREAD {host.project / 'todo.txt'}")
    main_calls = [r for r in requests if not r.subagent]
    sub_calls = [r for r in requests if r.subagent]
    assert main_calls and sub_calls, "the Agent tool should have run a subagent"
    (transcript,) = host.transcripts()
    (agent,) = (transcript.parent / transcript.stem / "subagents").glob("agent-*.jsonl")
    main_row = live_equals_transcript(host, transcript)
    assert recorded(main_row) == billed(main_calls)
    sub_row = host.xshare("session", str(agent))
    assert sub_row["parent"] == transcript.stem and sub_row["source"] == "subagent"
    assert recorded(sub_row) == billed(sub_calls)
    assert request_ids(agent) == {r.request_id for r in sub_calls}
    assert sub_row["billed_tokens"]["exploration"] > 0  # the subagent did the reading, the parent did not
    assert main_row["billed_tokens"]["exploration"] == 0
    # SubagentStop's hook keeps the subagent's own live ledger; a -p run may cancel it at teardown, and
    # then the main session's next update (SessionEnd outlives the run) catches its family up
    sub_id = f"{transcript.stem}/{agent.stem}"
    host.wait_for_ledger(agent, sub_id)
    assert host.xshare("session", sub_id, hide_transcripts=True) == sub_row


def test_slash_command_shows_the_report_then_one_note(host: ClaudeHost):
    _, first = host.claude_p(f"XREAD {host.project / 'notes.txt'}")
    (transcript,) = host.transcripts()
    host.wait_for_ledger(transcript)
    _, requests = host.claude_p("/xshare:exploration-share --all", "--continue")
    assert len(requests) == 1
    body = json.loads(requests[0].body_text)
    texts = [block["text"] for message in body["messages"] if message["role"] == "user"
             for block in (message["content"] if isinstance(message["content"], list) else [])
             if block.get("type") == "text" and "Exploration share of the token bill" in block.get("text", "")]
    assert len(texts) == 1, "the command's output should reach the model once"
    output = texts[0]
    assert output.startswith("Exploration share of the token bill")
    assert "xshare: " not in output  # nothing from stderr ahead of (or inside) the report
    assert "Sessions: 1\n" in output and f"This session so far: {len(first)} API calls" in output
    notes = [line for line in output.splitlines() if line.startswith("Note: ")]
    assert len(notes) <= 1
    if notes:
        assert output.index("This session so far") < output.index(notes[0]) and len(notes[0]) < 320


def test_compact_in_print_mode(host: ClaudeHost):
    _, first = host.claude_p(f"XREAD {host.project / 'notes.txt'}")
    _, second = host.claude_p("/compact", "--continue")
    compactions = [r for r in second if r.compaction]
    assert len(compactions) == 1, "one compaction request, answered with a summary (no retry)"
    (transcript,) = host.transcripts()
    row = live_equals_transcript(host, transcript)
    assert row["compactions"] == 1
    recorded_calls = first + [r for r in second if not r.compaction]
    # the compaction call is in no transcript: it comes from Claude Code's cost-state totals
    assert billed(recorded_calls)["api_calls"] == recorded(row)["api_calls"] - 1
    assert row["unrecorded_calls"] == 1
    assert row["unrecorded_prompt_tokens"] == compactions[0].prompt_tokens
    assert recorded(row) == billed(first + second)


@pytest.mark.skipif(tmux_missing() is not None, reason=str(tmux_missing()))
def test_tui_status_line_shows_the_saved_row_and_catches_up_after_compact(host: ClaudeHost):
    install = subprocess.run([sys.executable, "-m", "xshare", "statusline", "install", "--format",
                              DEFAULT_FORMAT + " · {rebuilds}", "--line2", LINE2], env=host.env,
                             capture_output=True, text=True, timeout=60)
    assert install.returncode == 0, install.stderr
    settings = json.loads((host.config / "settings.json").read_text())
    assert settings["statusLine"]["refreshInterval"] == REFRESH_SECONDS
    host.trust_project()
    tui = Tmux(host)
    tui.start()
    try:
        assert "explore" in status_line(tui.wait_for(lambda screen: status_line(screen), timeout=30))
        tui.type(f"XREAD {host.project / 'notes.txt'}")
        assert wait_until(lambda: len(host.fake.requests) >= 2 and host.transcripts(), timeout=60)
        (transcript,) = host.transcripts()
        shows_row = check_line_catches_up(tui, host, transcript, timeout=REFRESH_SECONDS + 20)
        assert "2 calls" in shows_row
        check_cache_fields(tui, host, transcript)
        before = len(host.fake.requests)
        tui.type("/compact")
        assert wait_until(lambda: any(r.compaction for r in host.fake.since(before)), timeout=60)
        assert wait_until(lambda: b'"compact_boundary"' in transcript.read_bytes(), timeout=60)
        # no hook fires after the summary is written: the status line's own catch-up must clear the …
        compacted = wait_until(lambda: (host.line(transcript.stem) or {}).get("compactions") == 1, timeout=30)
        assert compacted, "nothing brought the compaction into the ledger"
        check_line_catches_up(tui, host, transcript, timeout=REFRESH_SECONDS + 20)
    finally:
        tui.stop()


LINE2 = "{nudge} · {last} · {session}"


def check_cache_fields(tui: Tmux, host: ClaudeHost, transcript: Path) -> None:
    """The new fields in the TUI are what the renderer makes of the hook's saved summary, and the last call's
    prompt is the one the fake API billed last."""
    saved = host.line(transcript.stem)
    assert saved["last"]["prompt"] == host.fake.requests[-1].prompt_tokens
    values = cache_fields(saved, colour=False)
    assert status_line(tui.screen()).endswith(values["rebuilds"]) and "cache rebuild" in values["rebuilds"]
    wanted = [part for part in LINE2.format(**values).split(SEPARATOR) if part]
    screen = tui.wait_for(lambda screen: "last call" in second_line(screen), timeout=REFRESH_SECONDS + 10)
    shown = second_line(screen)
    # Claude Code's width may drop fields from the right, never change one
    assert shown in [SEPARATOR.join(wanted[:n]) for n in range(1, len(wanted) + 1)], (shown, wanted)
    assert "last call" in shown


def second_line(screen: str) -> str:
    lines = [line.strip() for line in screen.splitlines()]
    firsts = [n for n, line in enumerate(lines) if line.startswith("explore")]
    return lines[firsts[-1] + 1] if firsts and firsts[-1] + 1 < len(lines) else ""


def check_line_catches_up(tui: Tmux, host: ClaudeHost, transcript: Path, timeout: float) -> str:
    """Wait until the status line shows the figures of the transcript's saved row, without `…`."""
    def current(screen: str) -> bool:
        line = status_line(screen)
        if not line or "…" in line:
            return False
        return line.startswith(expected_line(host.xshare("session", str(transcript))))

    screen = tui.wait_for(current, timeout=timeout)
    assert current(screen), f"status line never caught up: {status_line(screen)!r}"
    return status_line(screen)


def test_session_start_builds_the_plugin_env_and_the_hooks_switch_to_it(host: ClaudeHost, tmp_path: Path):
    """The first python3 on the PATH has no tiktoken (as on Debian, Ubuntu, Homebrew): the first session
    counts characters / 4; SessionStart builds the plugin's env in the background; once it is ready the
    hooks run under it and count o200k_base with the vocabulary the package carries."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    env = {key: value for key, value in host.env.items() if key != "XSHARE_NO_PLUGIN_ENV"}
    host.env = dict(env, PATH=os.pathsep.join([str(bare / "bin"), "/usr/bin", "/bin"]))
    host.claude_p(f"XREAD {host.project / 'notes.txt'}")
    (transcript,) = host.transcripts()
    assert host.wait_for_ledger(transcript)["tokenizer"] == "chars/4"
    data = host.config / "plugins" / "data" / "xshare-inline"
    # a loaded 2-core machine downloads and installs the env's wheels slowly (over 4 minutes was seen in CI);
    # the wait ends early on the build's failure stamp, so a long deadline only costs time when it is needed
    deadline = time.monotonic() + 900
    while not (data / "venv" / "xshare-env.json").exists():
        if (data / "venv-failed.json").exists():
            log = (data / "venv-build.log").read_text(errors="replace")[-400:]
            pytest.skip(f"the plugin env could not be built here (no package index?): {log}")
        assert time.monotonic() < deadline, "the background build never finished"
        time.sleep(1)
    host.claude_p(f"XBASH cat {host.project / 'todo.txt'}", "--continue")
    line = host.wait_for_ledger(transcript)
    assert line["tokenizer"] == "o200k_base"
    assert host.xshare("session", transcript.stem, hide_transcripts=True) == host.xshare("session", str(transcript))
