"""Many sessions (issue 18): a report keeps sums and a share per session, never every row's dict, and its
figures are those a plain pass over the rows gives, cold, warm, from the history alone, in every output."""

from __future__ import annotations

import json
import random
import statistics
import tracemalloc
from pathlib import Path

import pytest

from xshare.agents.claude_code import rows_cache
from xshare.cli import main
from xshare.measure.ledger import CATEGORIES
from xshare.report import history

TOOLS = (("Read", "file_path"), ("Grep", "pattern"), ("Bash", "command"), ("Edit", "file_path"))


def transcript(number: int) -> str:
    """A small invented session: a prompt, one to four tool calls and a reply, started on a day of 2026."""
    rng = random.Random(number)
    session = f"00000000-0000-4000-8000-{number:012d}"
    day, hour = 1 + number % 28, rng.randrange(24)
    lines, context = [], 2000

    def row(kind: str, message: dict, minute: int, **extra: object) -> None:
        lines.append({"type": kind, "sessionId": session, "uuid": f"{session}-{len(lines)}", "cwd": "/home/dev/app",
                      "timestamp": f"2026-{1 + number % 10:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z",
                      "version": "2.1.100", "entrypoint": "cli", "message": message, **extra})

    row("user", {"role": "user", "content": f"task {number}: tidy the parser"}, 0)
    calls = rng.randrange(1, 5)
    for call in range(calls + 1):
        context += rng.randrange(100, 600)
        usage = {"input_tokens": 3, "cache_read_input_tokens": context, "cache_creation_input_tokens": 200,
                 "output_tokens": 30}
        if call == calls:
            content = [{"type": "text", "text": "done"}]
        else:
            tool, field = rng.choice(TOOLS)
            content = [{"type": "tool_use", "id": f"t{number}_{call}", "name": tool, "input": {field: "src/a.py"}}]
        row("assistant", {"id": f"m{number}_{call}", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": content, "usage": usage}, 2 * call + 1, requestId=f"r{number}_{call}")
        if call < calls:
            text = "\n".join(f"{n} line of code {rng.randrange(10 ** 6)}" for n in range(rng.randrange(3, 30)))
            row("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{number}_{call}",
                                                      "content": text}]}, 2 * call + 2)
    return "".join(json.dumps(line) + "\n" for line in lines)


def build(projects: Path, first: int, count: int) -> list[Path]:
    made = []
    for number in range(first, first + count):
        path = projects / f"-home-dev-p{number % 7}" / f"00000000-0000-4000-8000-{number:012d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(transcript(number))
        made.append(path)
    return made


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Claude Code's default home (the history serves reports on it, not on named folders)."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path / "claude" / "projects"


