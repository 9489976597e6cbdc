"""Windows, groups, the pre-registered reading and the two output forms."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from xshare.measure.ledger import CATEGORIES
from xshare.report.render import Report, Window, parse_cli_time, reading, summarize

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=timezone.utc)


def make_row(session_id: str, exploration: int, context: int, prompt: int, source: str = "interactive",
             started: str = "2026-11-20T10:00:00.000Z", last: str = "2026-11-20T11:00:00.000Z",
             agent: str = "claude-code") -> dict:
    billed = dict.fromkeys(CATEGORIES, 0)
    billed["exploration"] = exploration
    billed["conversation"] = context - exploration
    return {
        "id": session_id, "agent": agent, "source": source, "started_at": started, "last_activity": last,
        "api_calls": 10, "prompt_tokens_billed": prompt, "context_tokens": context,
        "exploration_share_of_context": exploration / context if context else None,
        "billed_tokens": billed, "first_time_tokens": dict(billed),
    }


def test_default_window_is_the_last_30_days_from_midnight_utc():
    window = Window.build(NOW)
    assert window.since == datetime(2026, 10, 30, tzinfo=timezone.utc)
    assert window.until == NOW
    assert window.describe() == "Sessions started 2026-10-30 to 2026-11-29 (last 30 days)"


def test_an_explicit_until_is_capped_at_now_minus_the_lag():
    window = Window.build(NOW, until="2026-12-31", lag_hours=6)
    assert window.until == NOW - timedelta(hours=6)
    window = Window.build(NOW, since="2026-11-01", until="2026-11-10")
    assert window.until == datetime(2026, 11, 10, 23, 59, 59, 999999, tzinfo=timezone.utc)


def test_a_timestamp_keeps_its_offset_and_one_without_is_utc():
    # spec pass 4d
    assert parse_cli_time("2026-11-01T09:00+02:00") == datetime(2026, 11, 1, 7, 0, tzinfo=timezone.utc)
    assert parse_cli_time("2026-11-01T09:00") == datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    with pytest.raises(ValueError):
        parse_cli_time("last tuesday")
    with pytest.raises(ValueError):
        Window.build(NOW, since="2026-12-01", until="2026-11-01")


def test_a_session_still_active_at_the_windows_end_is_deferred():
    # spec pass 3c: recorded later, whole, rather than half now
    window = Window.build(NOW, since="2026-11-01", until="2026-11-20")
    inside = make_row("a", 1, 10, 20, started="2026-11-19T10:00:00Z", last="2026-11-19T12:00:00Z")
    running = make_row("b", 1, 10, 20, started="2026-11-20T23:00:00Z", last="2026-11-21T01:00:00Z")
    assert window.place(inside) == "in"
    assert window.place(running) == "deferred"
    assert window.place(make_row("c", 1, 10, 20, started="2026-10-31T23:59:00Z")) == "out"
    assert window.place(make_row("d", 1, 10, 20, started="2026-11-21T00:00:00Z")) == "out"
    # no start time: no window can hold it, only --all counts it (issue 18; tests/measure/test_timestamps.py)
    assert window.place({**make_row("e", 1, 10, 20), "started_at": None}) == "undated"


@pytest.mark.parametrize(
    ("pooled", "expected"),
    [
        (0.05, "under 10%: a small part of your bill, so reading less code would barely change what you pay"),
        (0.1950, "10% to 30%: a noticeable part of your bill, worth watching and worth weighing a change that "
                 "cuts what the agent reads"),
        (0.35, "30% or more: a large part of your bill, so cutting what the agent reads is where savings are"),
    ],
)
def test_reading_bands(pooled: float, expected: str):
    assert reading(pooled, pooled, 50) == expected


def test_reading_says_when_it_is_noise_or_an_anecdote():
    near = reading(0.3072, 0.211, 88)
    assert near.startswith("30% or more") and "within a point of the 30% line" in near
    assert "a typical session (the median, 21.1%) is 10% to 30%" in near
    assert "only 3 sessions: too few to go by" in reading(0.2, 0.2, 3)
    assert reading(None, None, 4).startswith("unknown")


def test_summarize_pools_tokens_not_shares():
    rows = [make_row("a", 10, 100, 200), make_row("b", 90, 900, 1000), make_row("c", 5, 50, 60, source="subagent")]
    groups = summarize(rows)
    assert list(groups) == ["claude-code/interactive", "claude-code/subagent"]
    interactive = groups["claude-code/interactive"]
    assert interactive["sessions"] == 2
    assert interactive["exploration_share_of_context"] == pytest.approx(100 / 1000)
    assert interactive["exploration_share_of_prompt"] == pytest.approx(100 / 1200)
    assert interactive["recorded_over_billed"] == pytest.approx(1000 / 1200)
    assert interactive["median_session_share"] == pytest.approx(0.1)
    assert interactive["reading"] and groups["claude-code/subagent"]["reading"] is None


def test_a_group_with_no_context_reads_unknown_not_zero():
    groups = summarize([make_row("a", 0, 0, 100)])
    group = groups["claude-code/interactive"]
    assert group["exploration_share_of_context"] is None
    assert group["median_session_share"] is None
    text = Report(groups, Window.build(NOW), "chars/4", "", {"Claude Code": "read"}).to_text()
    lines = text.splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("Agent / source") and "Median" in line)
    row = lines[header + 2].split()
    # no context: unknown; 0 of a known bill: 0%; no re-sent reads anywhere: no column for them
    assert row[-3:] == ["unknown", "0.0%", "unknown"] and "Re-sent" not in text


def test_text_layout_is_the_user_guides():
    rows = [make_row(f"s{i}", 35, 100, 160) for i in range(12)]
    sources = {"Claude Code": "read", "Hermes": "not found"}
    lines = Report(summarize(rows), Window.build(NOW), "o200k_base", "", sources).to_text().splitlines()
    assert lines[0] == ("Exploration share of the token bill: how much of what your agents sent the model was "
                        "code they read")  # the title names what the headline column measures
    assert lines[1] == (
        "Sessions started 2026-10-30 to 2026-11-29 (last 30 days). Claude Code: read; Hermes: not found."
    )
    assert lines[3].startswith('The headline is "Exploration of context" below. Beside it, "of billed prompt"')
    assert "Sessions: 12" in lines
    header = next(line for line in lines if line.startswith("Agent / source") and "Sessions" in line)
    expected = "Agent / source Sessions API calls Exploration of context of billed prompt Median session"
    assert header.split() == expected.split()  # no re-sent reads anywhere: no column of zeros
    row = lines[lines.index(header) + 2]
    assert row.split() == ["claude-code", "/", "interactive", "12", "120", "35.0%", "21.9%", "35.0%"]
    second = next(line for line in lines if "Prompt tokens billed" in line)
    assert second.split()[3:] == "Prompt tokens billed Recorded / billed Edits Other shell".split()  # no NeuralMind
    assert "  30% or more: a large part of your bill, so cutting what the agent reads is where savings are" in lines
    assert "  claude-code/interactive (12 sessions): 30% or more" in lines
    assert not any(line.startswith("Re-sent reads") for line in lines)


def test_each_bands_meaning_is_said_once_and_re_sent_reads_show_only_where_there_are_some():
    rows = [make_row(f"s{i}", 35, 100, 160) for i in range(12)]
    rows += [make_row(f"h{i}", 5, 100, 160, agent="hermes") for i in range(3)]
    rows[0]["billed_tokens"]["reread"], rows[0]["billed_tokens"]["conversation"] = 40, 25
    lines = Report(summarize(rows), Window.build(NOW), "o200k_base", "", {}).to_text().splitlines()
    meaning = "a large part of your bill, so cutting what the agent reads is where savings are"
    assert sum(meaning in line for line in lines) == 1
    assert "  claude-code/interactive (12 sessions): 30% or more" in lines
    assert any(line.startswith("  hermes/interactive (3 sessions): under 10%;") for line in lines)
    assert sum("a small part of your bill" in line for line in lines) == 1
    header = next(line for line in lines if line.startswith("Agent / source") and "Sessions" in line)
    assert header.split()[-3:] == ["session", "Re-sent", "reads"]
    assert any(line.startswith("Re-sent reads: files Claude Code sent again") for line in lines)
    assert "Tokenizer: o200k_base" in lines


def test_json_has_what_scripts_read():
    rows = [make_row("sess-7f3a91", 10, 100, 200)]
    window = Window.build(NOW)
    report = Report(summarize(rows), window, "chars/4", "--estimate", {"Claude Code": "read"})
    data = report.to_json()
    group = data["groups"]["claude-code/interactive"]
    for key in ("sessions", "api_calls", "prompt_tokens_billed", "recorded_over_billed", "exploration_share_of_context",
                "exploration_share_of_prompt", "median_session_share", "shares_of_context", "first_time_tokens"):
        assert key in group
    assert data["tokenizer"] == "chars/4" and data["window"]["since"].startswith("2026-10-30")
    assert "sess-7f3a91" not in json.dumps(data) + report.to_text()  # aggregates only


def test_re_sent_reads_stand_beside_exploration_never_inside_it():
    row = make_row("a", 30, 100, 125)
    row["billed_tokens"]["reread"] = 20
    row["billed_tokens"]["conversation"] -= 20
    group = summarize([row])["claude-code/interactive"]
    assert group["exploration_share_of_context"] == pytest.approx(0.30)  # the headline leaves them out
    assert group["reread_share_of_context"] == pytest.approx(0.20)
    assert group["reread_share_of_prompt"] == pytest.approx(0.16)
    text = Report(summarize([row]), Window.build(NOW), "o200k_base", "", {"Claude Code": "read"}).to_text()
    header = next(line for line in text.splitlines() if line.startswith("Agent / source") and "Sessions" in line)
    shown = text.splitlines()[text.splitlines().index(header) + 2].split()
    assert shown[-4:] == ["30.0%", "24.0%", "30.0%", "20.0%"]


@pytest.mark.parametrize("shares", [[0.3], [0.1, 0.4], [0.5, 0.1, 0.3], [0.2, 0.9, 0.1, 0.7],
                                    [1 / 3, 2 / 3, 0.1, 0.25, 0.6]])
def test_the_median_session_share_is_the_statistics_median_of_the_sessions(shares: list[float]):
    """The median is taken without importing statistics (its imports cost a warm report's start-up): the same
    float, odd and even counts, in whatever order the sessions came."""
    import statistics

    rows = [make_row(f"s{index}", round(share * 1000), 1000, 1200) for index, share in enumerate(shares)]
    for ordered in (rows, rows[::-1]):
        group = summarize(ordered)["claude-code/interactive"]
        assert group["median_session_share"] == statistics.median(row["exploration_share_of_context"] for row in rows)
