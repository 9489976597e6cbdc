"""OpenClaw transcripts: a call per assistant usage, input outside cache, rotated copies, compaction."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, openclaw_session

from xshare.agents.openclaw import reader as openclaw
from xshare.agents.openclaw.tools import TOOLS
from xshare.cli import main
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict, Counter]:
    problems: Counter = Counter()
    rows = openclaw.read(path, Counted(len, "chars"), problems, ledgers)
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
    assert explain_tool(TOOLS, name, args).category == want


# --- issue 28: a live file beside its own reset archive ---------------------------------------------------

RESET = ".reset.2026-04-02T00-00-00.000Z"


def backed_up_before_the_reset(home: Path, kept_lines: int = 6) -> tuple[Path, Path, dict]:
    """The session as OpenClaw's reset archived it (renamed from the live file), beside the live file as a
    backup of the folder kept it before the reset: the same entries, up to where the backup stops."""
    archive, want = openclaw_session(home, suffix=RESET)
    live = archive.with_name(archive.name.removesuffix(RESET))
    live.write_text("".join(archive.read_text().splitlines(keepends=True)[:kept_lines]))
    return live, archive, want


def test_a_live_file_beside_its_reset_archive_is_one_session_each_call_once(tmp_path: Path, capsys):
    live, archive, want = backed_up_before_the_reset(tmp_path)
    assert _read(live)[0]["api_calls"] == 3  # the backup alone holds one call: the archive's are read with it
    problems: Counter = Counter()
    assert openclaw.read(archive, Counted(len, "chars"), problems) == [] and problems == {openclaw.SAME_SESSION: 1}
    archive.rename(tmp_path / "alone.jsonl")
    alone, _ = _read(tmp_path / "alone.jsonl")
    (tmp_path / "alone.jsonl").rename(archive)
    row, problems = _read(live)
    assert not problems and row == alone and row["prompt_tokens_billed"] == want["prompt"]
    flags = ["--openclaw-home", str(tmp_path), "--estimate"]
    assert main(["report", "--all", "--no-history", "--json", *flags]) == 0
    out, err = capsys.readouterr()
    group = json.loads(out)["groups"]["openclaw/interactive"]
    assert (group["sessions"], group["api_calls"], group["prompt_tokens_billed"]) == (1, 3, want["prompt"])
    assert f"{openclaw.SAME_SESSION}: 1" in err
    for wanted in (row["id"], str(live), str(archive)):
        assert main(["session", wanted, "--json", *flags]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["api_calls"] == 3, (wanted, err)


def test_a_live_file_that_went_on_after_its_archive_keeps_its_own_calls(tmp_path: Path):
    """A restored copy that went on: the entries both hold count once, each file's own ones all count."""
    live, archive, want = backed_up_before_the_reset(tmp_path)
    entry = {"type": "message", "id": "f001", "parentId": "e005", "timestamp": "2026-04-03T08:00:00.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Still there."}],
                         "usage": {"input": 700, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 705}}}
    with live.open("a") as handle:
        handle.write(json.dumps(entry) + "\n")
    row, _ = _read(live)
    assert row["api_calls"] == 4 and row["prompt_tokens_billed"] == want["prompt"] + 700
