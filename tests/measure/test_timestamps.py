"""Timestamps (issue 18): junk, far-future and offset times in every agent's records, the CLI's dates, rows
files, the history and the marks. A time that cannot be read or is implausible is left out, counted on
stderr in one line, and the session is measured as a clean copy of it is; nothing raises."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from agent_fixtures import Counted, codex_session, gemini_json, openclaw_session, opencode_db
from hermes_fixtures import END_MARKER, SUMMARY, T0, HermesDb, call, read_result

from xshare.agents.claude_code.pages import last_activity
from xshare.agents.hermes.state_db import measure_hermes
from xshare.cli import main
from xshare.demo import TranscriptWriter, text
from xshare.measure import timestamps
from xshare.measure.economics import Watch
from xshare.measure.ledger import Ledger
from xshare.report.history import history_path, recall
from xshare.report.periods import marks_text, period_of, split_by_period
from xshare.report.render import Window, parse_cli_time
from xshare.report.rows import merge_rows

START = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)
REFUSED = "timestamps unreadable or implausible"
# what records were found holding where a time belongs (the issue's, and their kin)
JUNK = ["0", "", "soon", 0, -5, 1e20, "1970-01-01T00:00:00.000Z", "2026-13-45T99:00:00.000Z",
        "9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00", True, [1]]


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if REFUSED in line]


# --- the rules ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-03T09:00:00.120Z", "2026-11-03T09:00:00.120Z"),
    ("2026-11-03T09:00:00Z", "2026-11-03T09:00:00.000Z"),
    ("2026-11-03T11:00:00+02:00", "2026-11-03T09:00:00.000Z"),
    ("2026-11-02T23:30:00.500-05:00", "2026-11-03T04:30:00.500Z"),
    ("2026-11-03T09:00:00", "2026-11-03T09:00:00.000Z"),  # naive: UTC, never the machine's zone
    (1793696400, "2026-11-03T09:00:00.000Z"),
    (1793696400.25, "2026-11-03T09:00:00.250Z"),
    (1793696400250, "2026-11-03T09:00:00.250Z"),  # milliseconds
    ("1793696400", "2026-11-03T09:00:00.000Z"),
])
def test_a_time_in_any_form_is_stored_in_one_utc_form(value: object, expected: str):
    assert timestamps.stamp(value) == expected


@pytest.mark.parametrize("value", [*JUNK, None, math.nan, math.inf, -math.inf, "nan", "1e20", "-1",
                                   "2026-11-03T09:00:00.1+1Z"])
def test_junk_and_implausible_times_are_none_never_an_exception(value: object):
    assert timestamps.stamp(value) is None
    assert timestamps.stamp(value, millis=False) is None
    assert timestamps.session_time(value) is None


def test_the_plausible_range_is_2020_to_a_day_from_now():
    now = datetime.now(timezone.utc)
    assert timestamps.stamp("2020-01-01T00:00:00.000Z") and not timestamps.stamp("2019-12-31T23:59:59.999Z")
    assert timestamps.stamp(timestamps.utc_text(now + timedelta(hours=20)))  # a clock a little ahead
    assert timestamps.stamp(timestamps.utc_text(now + timedelta(hours=30))) is None
    assert timestamps.stamp((now + timedelta(hours=30)).timestamp()) is None


def test_parse_time_converts_to_utc_and_survives_the_calendars_ends():
    assert timestamps.parse_time("2026-11-03T09:00+02:00") == datetime(2026, 11, 3, 7, tzinfo=timezone.utc)
    assert timestamps.parse_time("2026-11-03T09:00+02:00").utcoffset() == timedelta(0)
    assert timestamps.parse_time("9999-12-31T23:00:00-05:00") is None
    assert timestamps.parse_time("0001-01-01T00:00:00+05:00") is None
    assert timestamps.epoch_seconds("2026-11-03T09:00:00Z") == timestamps.epoch_seconds(1793696400)


def test_the_ledger_keeps_start_and_end_from_plausible_times_only():
    ledger = Ledger()
    for value in ["2026-11-03T10:00:00.000Z", *JUNK, "2026-11-03T11:00:00+02:00", "2026-11-03T12:00:00Z"]:
        ledger.seen_time(value)
    # the +02:00 time is 09:00 UTC: earlier than the first row, though later as text
    assert (ledger.first_seen, ledger.last_seen) == ("2026-11-03T09:00:00.000Z", "2026-11-03T12:00:00.000Z")
    state = ledger.to_state()
    state["first_seen"], state["last_seen"] = "0", "9999-12-31T23:59:59.999Z"  # saved by an older version
    restored = Ledger.from_state(state)
    assert (restored.first_seen, restored.last_seen) == (None, None)


# --- Claude Code ---------------------------------------------------------------------------------------


def claude_session() -> list[str]:
    writer = TranscriptWriter("s1", "/home/dev/app", start=START)
    writer.user("Where is the retry loop?")
    read = writer.use("Read", {"file_path": "/home/dev/app/net.py"})
    writer.read_result(read, "/home/dev/app/net.py", "def fetch():\n    retry = 3\n" * 40)
    writer.call(text("It is in fetch()."))
    writer.user("Make it five.")
    writer.call(text("Done."))
    return writer.lines()


def with_time(lines: list[str], index: int, value: object) -> list[str]:
    """The lines with the index-th timestamped row's time replaced."""
    stamped = [number for number, line in enumerate(lines) if '"timestamp"' in line]
    row = json.loads(lines[stamped[index]])
    row["timestamp"] = value
    return [*lines[:stamped[index]], json.dumps(row), *lines[stamped[index] + 1:]]


