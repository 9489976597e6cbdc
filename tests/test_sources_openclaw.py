"""OpenClaw transcripts: a call per assistant usage, input outside cache, rotated copies, compaction."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import openclaw_session

from xshare.cli import main
from xshare.measure.agent_tools import explain_tool
from xshare.sources import openclaw


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = openclaw.read(path, len, "chars", problems, ledgers)
    assert len(rows) == 1
    return rows[0], problems


def test_calls_usage_and_categories(tmp_path: Path):
    path, want = openclaw_session(tmp_path)
    ledgers: dict = {}
    row, problems = _read(path, ledgers)
    assert row["agent"] == "openclaw" and row["source"] == "interactive" and not problems
    assert row["api_calls"] == want["calls"]  # the errored request billed nothing: no call
    assert row["prompt_tokens_billed"] == want["prompt"]
    assert row["usage"]["cache_read"] == want["cache_read"] and row["usage"]["cache_write_5m"] == want["cache_write"]
    assert row["model"] == "claw-model-1"
    log = ledgers[row["id"]].call_log
    assert log[0]["present"]["exploration"] == 0 < log[1]["present"]["exploration"]  # the read and the grep
    assert log[1]["present"]["edit"] == 0 < log[2]["present"]["edit"]


def test_compaction_keeps_from_the_first_kept_entry(tmp_path: Path):
    path, _ = openclaw_session(tmp_path, compaction=True)
    ledgers: dict = {}
    row, _ = _read(path, ledgers)
    assert row["compactions"] == 1 and row["trimmed_messages"] == 0
    last = ledgers[row["id"]].call_log[-1]["present"]
    assert last["exploration"] == 0 and last["edit"] > 0  # before e007 dropped, the write kept


def test_rotated_copies_are_sessions_and_the_index_groups_them(tmp_path: Path, capsys: pytest.CaptureFixture):
    live, _ = openclaw_session(tmp_path)
    reset, _ = openclaw_session(tmp_path, "11112222-3333-4444-8555-666677778888", ".reset.2026-04-02T00-00-00.000Z")
    (tmp_path / "agents/main/sessions/x.jsonl.lock").write_text("")
    (tmp_path / "agents/main/sessions/sessions.json").write_text(json.dumps({
        "agent:main:main": {"sessionId": "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"},
        "agent:main:cron:nightly": {"sessionId": "11112222-3333-4444-8555-666677778888"}}))
    assert sorted(openclaw.discover([tmp_path])) == sorted([live, reset])
    assert main(["report", "--all", "--json", "--openclaw-home", str(tmp_path)]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["openclaw/interactive"]["sessions"] == 1 and groups["openclaw/automated"]["sessions"] == 1


def test_default_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert openclaw.default_homes() == [Path.home() / ".openclaw"]
    monkeypatch.setenv("OPENCLAW_HOME", str(tmp_path))
    assert openclaw.default_homes() == [tmp_path / ".openclaw"]
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "state"))
    assert openclaw.default_homes() == [tmp_path / "state"]


def test_bad_lines(tmp_path: Path):
    path, want = openclaw_session(tmp_path)
    with path.open("a") as handle:
        handle.write("{not json\n42\n")
    row, problems = _read(path)
    assert row["api_calls"] == want["calls"]
    assert problems == {"OpenClaw transcript lines that are not JSON (skipped)": 1,
                        "OpenClaw transcript lines that are not JSON objects (skipped)": 1}


@pytest.mark.parametrize(("name", "args", "want"), [
    ("read", {"path": "a.py"}, "exploration"),
    ("exec", {"command": "find . -name '*.py' | wc -l"}, "exploration"),
    ("exec", {"command": "git push"}, "shell"),
    ("edit", {"path": "a.py"}, "edit"),
    ("web_fetch", {"url": "https://example.com"}, "web"),
    ("feishu_create_doc", {}, "other"),
])
def test_openclaw_tools(name: str, args: dict, want: str):
    assert explain_tool("openclaw", name, args).category == want
