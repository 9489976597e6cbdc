"""`xshare report --by week|month` and `xshare mark`: periods, and before/after a named change."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.report.periods import period_of, read_marks, split_by_period


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def row(started: str | None, share: float = 0.2, source: str = "interactive") -> dict:
    """A session row as the report sums it (invented figures)."""
    context = 1000
    billed = {category: 0 for category in ("exploration", "edit", "shell", "web", "other", "reread",
                                           "conversation", "injected", "neuralmind", "overhead")}
    billed["exploration"], billed["overhead"] = int(share * context), context - int(share * context)
    return {"id": f"s-{started}-{share}", "agent": "claude-code", "source": source, "started_at": started,
            "api_calls": 3, "prompt_tokens_billed": 1100, "context_tokens": context,
            "exploration_share_of_context": share, "billed_tokens": billed, "first_time_tokens": dict(billed)}


def test_weeks_are_iso_weeks_and_months_calendar_months():
    assert period_of(datetime(2026, 1, 1, tzinfo=timezone.utc), "week") == "2026-W01"
    assert period_of(datetime(2027, 1, 1, tzinfo=timezone.utc), "week") == "2026-W53"  # a Friday of 2026's week
    assert period_of(datetime(2026, 12, 31, 23, 59, tzinfo=timezone.utc), "month") == "2026-12"


def test_rows_split_by_period_oldest_first_and_undated_rows_left_out():
    rows = [row("2026-11-03T10:00:00Z"), row("2026-10-30T10:00:00Z"), row(None), row("2026-11-20T00:00:00+05:00")]
    split = split_by_period(rows, "month")
    assert list(split) == ["2026-10", "2026-11"]
    assert [len(members) for members in split.values()] == [1, 2]
    assert len(split_by_period(rows, "week")) == 3


@pytest.fixture
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return write_demo_corpus(tmp_path / "claude")


def test_report_by_week_in_json_adds_up_to_the_report(capsys, claude_home: Path):
    code, out, _ = run(capsys, "report", "--all", "--json", "--by", "week")
    data = json.loads(out)
    periods = data["over_time"]["periods"]
    assert code == 0 and data["over_time"]["by"] == "week" and len(periods) >= 2
    assert sum(period["sessions"] for period in periods.values()) == data["sessions"]
    for period in periods.values():
        assert period["sessions"] == sum(group["sessions"] for group in period["groups"].values())


def test_report_by_month_in_text(capsys, claude_home: Path):
    code, out, _ = run(capsys, "report", "--all", "--by", "month")
    assert code == 0 and "By month" in out and "claude-code / interactive" in out.split("By month")[1]


def test_a_mark_splits_the_report_with_the_counts_each_side_rests_on(capsys, claude_home: Path):
    code, out, _ = run(capsys, "mark", "added", "NeuralMind", "--at", "2026-11-13")
    assert code == 0 and "added NeuralMind" in out
    assert [mark["label"] for mark in read_marks()] == ["added NeuralMind"]
    code, out, _ = run(capsys, "report", "--all", "--json")
    mark = json.loads(out)["marks"][0]
    before = mark["before"].get("claude-code/interactive", {}).get("sessions", 0)
    after = mark["after"].get("claude-code/interactive", {}).get("sessions", 0)
    assert before > 0 and after > 0  # the demo's sessions span 2026-11-13
    assert before + after == json.loads(out)["groups"]["claude-code/interactive"]["sessions"]
    code, text, _ = run(capsys, "report", "--all")
    assert "added NeuralMind" in text and "an anecdote, not a finding" in text.split("added NeuralMind")[1]


def test_a_bad_mark_date_is_refused(capsys):
    code, _, err = run(capsys, "mark", "x", "--at", "next tuesday")
    assert code == 2 and "not a date" in err and read_marks() == []
