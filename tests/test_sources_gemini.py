"""Gemini CLI chats: one call per gemini message with tokens, cached inside input, both file shapes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import gemini_json, gemini_jsonl

from xshare.cli import main
from xshare.measure.agent_tools import explain_tool
from xshare.sources import gemini


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = gemini.read(path, len, "chars", problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


@pytest.mark.parametrize("write", [gemini_json, gemini_jsonl])
def test_calls_usage_and_categories(tmp_path: Path, write):
    path, want = write(tmp_path)
    assert gemini.discover([tmp_path]) == [path]
    ledgers: dict = {}
    row, problems = _read(path, ledgers)
    assert row["agent"] == "gemini" and row["source"] == "interactive"
    assert row["api_calls"] == want["calls"] and row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"]
    assert row["usage"]["input"] == want["prompt"] - want["cache_read"]
    assert row["usage"]["output"] == want["output"]
    assert row["models"] == ["gemini-2.5-pro", "gemini-2.5-flash"]
    log = ledgers[row["id"]].call_log
    assert log[0]["present"]["exploration"] == 0 < log[1]["present"]["exploration"]  # results join after
    assert log[1]["present"]["edit"] == 0 < log[2]["present"]["edit"]
    assert not problems


def test_jsonl_keeps_the_last_record_of_a_message(tmp_path: Path):
    row_json, _ = _read(gemini_json(tmp_path / "a")[0])
    row_jsonl, _ = _read(gemini_jsonl(tmp_path / "b")[0])
    # the repeats (without results, then with) count once: the same context as the .json file
    assert row_jsonl["billed_tokens"] == row_json["billed_tokens"]
    assert row_jsonl["first_time_tokens"] == row_json["first_time_tokens"]


def test_a2a_whole_array_replacement_and_bad_lines(tmp_path: Path):
    path = tmp_path / "tmp" / "p" / "chats" / "session-2026-08-01T10-00-a2a-serv.jsonl"
    path.parent.mkdir(parents=True)
    header = {"sessionId": "a2a-server", "projectHash": "cd" * 32, "startTime": "2026-08-01T10:00:00.000Z",
              "kind": "main"}
    first = [{"id": "u1", "type": "user", "content": [{"text": "hello"}], "timestamp": "2026-08-01T10:00:01Z"}]
    second = first + [{"id": "g1", "type": "gemini", "content": "hi", "timestamp": "2026-08-01T10:00:02Z",
                       "tokens": {"input": 900, "cached": 0, "output": 3, "thoughts": 0, "tool": 0, "total": 903}}]
    path.write_text("\n".join([json.dumps(header), json.dumps({"$set": {"messages": first}}), "{broken",
                               json.dumps(header), json.dumps({"$set": {"messages": second}})]) + "\n")
    row, problems = _read(path)
    assert row["id"] == path.stem  # every A2A chat has the id "a2a-server"
    assert row["api_calls"] == 1 and row["prompt_tokens_billed"] == 900
    assert problems == {"Gemini CLI chat lines that are not JSON (skipped)": 1}


def test_subagent_kind_and_report(tmp_path: Path, capsys: pytest.CaptureFixture):
    home = tmp_path / ".gemini"
    gemini_json(home)
    gemini_json(home, session_id="99999999-aaaa-4bbb-8ccc-000000000009", kind="subagent")
    assert main(["report", "--all", "--json", "--gemini-home", str(home)]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["gemini/interactive"]["api_calls"] == 3 and groups["gemini/subagent"]["sessions"] == 1


def test_default_home_follows_gemini_cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert gemini.default_homes() == [Path.home() / ".gemini"]
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert gemini.default_homes() == [tmp_path / ".gemini"]


@pytest.mark.parametrize(("name", "args", "want"), [
    ("read_file", {"file_path": "a.py"}, "exploration"),
    ("list_directory", {"dir_path": "."}, "exploration"),
    ("search_file_content", {"pattern": "x"}, "exploration"),
    ("run_shell_command", {"command": "git log --oneline | head"}, "exploration"),
    ("run_shell_command", {"command": "npm test"}, "shell"),
    ("write_file", {"file_path": "a.py", "content": ""}, "edit"),
    ("google_web_search", {"query": "x"}, "web"),
    ("write_todos", {}, "other"),
])
def test_gemini_tools(name: str, args: dict, want: str):
    assert explain_tool("gemini", name, args).category == want