def write_claude(root: Path, lines: list[str]) -> Path:
    path = root / "projects" / "-home-dev-app" / "s1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return root


def report(capsys: pytest.CaptureFixture, root: Path, tmp_path: Path, *window: str) -> tuple[int, dict, dict, str]:
    rows_file = tmp_path / f"rows-{root.name}.jsonl"
    code, out, err = run(capsys, "report", "--json", "--claude-root", str(root), "--rows", str(rows_file), *window)
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()] if code == 0 else []
    return code, json.loads(out) if code == 0 else {}, rows[0] if rows else {}, err


@pytest.mark.parametrize("value", JUNK)
@pytest.mark.parametrize("where", [0, 3, -1])  # the first row, one in the middle, the last
def test_one_claude_row_with_a_junk_time_changes_nothing_but_is_said(
        tmp_path: Path, capsys: pytest.CaptureFixture, value: object, where: int):
    clean = write_claude(tmp_path / "clean", claude_session())
    damaged = write_claude(tmp_path / "damaged", with_time(claude_session(), where, value))
    window = ("--since", "2026-11-01", "--until", "2026-11-30")  # a session dated 9999 was "still active"
    code, want, want_row, err = report(capsys, clean, tmp_path, *window)
    assert code == 0 and not refused_lines(err)
    code, got, row, err = report(capsys, damaged, tmp_path, *window)
    assert code == 0, err  # the session did not vanish, nor wait for a later run
    assert got["groups"] == want["groups"] and got["window"]["deferred_sessions"] == 0
    assert refused_lines(err) == ["xshare: Claude Code timestamps unreadable or implausible (before 2020 or more "
                                  "than a day ahead), left out: 1"]
    assert "Traceback" not in err
    if where == 3:
        assert (row["started_at"], row["last_activity"]) == (want_row["started_at"], want_row["last_activity"])
    assert want_row["started_at"] <= row["started_at"] <= row["last_activity"] <= want_row["last_activity"]


