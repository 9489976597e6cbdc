"""pi session files: a call per assistant usage and per usage entry, input outside the cache, its tools'
categories, its own entries (system message, compaction usage, context edits), odd input said, not zeroed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted
from pi_fixtures import PI_ID, SOURCE, PiSession, pi_session

from xshare.agents.openclaw.recognise import recognises as openclaw_recognises
from xshare.agents.pi import reader as pi
from xshare.agents.pi.recognise import recognises
from xshare.cli import main

WORDS = Counted(lambda text: len(text.split()), "words")  # well under every bill: no cap trims the context


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = pi.read(path, WORDS, problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


def test_calls_bill_cache_and_categories(tmp_path: Path):
    session = pi_session()
    ledgers: dict = {}
    row, problems = _read(session.write(tmp_path), ledgers)
    assert not problems and row["agent"] == "pi" and row["source"] == "interactive" and row["id"] == PI_ID
    assert row["api_calls"] == len(session.billed) == 6  # five answers and the cache-warming call
    assert row["prompt_tokens_billed"] == sum(call[0] for call in session.billed) == 6800
    assert row["usage"]["cache_read"] == 5150 and row["usage"]["cache_write_5m"] == 40
    assert row["usage"]["output"] == 50 and row["model"] == "pi-model-1"
    log = ledgers[row["id"]].call_log
    assert [call["present"]["exploration"] > 0 for call in log] == [False, True, True, True, True, True]
    assert log[1]["present"]["exploration"] >= len(SOURCE.split())  # the file read, in words
    assert log[3]["present"]["exploration"] > log[2]["present"]["exploration"]  # wc -l: a read-only command
    assert log[3]["present"]["edit"] == 0 < log[4]["present"]["edit"]
    assert log[0]["present"]["conversation"] > 0 and "You are a coding assistant" not in json.dumps(log[0])


def test_compaction_usage_is_a_call_and_context_edits_leave_the_context(tmp_path: Path):
    session = pi_session()
    read_result = next(entry["id"] for entry in session.entries
                       if isinstance(entry, dict) and entry.get("message", {}).get("toolName") == "read")
    session.add("context_edit", targetId=read_result, replacement=None)
    session.assistant([{"type": "text", "text": "Still here."}], fresh=100, read=900)
    kept = session.message("user", content=[{"type": "text", "text": "Now summarise."}])
    session.add("compaction", summary="The person asked for a strict parse.", firstKeptEntryId=kept,
                tokensBefore=3000, usage={"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0})
    session.billed.append((1200, 0, 0, 80))
    session.assistant([{"type": "text", "text": "Done."}], fresh=600)
    ledgers: dict = {}
    row, problems = _read(session.write(tmp_path), ledgers)
    assert not problems and row["api_calls"] == len(session.billed) == 9
    assert row["prompt_tokens_billed"] == sum(call[0] for call in session.billed)
    assert row["compactions"] == 1
    log = ledgers[row["id"]].call_log
    after_edit, last = log[6]["present"], log[-1]["present"]
    assert after_edit["exploration"] == log[5]["present"]["exploration"] - len(SOURCE.split())  # the result left
    assert last["exploration"] == 0 and last["edit"] == 0 and last["conversation"] > 0  # the summary and after


def test_unknown_shapes_and_bad_lines_are_said_never_zero(tmp_path: Path):
    session = pi_session()
    session.add("future_entry", payload=1)
    session.message("critic", content="a role of a later pi")
    session.message("assistant", content=[{"type": "text", "text": "no usage here"}])
    session.entries.append("{not json")
    row, problems = _read(session.write(tmp_path))
    assert problems == {pi.UNKNOWN_ENTRY: 1, pi.UNKNOWN_ROLE: 1, pi.NO_USAGE: 1,
                        next(key for key in problems if "not" in key and "JSON" in key): 1}
    assert row["api_calls"] == 6 and row["prompt_tokens_billed"] == 6800  # the rest still measured
    empty = tmp_path / "--x--" / f"2026-11-30T10-00-00-000Z_{PI_ID[:-1]}0.jsonl"
    empty.parent.mkdir()
    empty.write_text("plain text, not a session\n")
    problems = Counter()
    assert pi.read(empty, WORDS, problems) == [] and problems


def test_pi_files_are_told_from_openclaws_with_the_same_header(tmp_path: Path):
    """By pi 1.6's system message, whatever the name; without it, by pi's own name alone."""
    path = pi_session().write(tmp_path)
    renamed = tmp_path / "a-record"
    renamed.write_bytes(path.read_bytes())
    assert recognises(path) and recognises(renamed)
    older = [line for line in path.read_text().splitlines(keepends=True) if '"role": "system"' not in line]
    openclaw = tmp_path / "agents" / "main" / "sessions" / f"{PI_ID}.jsonl"  # OpenClaw's name, the same entries
    openclaw.parent.mkdir(parents=True)
    openclaw.write_text("".join(older))
    path.write_text("".join(older))
    assert openclaw_recognises(openclaw) and not recognises(openclaw) and recognises(path)


def test_homes_an_agent_folder_or_a_sessions_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    agent, moved = tmp_path / "agent", tmp_path / "moved"
    first = pi_session().write(agent / "sessions")
    second = PiSession("0f0e0d0c-0b0a-4908-8706-050403020100").write(moved)
    (agent / "models.json").write_text("{}")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(moved))
    assert pi.default_homes() == [agent, moved]
    assert pi.discover(pi.default_homes()) == [first, second]


def test_report_and_sessions_read_it_through_the_registry(isolated_home: Path, capsys: pytest.CaptureFixture):
    session = pi_session()
    path = session.write(isolated_home / ".pi" / "agent" / "sessions")
    assert main(["report", "--all", "--json", "--estimate"]) == 0
    group = json.loads(capsys.readouterr().out)["groups"]["pi/interactive"]
    assert group["sessions"] == 1 and group["api_calls"] == 6
    for argument in (PI_ID, PI_ID[:8], str(path)):
        assert main(["session", argument, "--json", "--estimate"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["id"] == PI_ID and shown["prompt_tokens_billed"] == 6800, argument
