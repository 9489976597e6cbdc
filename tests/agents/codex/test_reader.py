"""Codex CLI rollouts: calls from changed totals, usage mapping, tool shapes by version, legacy files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, codex_legacy, codex_session

from xshare.agents.codex import reader as codex
from xshare.agents.codex.tools import TOOLS
from xshare.cli import main
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = codex.read(path, Counted(len, "chars"), problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


@pytest.mark.parametrize("tool", ["shell", "shell_command", "exec_command"])
def test_calls_are_changed_totals_and_reads_are_exploration(tmp_path: Path, tool: str):
    path, want = codex_session(tmp_path, tool=tool)
    row, problems = _read(path)
    assert row["agent"] == "codex" and row["source"] == "interactive"
    assert row["api_calls"] == want["calls"]  # the repeated total is no call; the reset one is
    assert row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"] and row["usage"]["input"] == want["input"]
    assert row["model"] == "gpt-5-codex"
    assert row["billed_tokens"]["exploration"] > 0 and row["billed_tokens"]["edit"] > 0
    assert row["billed_tokens"]["shell"] == 0
    assert row["first_time_tokens"]["injected"] > 0  # the environment context and the instructions
    assert row["started_at"] == "2026-03-02T10:00:00.000Z" and row["last_activity"] == "2026-03-02T10:00:14.000Z"
    assert not problems


def test_the_read_is_charged_from_the_call_after_it(tmp_path: Path):
    path, _ = codex_session(tmp_path)
    ledgers: dict = {}
    row, _ = _read(path, ledgers)
    log = ledgers[row["id"]].call_log
    # call 1 produced the read; its result is in calls 2 and 3 only
    assert log[0]["present"]["exploration"] == 0
    assert log[1]["present"]["exploration"] > log[0]["present"]["exploration"]
    assert log[1]["present"]["edit"] == 0 and log[2]["present"]["edit"] > 0


def test_compaction_drops_what_came_before(tmp_path: Path):
    plain, _ = _read(codex_session(tmp_path / "a")[0])
    compacted, _ = _read(codex_session(tmp_path / "b", compact=True)[0])
    assert compacted["compactions"] == 1 and plain["compactions"] == 0
    assert compacted["billed_tokens"]["exploration"] < plain["billed_tokens"]["exploration"]
    assert compacted["api_calls"] == plain["api_calls"]


def test_subagent_and_exec_sources(tmp_path: Path):
    sub, _ = _read(codex_session(tmp_path, source={"subagent": {"thread_spawn": {
        "parent_thread_id": "0190aaaa-1111-7000-8000-0000000000ff"}}})[0])
    assert sub["source"] == "subagent" and sub["parent"] == "0190aaaa-1111-7000-8000-0000000000ff"
    auto, _ = _read(codex_session(tmp_path / "x", source="exec")[0])
    assert auto["source"] == "automated"


def test_legacy_rollout_counts_a_session_with_unknown_share(tmp_path: Path):
    row, _ = _read(codex_legacy(tmp_path))
    assert row["api_calls"] == 0 and row["prompt_tokens_billed"] == 0
    assert row["exploration_share_of_context"] is None and row["usage_unknown"]
    assert row["started_at"] == "2025-08-20T09:00:00.000Z"


def test_bad_lines_are_skipped_and_counted(tmp_path: Path):
    path, want = codex_session(tmp_path)
    with path.open("a") as handle:
        handle.write('{"timestamp": "2026-03-02T10:01:00.000Z", "type": "event_msg", "payload": {"type"\n')
        handle.write('["not", "a", "row"]\n{"type": "response_item", "payload": "text"}\n')
    row, problems = _read(path)
    assert row["api_calls"] == want["calls"]
    assert problems == {"Codex rollout lines that are not JSON (skipped)": 1,
                        "Codex rollout lines that are not JSON objects (skipped)": 1}


def test_legacy_json_fork(tmp_path: Path):
    path = tmp_path / "sessions" / "rollout-2025-08-23-11111111-2222-4333-8444-555555555555.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"session": {"timestamp": "2025-08-23T08:00:00Z", "id": "fork-1", "instructions": ""},
                                "items": [{"role": "user", "content": "hi"},
                                          {"role": "assistant", "content": "", "tool_calls": [
                                              {"id": "t1", "function": {"name": "shell", "arguments":
                                                                        '{"command": ["cat", "a.py"]}'}}]},
                                          {"role": "tool", "tool_call_id": "t1", "content": "print(1)"}]}))
    assert codex.discover([tmp_path]) == [path]
    row, problems = _read(path)
    assert row["id"] == "fork-1" and row["api_calls"] == 0 and row["usage_unknown"]
    assert row["first_time_tokens"]["exploration"] > 0 and not problems


@pytest.mark.parametrize(("arguments", "want"), [
    ({"command": ["bash", "-lc", "sed -n '1,80p' a.py"]}, "exploration"),
    ({"command": ["rg", "-n", "TODO", "src"]}, "exploration"),
    ({"command": ["bash", "-lc", "sed -i 's/a/b/' a.py"]}, "shell"),
    ({"command": ["python3", "-m", "pytest"]}, "shell"),
    ({"command": "pytest -q"}, "shell"),
    ({"command": 7}, "shell"),
    ("not json", "shell"),
])
def test_codex_shell_argv_lists(arguments: object, want: str):
    assert explain_tool(TOOLS, "shell", arguments).category == want


def test_report_groups_and_header(tmp_path: Path, capsys: pytest.CaptureFixture):
    home = tmp_path / "codex"
    codex_session(home)
    codex_session(home, "0190aaaa-1111-7000-8000-000000000002", source={"subagent": "review"})
    codex_legacy(home)
    assert main(["report", "--all", "--json", "--codex-home", str(home)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sources"] == {"Codex CLI": "read"}  # only the folders named are read (issue 21)
    groups = report["groups"]
    assert groups["codex/interactive"]["sessions"] == 2 and groups["codex/interactive"]["api_calls"] == 3
    assert groups["codex/interactive"]["usage_unknown_sessions"] == 1
    assert groups["codex/subagent"]["sessions"] == 1
    assert main(["report", "--all", "--codex-home", str(home)]) == 0
    text = capsys.readouterr().out
    assert "Codex CLI: read" in text and "codex / subagent" in text
    assert "1 session (an agent version that wrote none): counted, its share unknown" in text


def test_a_proxys_constant_response_id_folds_no_calls(tmp_path: Path, capsys: pytest.CaptureFixture):
    """Issue 28, part 3: a usage record is one response by its id and its usage together; a proxy that gives
    every response one id still has each call's own usage, so each is a call, and the reuse is said on stderr.
    The same record written twice (same id, same usage) stays one call."""
    from tests.agents.codex.test_reader_field import FILE_CHANGE, _command, code_mode_rollout

    real = code_mode_rollout(tmp_path / "real", [[_command("cat notes.txt")], [FILE_CHANGE]])
    expected, _ = _read(real)
    assert expected["api_calls"] == 3  # two exec calls and the answer, whose record is written twice
    proxied = code_mode_rollout(tmp_path / "proxy", [[_command("cat notes.txt")], [FILE_CHANGE]])
    lines = [json.loads(line) for line in proxied.read_text().splitlines()]
    for line in lines:
        if line["type"] == "token_usage_record":
            line["payload"]["response_id"] = "resp_gateway"
    proxied.write_text("".join(json.dumps(line) + "\n" for line in lines))
    row, problems = _read(proxied)
    assert row == expected
    assert problems == {codex.REUSED_RESPONSE: 2}
    assert main(["report", "--all", "--json", "--codex-home", str(tmp_path / "proxy")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["groups"]["codex/automated"]["api_calls"] == 3
    assert f"xshare: {codex.REUSED_RESPONSE}: 2\n" in err