def test_a_claude_session_with_no_plausible_time_is_counted_under_all_only(
        tmp_path: Path, capsys: pytest.CaptureFixture):
    lines = claude_session()
    for index in range(sum('"timestamp"' in line for line in lines)):
        lines = with_time(lines, index, "0")
    root = write_claude(tmp_path / "undated", lines)
    code, data, row, err = report(capsys, root, tmp_path, "--all")
    assert code == 0 and data["sessions"] == 1 and row["started_at"] is None
    assert "sessions with no plausible time" in err and "counted, as --all asks" in err
    code, _, _, err = report(capsys, root, tmp_path, "--since-days", "3650")
    assert code == 2  # no window holds it, and it is said why
    assert "sessions with no plausible time" in err and "counted only with --all" in err
    code, out, err = run(capsys, "report", "--all", "--by", "month", "--claude-root", str(root))
    assert code == 0 and "1 session with no plausible start time: in no period." in out


# --- Codex, Gemini, OpenClaw, OpenCode -----------------------------------------------------------------


def rewrite_jsonl(path: Path, change) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(number, row)) + "\n" for number, row in enumerate(lines)))


def agent_report(capsys: pytest.CaptureFixture, flag: str, home: Path) -> tuple[int, dict, str]:
    code, out, err = run(capsys, "report", "--json", "--since", "2026-01-01", "--until", "2026-11-30", flag,
                         str(home))
    return code, json.loads(out) if code == 0 else {}, err


