"""Gemini CLI 0.61 as its real CLI writes it (issue 22), in fixtures of that shape: its router named as an unseen
call, its resumes (a history rewrite without bills, a stub file with the same id) and its <session_context>, an
unknown message type. Codex CLI 0.171's: tests/agents/codex/test_reader_field.py.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted

from xshare.agents.gemini import reader as gemini
from xshare.cli import main

READ = "alpha\nbeta\n" * 200

GEMINI_ID = "27afad85-e8ed-40b5-95b5-b3abca06fa55"
CONTEXT = "<session_context>\nThis is the Gemini CLI.\n- **Directory Structure:**\n" + "├───file.py\n" * 150 + \
    "</session_context>"


def _gemini_turn(turn: int, prompt: int) -> list[dict]:
    """One prompt's records as 0.61 appends them: the prompt, then per call the message twice (without,
    then with its tool results) and the result as its own user record."""
    records: list[dict] = [{"id": f"u{turn}", "type": "user", "content": [{"text": f"Prompt {turn}"}],
                            "timestamp": f"2026-12-01T14:5{turn}:00.000Z"}]
    for step in range(3):
        key = f"g{turn}-{step}"
        tokens = {"input": prompt + 300 * step, "output": 10, "cached": 100 * step, "thoughts": 0, "tool": 0,
                  "total": prompt + 300 * step + 10}
        message = {"id": key, "type": "gemini", "content": "" if step < 2 else "Done.", "tokens": tokens,
                   "model": "gemini-3.8-flash", "timestamp": f"2026-12-01T14:5{turn}:0{step + 1}.000Z"}
        records.append(message)
        if step < 2:
            call = {"id": f"c{turn}{step}", "name": "read_file", "args": {"file_path": f"f{step}.py"},
                    "result": [{"functionResponse": {"id": f"c{turn}{step}", "name": "read_file",
                                                     "response": {"output": READ}}}]}
            records.append({**message, "toolCalls": [call]})
            records.append({"id": f"r{turn}-{step}", "type": "user", "content": call["result"]})
        records.append({"$set": {"lastUpdated": message["timestamp"]}})
    return records


def _header(second: str = "00") -> dict:
    return {"sessionId": GEMINI_ID, "projectHash": "ab" * 32, "startTime": f"2026-12-01T14:58:{second}.000Z",
            "lastUpdated": f"2026-12-01T14:58:{second}.000Z", "kind": "main"}


def _write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def chats(home: Path) -> Path:
    return home / "tmp" / "proj" / "chats"


def first_run(home: Path) -> list[dict]:
    return [_header(), {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": CONTEXT}]}]}},
            *_gemini_turn(1, 9000)]


def rewrite(records: list[dict]) -> dict:
    """The history as a same-minute resume writes it again: the same ids, no bills, results split out."""
    latest: dict[str, dict] = {}
    for record in records:
        if record.get("type"):
            latest[record["id"]] = record
    history = [{key: value for key, value in record.items() if key not in ("tokens", "toolCalls")}
               for record in latest.values()]
    return {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": CONTEXT}]}, *history]}}


def read_gemini(path: Path) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = gemini.read(path, Counted(len, "chars"), problems)
    assert len(rows) == 1
    return rows[0], problems


def test_a_same_minute_resume_keeps_every_billed_call(tmp_path: Path):
    first = first_run(tmp_path)
    plain, _ = read_gemini(_write(chats(tmp_path) / "a" / f"session-2026-12-01T14-58-{GEMINI_ID[:8]}.jsonl",
                                  first))
    resumed = [*first, _header(), rewrite(first), {"$set": {"sessionId": GEMINI_ID}}, *_gemini_turn(2, 12000)]
    row, problems = read_gemini(_write(chats(tmp_path) / "b" / f"session-2026-12-01T14-58-{GEMINI_ID[:8]}.jsonl",
                                       resumed))
    assert plain["api_calls"] == 3 and row["api_calls"] == 6 and not problems
    assert row["prompt_tokens_billed"] == plain["prompt_tokens_billed"] + 3 * 12000 + 300 + 600
    # the first turn's reads are still carried by the second turn's calls
    assert row["billed_tokens"]["exploration"] > 2 * plain["billed_tokens"]["exploration"]


def test_a_later_minute_resume_is_one_session(tmp_path: Path, capsys: pytest.CaptureFixture):
    folder = chats(tmp_path)
    _write(folder / f"session-2026-12-01T14-58-{GEMINI_ID[:8]}.jsonl",
           [*first_run(tmp_path), _header(), {"$set": {"sessionId": GEMINI_ID}}, *_gemini_turn(2, 12000)])
    _write(folder / f"session-2026-12-01T15-00-{GEMINI_ID[:8]}.jsonl",
           [_header("59"), {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": CONTEXT}]}],
                                     "lastUpdated": "2026-12-01T15:00:01.000Z"}}])
    rows = tmp_path / "rows.jsonl"
    assert main(["report", "--all", "--json", "--gemini-home", str(tmp_path), "--rows", str(rows)]) == 0
    captured = capsys.readouterr()
    group = json.loads(captured.out)["groups"]["gemini/interactive"]
    assert group["sessions"] == 1 and group["api_calls"] == 6
    ids = [json.loads(line)["id"] for line in rows.read_text().splitlines()]
    assert ids == [GEMINI_ID]
    assert "Traceback" not in captured.err


def test_a_stub_alone_is_still_a_session(tmp_path: Path):
    """Only a file with an earlier twin is left out: a lone chat without calls is still counted."""
    path = _write(chats(tmp_path) / f"session-2026-12-01T15-00-{GEMINI_ID[:8]}.jsonl", [_header()])
    row, _ = read_gemini(path)
    assert row["id"] == GEMINI_ID and row["api_calls"] == 0


def test_session_context_is_injected_and_the_router_is_named(tmp_path: Path, capsys: pytest.CaptureFixture):
    path = _write(chats(tmp_path) / f"session-2026-12-01T14-58-{GEMINI_ID[:8]}.jsonl", first_run(tmp_path))
    row, problems = read_gemini(path)
    assert row["first_time_tokens"]["injected"] >= len(CONTEXT) and not problems
    assert row["first_time_tokens"]["conversation"] < len(CONTEXT)
    assert row["unseen_calls"] == {"gemini_router": 1}  # one prompt (the context is not one)
    assert main(["report", "--all", "--gemini-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "up to 1 model-router request Gemini CLI makes" in out
    assert main(["session", GEMINI_ID, "--gemini-home", str(tmp_path)]) == 0
    assert "Not in these figures: up to 1 model-router request" in capsys.readouterr().out


def test_an_unknown_gemini_message_type_is_counted(tmp_path: Path):
    records = [*first_run(tmp_path), {"id": "x1", "type": "hologram", "content": "?"}]
    row, problems = read_gemini(_write(chats(tmp_path) / f"session-2026-12-01T14-58-{GEMINI_ID[:8]}.jsonl", records))
    assert row["api_calls"] == 3
    assert problems == {"Gemini CLI chat messages of an unknown type (not counted)": 1}
