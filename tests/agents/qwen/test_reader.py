"""Qwen Code chats (invented, in 0.24.4's shape): per-call usage, tools by category, subagents, compression, and
records the reader does not know said, never read as zero."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from agent_fixtures import Counted
from qwen_fixtures import SESSION, Chat, session

from xshare.agents.common import unseen
from xshare.agents.qwen import reader as qwen
from xshare.agents.qwen.recognise import recognises
from xshare.agents.qwen.tools import TOOLS
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = qwen.read(path, Counted(len, "chars"), problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


def test_calls_bill_and_categories(tmp_path: Path) -> None:
    path, want = session(tmp_path / ".qwen")
    assert qwen.discover([tmp_path / ".qwen"]) == [path]
    row, problems = _read(path)
    assert not problems
    assert row["agent"] == "qwen" and row["source"] == "interactive" and row["id"] == SESSION
    assert row["model"] == "qwen3-coder-plus"
    # each assistant record once: the ui_telemetry copy of its usage is not a second call
    assert row["api_calls"] == want["calls"] and row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"] and row["usage"]["output"] == want["output"]
    assert row["usage"]["input"] == want["prompt"] - want["cache_read"]
    assert row["usage"]["cache_write_5m"] == 0 and row["usage"]["cache_write_1h"] == 0
    billed = row["billed_tokens"]
    assert billed["exploration"] > 0 and billed["edit"] > 0 and billed["shell"] == 0  # ls is read-only
    assert row["started_at"] == "2026-11-20T09:00:01.000Z"
    assert row[unseen.FIELD] == {"qwen_suggestion": 1}  # the TUI's suggestion after its one prompt, if it ran there


def test_a_tool_result_is_present_from_the_call_after_it(tmp_path: Path) -> None:
    path, _ = session(tmp_path)
    ledgers: dict = {}
    row, _ = _read(path, ledgers)
    log = ledgers[row["id"]].call_log
    assert log[0]["present"]["exploration"] == 0
    assert log[1]["present"]["exploration"] > 0
    assert log[3]["present"]["edit"] == 0 and log[4]["present"]["edit"] > 0


def test_output_is_total_less_prompt_when_the_total_holds_reasoning(tmp_path: Path) -> None:
    # OpenAI-compatible: candidates already hold the reasoning; Gemini's: the total holds both
    openai = Chat().user("hi").reply(1000, 0, 50, text="ok", thoughts=20).write(tmp_path / "a")
    gemini = Chat().user("hi").reply(1000, 0, 50, text="ok", thoughts=20, total=1070).write(tmp_path / "b")
    assert _read(openai)[0]["usage"]["output"] == 50
    assert _read(gemini)[0]["usage"]["output"] == 70


def test_unknown_shapes_are_said_and_bad_lines_skipped(tmp_path: Path) -> None:
    chat = Chat().user("hi").reply(1000, 0, 10, text="one")
    chat.records.append({**chat.records[-1], "uuid": "u-no-usage", "usageMetadata": {"totalTokenCount": 5}})
    chat.records.append({**chat.records[-1], "uuid": "u-none", "usageMetadata": None})
    chat.records.append({**chat.records[-1], "uuid": "u-new", "type": "hologram"})
    path = chat.write(tmp_path, extra_lines=("{not json", "[1, 2]", '{"uuid": "u-typeless"}'))
    row, problems = _read(path)
    assert row["api_calls"] == 1 and row["prompt_tokens_billed"] == 1000  # the unreadable replies are no calls
    assert problems[qwen.NO_USAGE] == 2 and problems[qwen.UNKNOWN_TYPE] == 2  # a new type, and none
    assert problems["Qwen Code chat lines that are not JSON (skipped)"] == 1
    assert problems["Qwen Code chat lines that are not JSON objects (skipped)"] == 1


def test_a_file_of_another_shape_is_no_session(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "p" / "chats" / "x.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hello": 1}) + "\n")
    problems: Counter = Counter()
    assert qwen.read(path, Counted(len, "chars"), problems) == []
    assert sum(problems.values()) == 1


def test_a_subagent_is_its_own_row_under_its_session(tmp_path: Path) -> None:
    home = tmp_path / ".qwen"
    session(home)
    child = (Chat(agent_id="general-purpose-call_9").user("Read cart.py and report.")
             .reply(8000, 4000, 12, calls=(("c1", "read_file", {"file_path": "cart.py"}),))
             .result("c1", "read_file", "x = 1\n").reply(8100, 8000, 5, text="One line.").write(home))
    assert child in qwen.discover([home])
    row, problems = _read(child)
    assert not problems
    assert row["source"] == "subagent" and row["parent"] == SESSION
    assert row["id"] == f"{SESSION}-general-purpose-call_9" and row["api_calls"] == 2
    assert unseen.FIELD not in row  # a subagent makes no suggestion request
    assert row["billed_tokens"]["exploration"] > 0  # its read, whose call is in a record without usage


def test_a_compression_is_a_compaction(tmp_path: Path) -> None:
    def chat(compress: bool) -> Chat:
        made = Chat().user("look").reply(5000, 0, 10, calls=(("r", "read_file", {"file_path": "a"}),))
        made.result("r", "read_file", "y" * 3000).reply(5800, 5000, 10, text="read")
        if compress:
            made.system("chat_compression", {"info": {"newTokenCount": 900}, "compressedHistory": [
                {"role": "user", "parts": [{"text": "Summary: the file a was read."}]}]})
        return made.user("more").reply(6000 if not compress else 5100, 0, 10, text="done")
    plain, _ = _read(chat(False).write(tmp_path / "a"))
    squeezed, _ = _read(chat(True).write(tmp_path / "b"))
    assert squeezed["compactions"] == 1 and plain["compactions"] == 0
    assert squeezed["billed_tokens"]["exploration"] < plain["billed_tokens"]["exploration"]


def test_recognised_by_content_not_a_claude_code_transcript(tmp_path: Path) -> None:
    path, _ = session(tmp_path)
    assert recognises(path)
    claude = tmp_path / "claude.jsonl"
    claude.write_text(json.dumps({"uuid": "a", "parentUuid": None, "sessionId": "s", "type": "user",
                                  "message": {"role": "user", "content": "hi"}}) + "\n")
    assert not recognises(claude)


def test_tools_by_category() -> None:
    assert explain_tool(TOOLS, "read_file", {}).category == "exploration"
    assert explain_tool(TOOLS, "grep_search", {}).category == "exploration"
    assert explain_tool(TOOLS, "list_directory", {}).category == "exploration"
    assert explain_tool(TOOLS, "edit", {}).category == "edit"
    assert explain_tool(TOOLS, "run_shell_command", {"command": "cat a.py"}).category == "exploration"
    assert explain_tool(TOOLS, "run_shell_command", {"command": "rm -rf build"}).category == "shell"
    assert explain_tool(TOOLS, "web_fetch", {}).category == "web"