@pytest.mark.parametrize("value", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00", "0", 1e20])
def test_codex_gemini_and_openclaw_times_at_the_calendars_ends(
        tmp_path: Path, capsys: pytest.CaptureFixture, value: object):
    def first_and_last(number: int, row: dict) -> dict:
        if number in (0, last):
            row["timestamp"] = value
            if isinstance(row.get("payload"), dict) and "timestamp" in row["payload"]:
                row["payload"]["timestamp"] = value  # Codex's session_meta carries a second one
        return row

    cases = (("--codex-home", codex_session), ("--openclaw-home", openclaw_session))
    for flag, build in cases:
        build(tmp_path / "clean" / flag)
        path, _ = build(tmp_path / "damaged" / flag)
        last = len(path.read_text().splitlines()) - 1
        rewrite_jsonl(path, first_and_last)
        code, want, _ = agent_report(capsys, flag, tmp_path / "clean" / flag)
        code, got, err = agent_report(capsys, flag, tmp_path / "damaged" / flag)
        assert code == 0 and got["groups"] == want["groups"], err
        assert len(refused_lines(err)) == 1 and "Traceback" not in err
    gemini_json(tmp_path / "clean" / "gemini")
    path, _ = gemini_json(tmp_path / "damaged" / "gemini")
    document = json.loads(path.read_text())
    document["startTime"] = document["messages"][0]["timestamp"] = value
    document["lastUpdated"] = document["messages"][-1]["timestamp"] = value
    path.write_text(json.dumps(document))
    code, want, _ = agent_report(capsys, "--gemini-home", tmp_path / "clean" / "gemini")
    code, got, err = agent_report(capsys, "--gemini-home", tmp_path / "damaged" / "gemini")
    assert code == 0 and got["groups"] == want["groups"], err
    assert refused_lines(err) == ["xshare: gemini timestamps unreadable or implausible (before 2020 or more than "
                                  "a day ahead), left out: 4"]


def test_opencode_epoch_milliseconds_at_0_1970_and_beyond_9999(tmp_path: Path, capsys: pytest.CaptureFixture):
    opencode_db(tmp_path / "clean" / "opencode.db")
    path, _ = opencode_db(tmp_path / "damaged" / "opencode.db")
    connection = sqlite3.connect(path)
    # the session's own start at 1970 (5 s after the epoch) once placed it there; the child's end is past 9999
    connection.execute("UPDATE session SET time_created = 5000 WHERE id = 'ses_b001'")
    connection.execute("UPDATE session SET time_updated = 1e20, time_created = -7 WHERE id = 'ses_b002'")
    connection.commit()
    connection.close()
    code, want, _ = agent_report(capsys, "--opencode-db", tmp_path / "clean" / "opencode.db")
    code, got, err = agent_report(capsys, "--opencode-db", path)
    assert code == 0 and got["groups"] == want["groups"], err
    assert refused_lines(err) == ["xshare: opencode timestamps unreadable or implausible (before 2020 or more "
                                  "than a day ahead), left out: 3"]


# --- Hermes --------------------------------------------------------------------------------------------


def hermes_sessions(db: HermesDb, started: float, message_times: list) -> None:
    db.session("s", "cli", tokens=(400, 500, 100, 20), api_calls=2, started=started)
    for role, content, extra in (("user", "hello", {}),
                                 ("assistant", "", {"tool_calls": [call("read_file", {"path": "a.py"}, "c1")]}),
                                 ("tool", read_result("1|x = 1"), {"tool_call_id": "c1", "tool_name": "read_file"}),
                                 ("assistant", "done", {})):
        db.message("s", role, content, ts=message_times.pop(0) if message_times else None, **extra)


@pytest.mark.parametrize("junk", [0.0, -1.0, 1e20, "junk", "9999-12-31T23:00:00-05:00"])
def test_hermes_epoch_floats_at_0_negative_huge_or_text(tmp_path: Path, junk: object):
    clean = HermesDb(tmp_path / "clean.db", 22)
    hermes_sessions(clean, T0, [])
    damaged = HermesDb(tmp_path / "damaged.db", 22)
    hermes_sessions(damaged, junk, [T0 + 2, junk, T0 + 6, T0 + 8])
    want, _ = measure_hermes([clean.close()], Counted(len, "chars"))
    got, problems = measure_hermes([damaged.close()], Counted(len, "chars"))
    assert {k: v for k, v in got[0].items() if k != "started_at"} == {
        k: v for k, v in want[0].items() if k != "started_at"}
    assert got[0]["started_at"] == timestamps.stamp(T0 + 2)  # the session's start, from its first message
    assert sum(count for kind, count in problems.items() if REFUSED in kind) == 2


def test_a_hermes_column_mixing_text_and_real_times_is_compared_as_times(tmp_path: Path):
    """A compaction's copies are found by their clock; a TEXT time beside REAL ones once raised TypeError."""
    def in_place(db: HermesDb, tail_time: object) -> None:
        db.session("s", "cli", tokens=(3000, 0, 0, 3))
        db.message("s", "user", "u1", active=0, compacted=1)
        db.message("s", "assistant", "a2", active=0, compacted=1)
        stamp = db.clock + 5
        db.message("s", "user", f"{SUMMARY}\n\n{END_MARKER}", ts=stamp)
        db.message("s", "assistant", "copied tail", ts=tail_time if tail_time is not None else stamp)
        db.clock = stamp + 10
        db.message("s", "user", "u2")
        db.message("s", "assistant", "a3")

    clean, mixed = HermesDb(tmp_path / "clean.db", 22), HermesDb(tmp_path / "mixed.db", 22)
    in_place(clean, None)
    in_place(mixed, timestamps.utc_text(datetime.fromtimestamp(T0 + 9, timezone.utc)))  # the summary's clock
    want, _ = measure_hermes([clean.close()], Counted(len, "chars"))
    got, problems = measure_hermes([mixed.close()], Counted(len, "chars"))
    assert got == want and not problems


# --- the command line: windows, marks, periods ----------------------------------------------------------


def test_window_dates_with_offsets_are_taken_in_utc():
    now = datetime(2026, 11, 29, 18, tzinfo=timezone.utc)
    window = Window.build(now, since="2026-11-02T01:00+05:00", until="2026-11-20T22:00-05:00")
    assert window.since == datetime(2026, 11, 1, 20, tzinfo=timezone.utc)
    assert window.until == datetime(2026, 11, 21, 3, tzinfo=timezone.utc)
    assert window.to_json()["since"] == "2026-11-01T20:00:00+00:00"
    assert window.describe().startswith("Sessions started 2026-11-01 to 2026-11-21")
    assert parse_cli_time("2026-11-30T09:00+02:00").hour == 7


@pytest.mark.parametrize("flags", [("--until", "9999-12-31T23:00-05:00"), ("--since", "0001-01-01T00:00+05:00")])
def test_dates_utc_cannot_hold_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, flags):
    code, out, err = run(capsys, "report", "--claude-root", str(tmp_path), *flags)
    assert code == 2 and not out and len(err.splitlines()) == 1 and "not a date" in err


