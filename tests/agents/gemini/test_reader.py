"""Gemini CLI chats: one call per gemini message with tokens, cached inside input, both file shapes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, gemini_json, gemini_jsonl

from xshare.agents.gemini import reader as gemini
from xshare.agents.gemini.tools import TOOLS
from xshare.cli import main
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = gemini.read(path, Counted(len, "chars"), problems, ledgers)
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
    assert explain_tool(TOOLS, name, args).category == want


# --- issue 28: one session id, several chat files of one folder ------------------------------------------


def cleared(first: Path, second_minute: str = "09-30") -> Path:
    """What Gemini CLI before 2026 wrote on a /clear: a new file under the same session id, holding a new
    conversation (new message ids; its first call carries none of the first file's context)."""
    document = json.loads(first.read_text())
    renamed = json.loads(json.dumps(document["messages"]).replace('"m', '"n').replace('"c', '"d')
                         .replace("T09:00:", "T09:30:"))
    document.update(startTime="2026-02-10T09:30:00.000Z", lastUpdated="2026-02-10T09:30:20.000Z", messages=renamed)
    second = first.with_name(f"session-2026-02-10T{second_minute}-{document['sessionId'][:8]}.json")
    second.write_text(json.dumps(document))
    return second


def alone(path: Path, folder: Path) -> dict:
    """The row of a chat file read with no other file beside it."""
    copied = folder / "tmp" / "p" / "chats" / path.name
    copied.parent.mkdir(parents=True)
    copied.write_bytes(path.read_bytes())
    return _read(copied)[0]


def test_a_chat_cleared_into_a_second_file_is_one_session_with_both_conversations(tmp_path: Path, capsys):
    """Both files' calls, each once, in one session (Gemini CLI's own list keeps one an id); the second
    conversation carries nothing of the first: the row is the sum of the two read apart."""
    first, want = gemini_json(tmp_path / "home")
    second = cleared(first)
    parts = [alone(first, tmp_path / "a"), alone(second, tmp_path / "b")]
    problems: Counter = Counter()
    assert gemini.read(second, Counted(len, "chars"), problems) == [] and problems == {gemini.SAME_SESSION: 1}
    row, problems = _read(first)
    assert not problems and row["id"] == json.loads(first.read_text())["sessionId"]
    assert row["api_calls"] == 2 * want["calls"] and row["prompt_tokens_billed"] == 2 * want["prompt"]
    for figure in ("billed_tokens", "first_time_tokens"):
        assert row[figure] == {name: parts[0][figure][name] + parts[1][figure][name] for name in row[figure]}
    assert row["compactions"] == 0 and row["last_activity"].startswith("2026-02-10T09:30:2")
    flags = ["--gemini-home", str(tmp_path / "home"), "--estimate"]
    assert main(["report", "--all", "--no-history", "--json", *flags]) == 0
    out, err = capsys.readouterr()
    group = json.loads(out)["groups"]["gemini/interactive"]
    assert (group["sessions"], group["api_calls"]) == (1, 2 * want["calls"])
    assert f"{gemini.SAME_SESSION}: 1" in err
    for wanted in (row["id"], str(first), str(second)):
        assert main(["session", wanted, "--json", *flags]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["api_calls"] == 2 * want["calls"], wanted
        assert ("shown as that file" in err) == (wanted == str(second)), err


def test_a_copy_of_a_chat_beside_it_counts_each_call_once(tmp_path: Path):
    """The same messages (the same ids) in a second file of the folder: one session, each call once."""
    first, want = gemini_json(tmp_path)
    copy = first.with_name(f"session-2026-02-11T10-00-{first.name.rsplit('-', 1)[1]}")
    copy.write_bytes(first.read_bytes())
    assert gemini.discover([tmp_path]) == [first, copy]
    row, _ = _read(first)
    assert row["api_calls"] == want["calls"] and row["prompt_tokens_billed"] == want["prompt"]
    assert row == alone(first, tmp_path / "apart")
    assert gemini.read(copy, Counted(len, "chars"), Counter()) == []


def test_a_later_file_of_the_session_changing_reads_the_session_again(tmp_path: Path, capsys):
    """The session's row is read from both files, so the cache takes the second file's size and time too."""
    first, want = gemini_json(tmp_path)
    flags = ["report", "--all", "--no-history", "--json", "--gemini-home", str(tmp_path), "--estimate"]
    assert main(flags) == 0 and json.loads(capsys.readouterr().out)["groups"]["gemini/interactive"]["api_calls"] == 3
    second = cleared(first)
    assert main(flags) == 0 and json.loads(capsys.readouterr().out)["groups"]["gemini/interactive"]["api_calls"] == 6
    document = json.loads(second.read_text())
    document["messages"] = document["messages"][:2]  # one call of the second conversation
    second.write_text(json.dumps(document))
    assert main(flags) == 0 and json.loads(capsys.readouterr().out)["groups"]["gemini/interactive"]["api_calls"] == 4
