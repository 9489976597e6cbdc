"""OpenCode's database: a call per step-finish part, input excluding cache reads and writes, child sessions,
compaction, and a read that writes nothing."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, opencode_db

from xshare.agents.opencode import reader as opencode
from xshare.agents.opencode.tools import TOOLS
from xshare.cli import main
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict[str, dict], Counter]:
    problems: Counter = Counter()
    rows = opencode.read(path, Counted(len, "chars"), problems, ledgers)
    return {row["id"]: row for row in rows}, problems


def test_steps_are_calls_and_cache_is_outside_input(tmp_path: Path):
    path, want = opencode_db(tmp_path / "opencode" / "opencode.db")
    assert opencode.discover([tmp_path / "opencode"]) == [path]
    ledgers: dict = {}
    rows, problems = _read(path, ledgers)
    assert set(rows) == set(want) and not problems
    for session_id, expected in want.items():
        row = rows[session_id]
        assert row["api_calls"] == expected["calls"] and row["prompt_tokens_billed"] == expected["prompt"]
        assert row["usage"]["cache_write_5m"] == expected["cache_write"]
        assert row["usage"]["cache_read"] == expected["cache_read"]
    main_row, child = rows["ses_b001"], rows["ses_b002"]
    assert main_row["source"] == "interactive" and child["source"] == "subagent" and child["parent"] == "ses_b001"
    assert main_row["model"] == "kimi-k2" and main_row["started_at"].startswith("2026-06-09")
    log = ledgers["ses_b001"].call_log
    # the read is output of step 1, its result present from step 2; the build's output from step 3
    assert log[0]["present"]["exploration"] == 0 < log[1]["present"]["exploration"]
    assert log[1]["present"]["shell"] == 0 < log[2]["present"]["shell"]
    assert child["billed_tokens"]["exploration"] > 0


def test_compaction_is_billed_then_drops_the_history(tmp_path: Path):
    path, want = opencode_db(tmp_path / "opencode.db", compaction=True)
    ledgers: dict = {}
    rows, _ = _read(path, ledgers)
    row = rows["ses_b001"]
    assert row["api_calls"] == want["ses_b001"]["calls"] and row["prompt_tokens_billed"] == want["ses_b001"]["prompt"]
    assert row["compactions"] == 1
    log = ledgers["ses_b001"].call_log
    assert log[3]["present"]["exploration"] > 0  # the summary's own call carries the history
    assert log[4]["present"]["exploration"] == 0 and log[4]["present"]["conversation"] > 0


def test_read_only_and_no_files_beside_it(tmp_path: Path):
    path, _ = opencode_db(tmp_path / "data" / "opencode.db")
    before = path.read_bytes()
    _read(path)
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == ["opencode.db"]


def test_not_opencode_or_not_sqlite(tmp_path: Path):
    junk = tmp_path / "opencode.db"
    junk.write_bytes(b"not a database at all")
    rows, problems = _read(junk)
    assert rows == {} and any("not an SQLite database" in kind for kind in problems)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    rows, problems = _read(other)
    assert rows == {} and any("without OpenCode's" in kind for kind in problems)


def test_report_groups_and_legacy_storage(tmp_path: Path, capsys: pytest.CaptureFixture,
                                          monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "xdg"
    opencode_db(data / "opencode" / "opencode.db")
    (data / "opencode" / "storage" / "session" / "global").mkdir(parents=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))  # the default home, found without a flag
    assert main(["report", "--all", "--json"]) == 0
    captured = capsys.readouterr()
    groups = json.loads(captured.out)["groups"]
    assert groups["opencode/interactive"]["api_calls"] == 3 and groups["opencode/subagent"]["api_calls"] == 2
    assert "OpenCode JSON storage (before 1.2) found but not read: 1" in captured.err


@pytest.mark.parametrize(("name", "args", "want"), [
    ("read", {"filePath": "/w/a.ts"}, "exploration"),
    ("glob", {"pattern": "**/*.ts"}, "exploration"),
    ("bash", {"command": "ls src && cat package.json"}, "exploration"),
    ("bash", {"command": "rm -r dist"}, "shell"),
    ("edit", {"filePath": "a", "oldString": "x", "newString": "y"}, "edit"),
    ("webfetch", {"url": "https://example.com"}, "web"),
    ("task", {"prompt": "x"}, "other"),
])
def test_opencode_tools(name: str, args: dict, want: str):
    assert explain_tool(TOOLS, name, args).category == want