def test_mark_at_an_offset_is_stored_and_printed_in_utc(capsys: pytest.CaptureFixture):
    code, out, _ = run(capsys, "mark", "--at", "2026-11-30T09:00+02:00", "a", "rule")
    assert code == 0 and out == "marked 2026-11-30 07:00 UTC  a rule\n"
    code, out, _ = run(capsys, "mark")
    assert out == "1  2026-11-30 07:00 UTC  a rule\n"
    code, _, err = run(capsys, "mark", "--at", "9999-12-31T23:00-05:00", "late")
    assert code == 2 and len(err.splitlines()) == 1


def test_an_older_mark_stored_with_an_offset_reads_in_utc(capsys: pytest.CaptureFixture):
    history_path().parent.mkdir(parents=True, exist_ok=True)
    (history_path().parent / "marks.json").write_text(json.dumps([{"label": "old", "at": "2026-11-30T23:30:00-05:00"}]))
    assert run(capsys, "mark")[1] == "1  2026-12-01 04:30 UTC  old\n"
    rows = [{"id": "a", "agent": "claude-code", "source": "interactive", "started_at": "2026-12-01T01:00:00.000Z",
             "api_calls": 1, "prompt_tokens_billed": 10, "context_tokens": 10, "exploration_share_of_context": 0.1,
             "billed_tokens": {"exploration": 1}, "first_time_tokens": {"exploration": 1}}]
    assert "old (2026-12-01 04:30 UTC)" in marks_text([], [{"label": "old", "at": "2026-11-30T23:30:00-05:00"}])
    assert list(split_by_period(rows, "month")) == ["2026-12"]


def test_periods_are_utc_whatever_offset_a_session_was_written_with():
    evening = {"id": "e", "started_at": "2026-11-30T22:00:00-05:00"}  # 03:00 UTC on December 1st, a Tuesday
    junk = {"id": "j", "started_at": "9999-12-31T23:59:59.999Z"}
    assert list(split_by_period([evening, junk], "month")) == ["2026-12"]
    assert list(split_by_period([evening], "week")) == ["2026-W49"]
    assert period_of(datetime(2026, 11, 30, 22, tzinfo=timezone(timedelta(hours=-5))), "month") == "2026-12"


# --- rows files, the history, the cache of pages -------------------------------------------------------


def rows_row(session_id: str, started: object, last: object, share: float = 0.25) -> dict:
    billed = dict.fromkeys(("exploration", "edit", "shell", "web", "other", "reread", "conversation", "injected",
                            "neuralmind", "overhead"), 0)
    billed["exploration"], billed["overhead"] = int(share * 1000), 1000 - int(share * 1000)
    return {"id": session_id, "agent": "claude-code", "source": "interactive", "started_at": started,
            "last_activity": last, "api_calls": 2, "prompt_tokens_billed": 1200, "context_tokens": 1000,
            "exploration_share_of_context": share, "billed_tokens": billed, "first_time_tokens": dict(billed),
            "tokenizer": "o200k_base", "machine": "m1"}


def test_rows_files_with_junk_times(tmp_path: Path, capsys: pytest.CaptureFixture):
    path = tmp_path / "rows.jsonl"
    rows = [rows_row("fine", "2026-11-03T09:00:00.000Z", "2026-11-03T10:00:00.000Z"),
            rows_row("far", "2026-11-04T09:00:00.000Z", "9999-12-31T23:59:59.999Z"),  # once deferred forever
            rows_row("evening", "2026-11-05T22:00:00-05:00", "2026-11-05T23:00:00-05:00"),
            rows_row("zero", "0", "0")]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = run(capsys, "report", "--json", "--from-rows", str(path), "--since", "2026-11-01",
                         "--until", "2026-11-05")
    data = json.loads(out)
    # the evening session started on the 6th in UTC: after the window; "zero" has no time at all
    assert code == 0 and data["sessions"] == 2 and data["rollup"]["outside_window"] == 2
    assert "rows files: sessions with no plausible time" in err and "counted only with --all" in err
    code, out, err = run(capsys, "report", "--json", "--from-rows", str(path), "--all")
    assert code == 0 and json.loads(out)["sessions"] == 4 and "counted, as --all asks" in err