def report(capsys, *extra: str) -> tuple[dict, str]:
    assert main(["report", "--all", "--estimate", "--json", *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def figures(data: dict) -> dict:
    """What must not change between a cold, a warm and a history-only report."""
    return {"groups": data["groups"], "sessions": data["sessions"], "over_time": data.get("over_time")}


def test_groups_and_weeks_equal_a_plain_pass_over_the_rows_file(capsys, claude: Path, tmp_path: Path):
    build(claude, 0, 60)
    rows_file = tmp_path / "rows.jsonl"
    data, err = report(capsys, "--by", "week", "--rows", str(rows_file))
    assert err == ""
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert len(rows) == 60 and data["sessions"] == 60
    group = data["groups"]["claude-code/interactive"]
    # the sums and the median, taken here from the rows themselves (not through xshare's summing)
    assert group["api_calls"] == sum(row["api_calls"] for row in rows)
    assert group["billed_tokens"] == {c: sum(row["billed_tokens"][c] for row in rows) for c in CATEGORIES}
    assert group["median_session_share"] == statistics.median(row["exploration_share_of_context"] for row in rows)
    weeks = data["over_time"]["periods"]
    assert sum(period["sessions"] for period in weeks.values()) == 60
    assert sum(p["groups"]["claude-code/interactive"]["api_calls"] for p in weeks.values()) == group["api_calls"]
    assert list(weeks) == sorted(weeks)


def test_cold_warm_and_history_only_reports_agree(capsys, claude: Path, tmp_path: Path):
    made = build(claude, 0, 40)
    cold, _ = report(capsys, "--by", "month")
    assert rows_cache.cache_file().is_file() and history.history_path().is_file()
    warm, err = report(capsys, "--by", "month")
    assert err == "" and figures(warm) == figures(cold)
    for path in made:
        path.unlink()
    gone, err = report(capsys, "--by", "month")
    assert err == "" and gone["remembered_sessions"] == 40
    assert figures(gone) == figures(cold)
    text = main(["report", "--all", "--estimate"]) == 0 and capsys.readouterr().out
    assert "40 sessions whose transcript is gone" in text


def test_a_damaged_cache_line_is_read_again_with_the_same_figures(capsys, claude: Path):
    build(claude, 0, 12)
    cold, _ = report(capsys)
    lines = rows_cache.cache_file().read_bytes().splitlines(keepends=True)
    assert len(lines) == 14 and lines[1].startswith(b"settled\t")  # a header, what was settled, a line a transcript
    lines[3] = lines[3][:40] + b"\n"  # torn inside its head
    lines[5] = b"not json at all\t{}\n"
    lines[7] = lines[7].split(b"\t")[0] + b"\n"  # no row
    rows_cache.cache_file().write_bytes(b"".join(lines))
    again, err = report(capsys)
    assert err == ""  # the cache's own trouble is no user's problem: those files are simply read again
    assert again["groups"] == cold["groups"]
    assert len(rows_cache.cache_file().read_bytes().splitlines()) == 14  # and written whole again


def test_an_old_whole_file_cache_is_ignored_and_removed(capsys, claude: Path):
    build(claude, 0, 5)
    old = rows_cache.cache_file().with_name("claude-rows.json")
    old.parent.mkdir(parents=True)
    old.write_text('{"method": 0, "tokenizer": "chars/4", "entries": {}}')
    data, err = report(capsys)
    assert err == "" and data["sessions"] == 5
    assert not old.exists() and rows_cache.cache_file().is_file()


def test_cached_rows_of_other_folders_survive_a_report_on_one_folder(capsys, claude: Path, tmp_path: Path):
    build(claude, 0, 6)
    other = tmp_path / "other" / "projects"
    build(other, 100, 4)
    report(capsys)  # the default home: six transcripts cached
    report(capsys, "--claude-root", str(other))  # four more, while the six stay cached
    cached = rows_cache.load("chars/4", {str(path) for path in claude.rglob("*.jsonl")})
    assert len(cached) == 6
    assert len(rows_cache.load("chars/4", {str(path) for path in other.rglob("*.jsonl")})) == 4


def test_collect_merges_into_a_rows_file_a_line_at_a_time(capsys, claude: Path, tmp_path: Path):
    rows_file = tmp_path / "team.jsonl"
    build(claude, 0, 10)
    assert main(["collect", "--all", "--estimate", "--rows", str(rows_file)]) == 0
    assert "10 sessions added, 0 replaced" in capsys.readouterr().out
    build(claude, 10, 5)
    with rows_file.open("ab") as handle:
        handle.write(b"{torn\n")
    assert main(["collect", "--all", "--estimate", "--rows", str(rows_file)]) == 0
    captured = capsys.readouterr()
    assert "5 sessions added, 0 replaced" in captured.out
    assert captured.err.strip().splitlines() == [
        "xshare: rows file: 1 unreadable line dropped (not a row, or a row with impossible figures or wrong types)"]
    ids = [json.loads(line)["id"] for line in rows_file.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 15


def _peak_bytes(capsys, *extra: str) -> int:
    tracemalloc.start()
    try:
        report(capsys, *extra)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("when", ["warm", "transcripts gone"])
def test_memory_per_session_is_a_fraction_of_a_row_dict(capsys, claude: Path, when: str):
    """What one more session costs a report (the peak's growth from 150 to 750 sessions, over 600): a row
    as a dict is about 3.5 kB and the report once held several copies of each; now about its JSON."""
    peaks = []
    for first, count in ((0, 150), (150, 600)):
        made = build(claude, first, count)
        report(capsys, "--by", "week")  # cold: measured, cached, remembered
        if when == "transcripts gone":
            for path in claude.rglob("*.jsonl"):
                path.unlink()
        peaks.append(_peak_bytes(capsys, "--by", "week"))
        if when == "transcripts gone":  # back, for the next size
            build(claude, 0, first + count)
        assert made
    per_session = (peaks[1] - peaks[0]) / 600
    assert per_session < 2500, f"{per_session:.0f} bytes a session"
