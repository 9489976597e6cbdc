"""The other agents through the CLI: defaults without flags, the header, classify --why, session, html,
the cache, and stdout carrying aggregates only."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from agent_fixtures import codex_session, gemini_json, openclaw_session, opencode_db
from kilo_fixtures import kilo_db
from qwen_fixtures import SESSION as QWEN_ID
from qwen_fixtures import session as qwen_session

from xshare.agents.common.file_rows import cache_path
from xshare.agents.table import names_listed
from xshare.cli import main
from xshare.sessions.registry import REGISTRY

HEADER = ("Codex CLI", "Gemini CLI", "OpenCode", "OpenClaw", "Qwen Code", "Kilo CLI")


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _all_homes(home: Path) -> None:
    """Every agent in its documented default place under this (empty, test) home folder."""
    codex_session(home / ".codex")
    gemini_json(home / ".gemini")
    opencode_db(home / ".local" / "share" / "opencode" / "opencode.db")
    openclaw_session(home / ".openclaw")
    qwen_session(home / ".qwen")
    kilo_db(home / ".local" / "share" / "kilo" / "kilo.db")


def test_defaults_found_without_flags(isolated_home: Path, capsys: pytest.CaptureFixture):
    _all_homes(isolated_home)
    code, out, _ = run(capsys, "report", "--all", "--json")
    report = json.loads(out)
    assert code == 0 and {name: report["sources"][name] for name in HEADER} == dict.fromkeys(HEADER, "read")
    assert {"codex/interactive", "gemini/interactive", "opencode/interactive", "opencode/subagent",
            "openclaw/interactive", "qwen/interactive", "kilo/interactive"} <= set(report["groups"])
    code, out, _ = run(capsys, "report", "--all")
    header = out.splitlines()[1]  # every agent's state on it, an agent added later after these
    assert "Codex CLI: read; Gemini CLI: read; OpenCode: read; OpenClaw: read" in header, header
    for private in ("sed -n", "src/app.py", "0190aaaa", "ses_b001", "ses_k001", "cli.js", str(isolated_home)):
        assert private not in out  # aggregates only


def test_an_agent_not_found_is_one_header_entry(tmp_path: Path, capsys: pytest.CaptureFixture):
    codex_session(tmp_path / "codex")
    code, out, err = run(capsys, "report", "--all", "--codex-home", str(tmp_path / "codex"))
    assert code == 0
    header = out.splitlines()[1]  # a report on named folders is on those alone (issue 21)
    assert header.endswith("(all sessions). Codex CLI: read."), header
    assert "Gemini" not in err and "OpenClaw" not in err
    code, _, err = run(capsys, "report", "--all", "--gemini-home", str(tmp_path / "none"))
    assert code == 2 and "Gemini CLI chats under" in err  # where it looked, when nothing was found at all


def test_rows_file_holds_every_agent(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    _all_homes(isolated_home)
    rows_file = tmp_path / "rows.jsonl"
    assert run(capsys, "report", "--all", "--rows", str(rows_file))[0] == 0
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert sorted({row["agent"] for row in rows}) == ["codex", "gemini", "kilo", "openclaw", "opencode", "qwen"]
    assert all(row["api_calls"] > 0 for row in rows)


def test_cache_reads_a_changed_file_again(tmp_path: Path, capsys: pytest.CaptureFixture):
    home = tmp_path / "codex"
    path, want = codex_session(home)
    arguments = ("report", "--all", "--json", "--codex-home", str(home))
    first = json.loads(run(capsys, *arguments)[1])["groups"]["codex/interactive"]
    assert cache_path("codex").is_file()
    assert json.loads(run(capsys, *arguments)[1])["groups"]["codex/interactive"] == first
    codex_session(home, "0190aaaa-1111-7000-8000-000000000002")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:8]))  # cut after its first call
    os.utime(path, ns=(1, 1))
    changed = json.loads(run(capsys, *arguments)[1])["groups"]["codex/interactive"]
    assert changed["sessions"] == 2 and changed["api_calls"] == 1 + want["calls"]


def test_classify_why_for_agent_tool_calls(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    calls = [{"agent": "codex", "tool": "shell", "input": {"command": ["bash", "-lc", "nl -ba a.py | sed -n 1,9p"]}},
             {"agent": "codex", "tool": "shell", "input": {"command": ["cargo", "build"]}},
             {"agent": "codex", "tool": "apply_patch", "input": {"input": "*** Begin Patch"}},
             {"agent": "opencode", "tool": "grep", "input": {"pattern": "x"}},
             {"agent": "elsewhere", "tool": "read"}]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(json.dumps(call) for call in calls) + "\n"))
    code, out, err = run(capsys, "classify", "--jsonl", "--why")
    lines = [line.split("\t") for line in out.splitlines()]
    assert code == 0 and [line[0] for line in lines] == ["exploration", "shell", "edit", "exploration", "invalid"]
    assert "the command: nl -ba a.py | sed -n 1,9p" in lines[0][1]
    assert "cargo build" in lines[1][1] and "'cargo'" in lines[1][1]
    tabled = [adapter.agent for adapter in REGISTRY if adapter.tools is not None]  # the agents with tool tables
    assert tabled[:4] == ["codex", "gemini", "opencode", "openclaw"]
    assert "line 5" in err and f"\"agent\": {', '.join(tabled[:-1])} or {tabled[-1]}" in err


def test_session_and_html_for_each_agent(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    _all_homes(isolated_home)
    for session_id, agent in (("0190aaaa-1111-7000-8000-000000000001", "codex"),
                              ("3c2a1b0d-aaaa-4bbb-8ccc-000000000001", "gemini"), ("ses_b002", "opencode"),
                              ("6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d", "openclaw"), (QWEN_ID, "qwen"),
                              ("ses_k001", "kilo")):
        code, out, _ = run(capsys, "session", session_id, "--json")
        assert code == 0 and json.loads(out)["agent"] == agent
        page = tmp_path / f"{agent}.html"
        code, out, _ = run(capsys, "html", session_id, "-o", str(page))
        assert code == 0 and out.strip() == str(page)
        text = page.read_text()
        shown = {"codex": "Codex CLI", "gemini": "Gemini CLI", "opencode": "OpenCode", "openclaw": "OpenClaw",
                 "qwen": "Qwen Code", "kilo": "Kilo CLI"}[agent]
        assert f"{shown} · " in text and "Call 1: billed" in text  # its name, as the report says it
    code, _, err = run(capsys, "html", "no-such-session")
    assert code == 2 and f"no session of {names_listed('or')} matches" in err


def test_demo_reads_no_other_agent(isolated_home: Path, capsys: pytest.CaptureFixture):
    _all_homes(isolated_home)
    code, out, _ = run(capsys, "report", "--demo", "--json")
    report = json.loads(out)
    assert code == 0 and not any(group["agent"] != "claude-code"
                                 for group in report["groups"].values())