def test_a_row_or_history_line_dated_9999_is_replaced_by_a_later_measure():
    old = rows_row("s", "2026-11-03T09:00:00.000Z", "9999-12-31T23:59:59.999Z")
    new = {**old, "last_activity": "2026-11-03T11:00:00.000Z", "api_calls": 5}
    merged, added, replaced = merge_rows([old], [new])
    assert (added, replaced) == (0, 1) and merged[0]["api_calls"] == 5
    history_path().parent.mkdir(parents=True, exist_ok=True)
    history_path().write_text(json.dumps(old) + "\n" + json.dumps(new) + "\n")
    assert recall()[("claude-code", "s")]["api_calls"] == 5


def test_the_html_index_orders_by_plausible_times(tmp_path: Path):
    lines = with_time(with_time(claude_session(), -1, "9999-12-31T23:59:59.999Z"), -2, "2026-11-03T12:00:00+02:00")
    path = write_claude(tmp_path, lines) / "projects" / "-home-dev-app" / "s1.jsonl"
    stamps = [json.loads(line)["timestamp"] for line in claude_session() if '"timestamp"' in line]
    assert last_activity(path) == max(stamps[:-2] + ["2026-11-03T10:00:00.000Z"])


def test_a_rebuild_gap_ignores_implausible_call_times():
    watch = Watch()
    usage = {"cache_read": 0, "cache_write_5m": 50_000}
    watch.call(50_000, usage, time="2026-11-03T09:00:00.000Z")
    found = watch.call(50_000, usage, time="9999-12-31T23:59:59.999Z")
    assert found and found["cause"] != "idle"


def test_the_hermes_cache_compares_the_start_it_read_from_as_a_time(tmp_path: Path, monkeypatch):
    """A database read for a window is read again for an earlier window only; the start it was read from
    is compared as a time (an older version stored it with the window's offset)."""
    from xshare.agents.common.file_rows import cache_path
    from xshare.agents.hermes import rows_cache
    from xshare.agents.hermes import state_db as hermes
    from xshare.agents.protocol import Looking
    from xshare.measure import tokens

    db = HermesDb(tmp_path / "state.db", 22)
    hermes_sessions(db, T0, [])
    path, choice = db.close(), tokens.choose(estimate=True)
    rows_cache.measure_hermes([path], Looking({}, choice, since=datetime(2026, 5, 1, tzinfo=timezone.utc)))
    cache = json.loads(cache_path("hermes").read_text())
    cache["entries"][str(path)][1] = "2026-05-01T02:00:00+05:00"  # 2026-04-30 21:00 UTC
    cache_path("hermes").write_text(json.dumps(cache))
    reads = []
    monkeypatch.setattr(hermes, "measure_hermes", lambda *a, **k: reads.append(1) or ([], {}))
    rows_cache.measure_hermes([path], Looking({}, choice, since=datetime(2026, 4, 30, 22, tzinfo=timezone.utc)))
    assert reads == []  # later than what was read: the cache holds it (as text, "2026-05-01" > "2026-04-30")
    rows_cache.measure_hermes([path], Looking({}, choice, since=datetime(2026, 4, 30, 20, tzinfo=timezone.utc)))
    assert reads == [1]


def test_a_week_date_is_stored_as_the_day_it_names():
    # shaped like the stored form at the places stamp looked at first, but "2026-W47..." sorts after "2026-12..."
    assert timestamps.stamp("2026-W47-1T10:00:00.000Z") == "2026-11-16T10:00:00.000Z"
    assert timestamps.stamp("2026-11-16T10:00:00.000Z") == "2026-11-16T10:00:00.000Z"
