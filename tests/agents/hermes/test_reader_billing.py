"""Hermes sessions as the provider billed them, and found by id: the auxiliary calls (title generation,
compression, ...) that only session_model_usage records, and `xshare session <Hermes id>`.

Token counts are characters (count=len) where the test measures directly; the CLI runs use --estimate."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agent_fixtures import Counted
from hermes_fixtures import HermesDb, call, read_result, terminal_result

from xshare.agents.hermes.state_db import measure_hermes
from xshare.agents.table import names_listed
from xshare.cli import main

MAIN = (3000, 6000, 1000, 50)  # input, cache_read, cache_write, output of the main loop
TITLE = (400, 0, 0, 12)
COMPRESSION = (2000, 500, 0, 300)


def write_session(path: Path, version: int = 22, auxiliary: bool = True, sid: str = "s1") -> Path:
    db = HermesDb(path, version)
    db.session(sid, "cli", tokens=MAIN, api_calls=2)
    db.message(sid, "user", "where is the config read?")
    db.message(sid, "assistant", None, tool_calls=[call("read_file", {"path": "config.py"}, "c1"),
                                                   call("terminal", {"command": "cat setup.cfg"}, "c2")])
    db.message(sid, "tool", read_result("1|import os\n2|CONFIG = os.environ['X']"), tool_call_id="c1")
    db.message(sid, "tool", terminal_result("[tool]\nname = demo"), tool_call_id="c2")
    db.message(sid, "assistant", "config.py line 2 reads it.")
    if auxiliary and version >= 22:  # schema 22 added `task`
        db.auxiliary(sid, "title_generation", TITLE)
        db.auxiliary(sid, "compression", COMPRESSION)
    return db.close()


def one(path: Path) -> dict:
    rows, problems = measure_hermes([path], Counted(len, "chars"))
    assert not problems
    return {row["id"]: row for row in rows}["s1"]


def test_auxiliary_calls_are_billed_as_overhead_with_their_own_counts(tmp_path: Path) -> None:
    bare = one(write_session(tmp_path / "bare" / "state.db", auxiliary=False))
    row = one(write_session(tmp_path / "aux" / "state.db"))
    extra = TITLE[0] + TITLE[1] + TITLE[2] + COMPRESSION[0] + COMPRESSION[1] + COMPRESSION[2]
    assert bare["unrecorded_calls"] == 0 and bare["unrecorded_prompt_tokens"] == 0 and bare["api_calls"] == 2
    assert row["unrecorded_calls"] == 2 and row["unrecorded_prompt_tokens"] == extra
    assert row["unrecorded_tasks"] == {"compression": 1, "title_generation": 1}
    # the provider's total: main loop (the sessions row) plus the auxiliary calls
    assert row["api_calls"] == bare["api_calls"] + 2
    assert row["prompt_tokens_billed"] == sum(MAIN[:3]) + extra
    assert row["billed_tokens"]["overhead"] == bare["billed_tokens"]["overhead"] + extra
    assert row["context_tokens"] == bare["context_tokens"] + extra
    assert {k: v for k, v in row["billed_tokens"].items() if k != "overhead"} == \
        {k: v for k, v in bare["billed_tokens"].items() if k != "overhead"}  # nothing of theirs is exploration
    exploration = row["billed_tokens"]["exploration"]
    assert exploration > 0
    assert row["exploration_share_of_context"] == exploration / row["context_tokens"]
    assert row["exploration_share_of_prompt"] == exploration / row["prompt_tokens_billed"]
    assert row["exploration_share_of_prompt"] < bare["exploration_share_of_prompt"]
    assert row["usage"]["input"] == MAIN[0] + TITLE[0] + COMPRESSION[0]
    assert row["usage"]["cache_read"] == MAIN[1] + COMPRESSION[1]
    assert row["usage"]["output"] == MAIN[3] + TITLE[3] + COMPRESSION[3]


def test_auxiliary_rows_with_bad_values_and_other_sessions(tmp_path: Path) -> None:
    path = write_session(tmp_path / "state.db", auxiliary=False)
    con = sqlite3.connect(path)  # rows Hermes would never write
    insert = ("INSERT INTO session_model_usage (session_id, model, task, api_call_count, input_tokens, "
              "cache_read_tokens, cache_write_tokens, output_tokens) VALUES (?, 'aux/model', ?, ?, ?, 0, 0, ?)")
    con.execute(insert, ("s1", "vision", -1, -5, 0))  # negative counts: impossible, the row is skipped
    con.execute(insert, ("s1", "web_extract", 1, "n/a", "n/a"))  # text where a count belongs: skipped too
    con.execute(insert, ("s1", "compression", 1, 300, 7))  # a real one beside them still counts
    con.execute(insert, ("gone", "title_generation", 1, 400, 12))  # a pruned session's usage: no row to add it to
    con.commit()
    con.close()
    rows, problems = measure_hermes([path], Counted(len, "chars"))
    assert [row["id"] for row in rows] == ["s1"]
    assert problems == {"Hermes auxiliary usage rows with impossible counts skipped": 2}
    row = rows[0]
    assert row["unrecorded_calls"] == 1 and row["unrecorded_prompt_tokens"] == 300
    assert row["unrecorded_tasks"] == {"compression": 1}
    assert row["prompt_tokens_billed"] == sum(MAIN[:3]) + 300


@pytest.mark.parametrize("version", [6, 20])
def test_older_schemas_have_no_auxiliary_rows(tmp_path: Path, version: int) -> None:
    """Schema 20's usage table has no task: every row there is the main loop, already in `sessions`."""
    row = one(write_session(tmp_path / "state.db", version))
    assert row["unrecorded_calls"] == 0 and row["api_calls"] == 2
    assert row["prompt_tokens_billed"] == sum(MAIN[:3])


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_groups_count_the_auxiliary_calls(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_session(tmp_path / "state.db")
    code, out, err = run(capsys, "report", "--all", "--estimate", "--json", "--hermes-db", str(path),
                         "--claude-root", str(tmp_path / "no-claude"))
    assert code == 0, err
    group = json.loads(out)["groups"]["hermes/interactive"]
    assert group["unrecorded_calls"] == 2 and group["api_calls"] == 4
    assert group["unrecorded_prompt_tokens"] == sum(TITLE[:3]) + sum(COMPRESSION[:3])
    assert group["prompt_tokens_billed"] == sum(MAIN[:3]) + group["unrecorded_prompt_tokens"]
    code, text, _ = run(capsys, "report", "--all", "--estimate", "--hermes-db", str(path),
                        "--claude-root", str(tmp_path / "no-claude"))
    assert code == 0 and "Calls you were billed for that the records show only in total" in text
    assert (f"hermes/interactive: includes 2 calls ({group['unrecorded_prompt_tokens']:,} prompt tokens) billed but "
            "not in the record: Hermes's auxiliary calls (compression 1, title_generation 1)") in text


def test_session_command_finds_a_hermes_session_by_id(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_session(tmp_path / "home" / "state.db")
    other = write_session(tmp_path / "other" / "state.db", sid="s2", auxiliary=False)
    rows_file = tmp_path / "rows.jsonl"
    code, _, err = run(capsys, "report", "--all", "--estimate", "--hermes-db", str(path), "--rows", str(rows_file))
    assert code == 0, err
    expected = next(json.loads(line) for line in rows_file.read_text().splitlines() if json.loads(line)["id"] == "s1")
    code, out, err = run(capsys, "session", "s1", "--estimate", "--hermes-db", str(other), "--hermes-db", str(path),
                         "--json")
    assert code == 0, err
    expected.pop("machine")  # the rows file's anonymous machine id, not part of a session's row
    assert json.loads(out) == expected  # the report's own row, the title and compression calls included
    code, text, _ = run(capsys, "session", "s1", "--estimate", "--hermes-db", str(path))
    assert code == 0 and "Session s1 (hermes / interactive" in text and f"API calls: {expected['api_calls']}" in text
    assert ("These figures include 2 calls (" in text
            and "Hermes's auxiliary calls (compression 1, title_generation 1)" in text)
    # the default database: $HERMES_HOME/state.db
    monkeypatch.setenv("HERMES_HOME", str(path.parent))
    code, out, _ = run(capsys, "session", "s1", "--estimate", "--json")
    assert code == 0 and json.loads(out) == expected
    # an id nobody has: exit 2 and say where it looked; a missing database is a problem on stderr
    code, out, err = run(capsys, "session", "s9", "--estimate", "--hermes-db", str(tmp_path / "nowhere.db"))
    assert code == 2 and out == ""
    assert f"{names_listed('or')} matches 's9'" in err and "nowhere.db not found" in err


def test_the_page_says_what_the_unrecorded_calls_are(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A Hermes session's page names Hermes's auxiliary calls as what its records do not hold (it said
    "compactions, from Claude Code's own usage totals" for every agent)."""
    path = write_session(tmp_path / "state.db")
    page = tmp_path / "s1.html"
    code, _, err = run(capsys, "html", "s1", "--estimate", "--hermes-db", str(path), "-o", str(page))
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert ("billed for 2 call(s) its records do not hold (Hermes&#x27;s auxiliary calls (compression 1, "
            "title_generation 1), from its per-model usage table)") in text
    assert "Claude Code’s own usage totals" not in text and "Claude Code&#x27;s own usage totals" not in text
