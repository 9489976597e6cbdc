"""GitHub Copilot CLI's events file: a call per usage record (the prompt billed holds the cache reads), tool
results by category, a subagent as a thread of its own, a resume appended, and what it does not know said."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from agent_fixtures import Counted
from copilot_fixtures import CWD, SESSION, Events, compacted_session, copilot_session

from xshare.agents.copilot import reader as copilot
from xshare.agents.copilot.projects import project_names
from xshare.agents.copilot.recognise import recognises
from xshare.agents.copilot.tools import TOOLS
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = copilot.read(path, Counted(len, "chars"), problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


def test_usage_records_are_the_calls_and_cache_reads_are_inside_the_prompt(tmp_path: Path):
    path, want = copilot_session(tmp_path / ".copilot")
    assert copilot.discover([tmp_path / ".copilot"]) == [path]
    row, problems = _read(path)
    assert not problems
    assert row["id"] == SESSION and row["agent"] == "copilot" and row["model"] == "gpt-4.1"
    assert row["api_calls"] == want["calls"] == 9 and row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"] and row["usage"]["output"] == want["output"]
    assert row["usage"]["input"] == want["prompt"] - want["cache_read"]
    assert row["billed_tokens"]["exploration"] > 0 and row["billed_tokens"]["edit"] > 0


def test_a_result_is_present_from_the_next_call_of_its_own_thread(tmp_path: Path):
    path, _ = copilot_session(tmp_path, resumed=False)
    ledgers: dict = {}
    _read(path, ledgers)
    log = ledgers[SESSION].call_log
    explored = [entry["present"]["exploration"] for entry in log]
    # main: the view's result from call 2, the grep's from 3, the read-only cat's from 4
    assert explored[0] == 0 < explored[1] < explored[2] < explored[3] == explored[4]
    assert log[3]["present"]["shell"] == 0 and log[4]["present"]["edit"] > 0
    # the subagent starts with nothing of the parent's; its own view is present in its second call
    assert explored[5] == 0 and explored[6] > 0
    # back in the parent: its own reads, not the subagent's (the task's result is "other")
    assert explored[7] == explored[4]


def test_bad_lines_and_unknown_types_are_counted_and_the_rest_read(tmp_path: Path):
    path, want = copilot_session(tmp_path, resumed=False)
    lines = path.read_text().splitlines()
    lines.insert(3, "{not json")
    lines.insert(5, json.dumps({"type": "orchard.harvest", "data": {"tokens": 5}, "id": "x"}))
    lines.insert(7, json.dumps({"type": "session.usage_record", "data": {"usage": "lost"}}))
    path.write_text("\n".join(lines) + "\n")
    row, problems = _read(path)
    assert row["api_calls"] == 8 and row["prompt_tokens_billed"] == sum([9000, 9400, 9500, 9700, 9800, 3000, 3300,
                                                                            9900])
    assert problems["Copilot CLI event lines of an unknown type (skipped)"] == 1
    assert problems["Copilot CLI usage records without usage (not counted)"] == 1
    assert sum(count for what, count in problems.items() if "Copilot CLI events file" in what) == 1


def test_totals_without_usage_records_are_unknown_not_zero(tmp_path: Path):
    events = Events()
    events.add("session.start", sessionId=SESSION, copilotVersion="0.0.400", context={"cwd": CWD})
    events.add("user.message", content="hello")
    events.add("session.shutdown", modelMetrics={"gpt-4.1": {"requests": {"count": 3},
                                                                 "usage": {"inputTokens": 900, "outputTokens": 9}}})
    row, _ = _read(events.write(tmp_path))
    assert row["api_calls"] == 0 and row["usage_unknown"] == copilot.TOTALS_ONLY


def test_totals_holding_more_requests_than_records_are_said(tmp_path: Path):
    path, _ = copilot_session(tmp_path, resumed=False)
    path.write_text(path.read_text().replace('"count": 8', '"count": 10'))
    row, problems = _read(path)
    assert row["api_calls"] == 8 and problems[copilot.FEWER_RECORDS] == 1


def test_its_tools_by_category():
    def category(name: str, **arguments: object) -> str:
        return explain_tool(TOOLS, name, arguments).category

    assert {category(name) for name in ("view", "grep", "glob")} == {"exploration"}
    assert category("bash", command="cat notes.md") == "exploration"
    assert category("bash", command="rm -rf build") == "shell"
    assert category("edit") == category("create") == "edit"
    assert category("task") == category("sql") == "other"


def test_recognised_by_content_and_its_project_named(tmp_path: Path):
    path, _ = copilot_session(tmp_path)
    renamed = tmp_path / "copy.jsonl"
    renamed.write_text(path.read_text())
    assert recognises(renamed)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"type": "session.start", "data": {"sessionId": "x"}}) + "\n")
    assert not recognises(other)
    assert project_names([path], [SESSION, "elsewhere"]) == {SESSION: "orchard"}


def test_a_compaction_is_a_call_carrying_the_history_then_the_summary_alone(tmp_path: Path):
    path, want = compacted_session(tmp_path)
    ledgers: dict = {}
    row, problems = _read(path, ledgers)
    assert not problems  # the model.* events a compaction writes are known
    assert row["api_calls"] == want["calls"] == 4 and row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"] and row["usage"]["output"] == want["output"]
    assert row["compactions"] == 1
    explored = [entry["present"]["exploration"] for entry in ledgers[SESSION].call_log]
    assert explored[0] == 0 < explored[1] == explored[2] and explored[3] == 0
