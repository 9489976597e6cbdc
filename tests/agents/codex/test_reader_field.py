"""Codex CLI 0.171 as its real CLI writes it (issue 22), in fixtures of that shape: code mode's `exec` calls
judged by the nested calls that ran, usage records, the base prompt as a developer message, the TUI's title
request named as an unseen call, unknown record shapes. Gemini CLI 0.61's: tests/agents/gemini/test_reader_field.py.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted

from xshare.agents.codex import reader as codex
from xshare.agents.codex.code_mode import script_category
from xshare.cli import main

BASE = "You are Codex, an agent based on GPT-6. " + "Be careful and kind. " * 400
SESSION = "01a23219-c3d7-7be0-89d4-01f8da5c316b"


def _line(kind: str, payload: dict, second: int) -> dict:
    return {"timestamp": f"2026-12-01T14:54:{second:02d}.000Z", "type": kind, "payload": payload}


def _usage(prompt: int, cached: int, output: int) -> dict:
    return {"input_tokens": prompt, "cached_input_tokens": cached, "cache_write_input_tokens": 0,
            "output_tokens": output, "reasoning_output_tokens": 0, "total_tokens": prompt + output}


def _command(argv_script: str) -> dict:
    return {"type": "CommandExecution", "command": ["/bin/bash", "-lc", argv_script], "status": "completed",
            "aggregated_output": "..."}


FILE_CHANGE = {"type": "FileChange", "changes": {"/p/app.py": {"type": "update", "unified_diff": "-1\n+2\n"}}}
READ = "alpha\nbeta\n" * 200


def code_mode_rollout(home: Path, steps: list[list[dict]], source: str = "exec", version: str = "0.171.0",
                      extra: list[dict] | None = None) -> Path:
    """A 0.171 rollout: the base prompt as a developer message, then one `exec` script per step, each
    followed by its usage record, its nested item_completed events, its output and a token_count."""
    rows = [_line("session_meta", {"id": SESSION, "timestamp": "2026-12-01T14:54:00.000Z", "cli_version": version,
                                   "source": source, "originator": "codex_exec",
                                   "base_instructions": {"text": BASE}}, 0),
            _line("response_item", {"type": "additional_tools", "role": "developer", "tools": []}, 0),
            _line("response_item", {"type": "message", "role": "developer",
                                    "content": [{"type": "input_text", "text": BASE}]}, 0),
            _line("response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}]}, 0),
            _line("world_state", {"full": True, "state": {}}, 0),
            _line("turn_context", {"model": "gpt-6.2-sol"}, 0),
            _line("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": "Look at the project"}]}, 1)]
    prompt = 20000  # each call's bill holds what it carried (counted here in characters)
    total = Counter()
    for index, nested in enumerate(steps):
        call_id, second = f"call_{index}", 2 + index
        rows.append(_line("response_item", {"type": "custom_tool_call", "call_id": call_id, "name": "exec",
                                            "input": f"text(await tools.exec_command({{cmd: 'step {index}'}}));"},
                          second))
        usage = _usage(prompt, prompt - 500 if index else 0, 20)
        total.update(usage)
        rows.append(_line("token_usage_record", {"response_id": f"resp_{index}", "usage": usage}, second))
        rows += [_line("event_msg", {"type": "item_completed", "item": item}, second) for item in nested]
        rows.append(_line("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                            "output": [{"type": "input_text", "text": READ}]}, second))
        rows.append(_line("event_msg", {"type": "token_count", "info": {
            "total_token_usage": dict(total), "last_token_usage": usage}}, second))
        prompt += 3000
    usage = _usage(prompt, prompt - 500, 5)
    rows += [_line("event_msg", {"type": "item_completed", "item": {"type": "AgentMessage", "content": []}}, 30),
             _line("response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "All done."}]}, 30),
             _line("token_usage_record", {"response_id": "resp_end", "usage": usage}, 30),
             _line("token_usage_record", {"response_id": "resp_end", "usage": usage}, 30),  # recorded twice
             _line("event_msg", {"type": "token_count", "info": {"total_token_usage": dict(total + Counter(usage)),
                                                                 "last_token_usage": usage}}, 30)]
    rows += extra or []
    path = home / "sessions" / "2026" / "12" / "01" / f"rollout-2026-12-01T14-54-00-{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_codex(path: Path) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = codex.read(path, Counted(len, "chars"), problems)
    assert len(rows) == 1
    return rows[0], problems


@pytest.mark.parametrize(("nested", "want"), [
    ([_command("cat notes.txt")], "exploration"),
    ([_command("cat notes.txt"), _command("grep -n main app.py | head -3")], "exploration"),
    ([FILE_CHANGE], "edit"),
    ([_command("cat app.py"), FILE_CHANGE], "edit"),  # a script that edits is an edit
    ([_command("touch done.flag")], "shell"),
    ([_command("cat notes.txt"), _command("pytest -q")], "shell"),  # any command that is not a read
    ([], "other"),  # no nested action (a script that only computed)
    ([{"type": "McpToolCall", "server": "s", "tool": "t"}], "other"),
])
def test_a_code_mode_exec_call_takes_the_category_of_what_it_ran(tmp_path: Path, nested: list, want: str):
    row, problems = read_codex(code_mode_rollout(tmp_path, [nested]))
    assert row["api_calls"] == 2 and not problems
    # the script and its output carry the category; nothing of it is "other" unless it ran nothing known
    billed = row["billed_tokens"]
    assert billed[want] > 0
    assert all(billed[category] == 0 for category in ("exploration", "edit", "shell", "other") if category != want)


def test_the_exec_call_joins_the_context_from_the_next_call(tmp_path: Path):
    ledgers: dict = {}
    problems: Counter = Counter()
    rollout = code_mode_rollout(tmp_path, [[_command("cat a.txt")], [_command("cat b.txt")]])
    row = codex.read(rollout, Counted(len, "chars"), problems, ledgers)[0]
    log = ledgers[row["id"]].call_log
    assert [entry["present"]["exploration"] for entry in log][0] == 0  # the first call produced the script
    assert 0 < log[1]["present"]["exploration"] < log[2]["present"]["exploration"]


def test_usage_records_are_the_calls_and_the_base_prompt_is_overhead(tmp_path: Path):
    row, problems = read_codex(code_mode_rollout(tmp_path, [[_command("cat notes.txt")], [FILE_CHANGE]]))
    # two exec calls and the answer: the answer's usage record written twice is one call, token_count none
    assert row["api_calls"] == 3 and not problems
    assert row["prompt_tokens_billed"] == 20000 + 23000 + 26000
    assert row["usage"]["cache_read"] == 0 + 22500 + 25500
    assert row["model"] == "gpt-6.2-sol"
    # the base prompt (a developer message equal to session_meta.base_instructions) is not injected context
    assert row["first_time_tokens"]["injected"] < len(BASE) // 10
    assert row["billed_tokens"]["overhead"] >= 3 * len(BASE)


def test_unknown_record_shapes_are_counted_not_read_as_zero(tmp_path: Path, capsys: pytest.CaptureFixture):
    extra = [_line("thread_lease", {"holder": "x"}, 31),
             _line("response_item", {"type": "hologram", "content": "?"}, 31),
             _line("token_usage_record", {"response_id": "resp_x", "usage": "lots"}, 31)]
    path = code_mode_rollout(tmp_path, [[_command("cat notes.txt")]], extra=extra)
    row, problems = read_codex(path)
    assert row["api_calls"] == 2
    assert problems == {"Codex rollout lines of an unknown type (skipped)": 1,
                        "Codex history items of an unknown type (not counted)": 1,
                        "Codex usage records without usage (not counted)": 1}
    assert main(["report", "--all", "--json", "--codex-home", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "Codex rollout lines of an unknown type (skipped)" in err and "Traceback" not in err


@pytest.mark.parametrize(("source", "version", "titled"), [
    ("vscode", "0.171.0", True),  # the TUI (and the IDE): the app-server makes a title request
    ("exec", "0.171.0", False),
    ("vscode", "0.104.0", False),  # not checked before 0.171: nothing claimed
])
def test_the_tui_title_request_is_named_not_counted(tmp_path: Path, capsys: pytest.CaptureFixture, source: str,
                                                    version: str, titled: bool):
    path = code_mode_rollout(tmp_path, [[_command("cat notes.txt")]], source=source, version=version)
    row, _ = read_codex(path)
    assert row.get("unseen_calls") == ({"codex_title": 1} if titled else None)
    assert row["api_calls"] == 2  # not counted among the calls, nor in the bill
    assert main(["report", "--all", "--codex-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ("title request Codex's TUI makes" in out) == titled


def test_script_category_rules():
    assert script_category(["exploration", "exploration"]) == "exploration"
    assert script_category(["exploration", "web"]) == "other"
    assert script_category(["web"]) == "web"
    assert script_category([]) == "other"
