"""The Hermes collector: every rule of the spec over state.db files we write ourselves, read-only proof,
problems reported while the other databases are still measured, the real corpus and Hermes's own SessionDB.

Token counts here are characters (count=len), so every expected figure is a length written in the test."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from agent_fixtures import Counted
from hermes_fixtures import (
    END_MARKER,
    SOURCES,
    SUMMARY,
    T0,
    VERSIONS,
    HermesDb,
    build_standard,
    call,
    copy_database,
    read_result,
    terminal_result,
)

from xshare.agents.common import sqlite as hermes_db
from xshare.agents.hermes import state_db as hermes
from xshare.agents.hermes.state_db import default_databases, iso, measure_hermes, source_label

CORPUS_HERMES = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "hermes"


def measure(*paths: Path) -> tuple[dict[str, dict], Counter]:
    rows, problems = measure_hermes(list(paths), Counted(len, "chars"))
    return {row["id"]: row for row in rows}, problems


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def args(name: str, arguments: dict) -> str:
    """A live-shape call as Hermes sends it: its arguments re-serialised compactly, keys sorted."""
    return f"{name} {json.dumps(arguments, separators=(',', ':'), sort_keys=True)}"


def stored_args(name: str, arguments: dict) -> str:
    """A fallback-shape call: Hermes sends its arguments as stored."""
    return f"{name} {json.dumps(arguments)}"


# --- where the databases are ----------------------------------------------------------------------


def test_default_databases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    assert default_databases() == []
    home = Path.home() / ".hermes"
    for folder in (home, home / "profiles" / "work", home / "profiles" / "empty"):
        folder.mkdir(parents=True)
    (home / "state.db").write_bytes(b"")
    (home / "profiles" / "work" / "state.db").write_bytes(b"")
    assert default_databases() == [home / "state.db", home / "profiles" / "work" / "state.db"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "state.db").write_bytes(b"")
    monkeypatch.setenv("HERMES_HOME", str(elsewhere))
    assert default_databases() == [elsewhere / "state.db", home / "profiles" / "work" / "state.db"]


# --- sources, calls, prompt -----------------------------------------------------------------------


def test_sources_and_subagents(tmp_path: Path) -> None:
    rows, problems = measure(build_standard(tmp_path / "state.db"))
    for sid, (_, expected) in SOURCES.items():
        assert rows[sid]["source"] == expected, sid
        assert rows[sid]["agent"] == "hermes"
    assert rows["s-delegate"]["source"] == "subagent"  # _delegate_from, whatever its source says
    assert rows["s-branch"]["source"] == "interactive"  # a parent id alone is not a subagent
    assert rows["s-branch"]["parent"] == "s-cli"
    assert not problems


def test_source_label_open_set() -> None:
    assert source_label("webui", None) == "webui"
    assert source_label(None, None) == "unknown"
    assert source_label("cron", '{"_delegate_from": "x"}') == "subagent"
    assert source_label("cli", "not json") == "interactive"


def test_calls_prompt_and_usage(tmp_path: Path) -> None:
    rows, _ = measure(build_standard(tmp_path / "state.db"))
    row = rows["s-cli"]
    assert row["api_calls"] == 2  # one per assistant row
    assert row["prompt_tokens_billed"] == 400 + 500 + 100  # input + cache_read + cache_write
    assert row["usage"] == {"input": 400, "cache_read": 500, "cache_write_5m": 100, "cache_write_1h": 0,
                            "output": 20}
    assert row["model"] == "test/model"
    # the overhead is whatever the bill exceeds the recorded context by
    billed = row["billed_tokens"]
    assert billed["overhead"] == 1000 - sum(value for key, value in billed.items() if key != "overhead")
    assert row["recorded_over_billed"] == 1.0


def test_tool_names_from_tool_calls_and_categories(tmp_path: Path) -> None:
    rows, problems = measure(build_standard(tmp_path / "state.db"))
    first = rows["s-names"]["first_time_tokens"]
    search = args("search_files", {"pattern": "def main"})
    git = args("terminal", {"command": "git log --oneline -3"})
    pytest_call = args("terminal", {"command": "pytest -q"})
    patch = stored_args("patch", {"path": "main.py", "old_string": "a", "new_string": "b"})
    # NULL tool_name: the name (and the command) come from the assistant row's tool_calls by id
    assert first["exploration"] == len(search) + len(json.dumps({"matches": ["main.py:1"]})) + len(git) + len(
        terminal_result("abc first"))
    assert first["shell"] == len(pytest_call) + len(terminal_result("1 passed"))
    # the fallback shape has no ids: its result follows it
    assert first["edit"] == len(patch) + len(json.dumps({"success": True}))
    assert first["conversation"] == len("find it") + len("patched")
    assert not problems


def test_multimodal_content(tmp_path: Path) -> None:
    rows, _ = measure(build_standard(tmp_path / "state.db"))
    assert rows["s-image"]["first_time_tokens"]["conversation"] == len("what is this") + len("a cat")


def test_neuralmind_block_from_api_content(tmp_path: Path) -> None:
    rows, _ = measure(build_standard(tmp_path / "state.db"))
    first = rows["s-nm"]["first_time_tokens"]  # written with no session_model_usage row
    assert first["neuralmind"] == len("\n\nCode matching this prompt: p.py")
    assert first["conversation"] == len("fix the parser") + len("ok")


def test_api_content_that_is_not_an_extension_is_what_was_sent(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("s", "cli", tokens=(100, 0, 0, 1), api_calls=1)
    db.message("s", "user", "secret token abc", api_content="[redacted]")
    db.message("s", "assistant", "ok")
    rows, _ = measure(db.close())
    assert rows["s"]["first_time_tokens"]["conversation"] == len("[redacted]") + len("ok")
    assert rows["s"]["first_time_tokens"]["neuralmind"] == 0


def test_unknown_tool_call_is_other_and_reported(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 11)
    db.session("s", "cli", tokens=(100, 0, 0, 1), api_calls=1)
    db.message("s", "user", "hi")
    db.message("s", "tool", "orphan result", tool_call_id="nowhere")
    db.message("s", "assistant", "ok")
    rows, problems = measure(db.close())
    assert rows["s"]["first_time_tokens"]["other"] == len("orphan result")
    assert sum(count for kind, count in problems.items() if "call was not found" in kind) == 1


# --- presence, the cap, compaction ------------------------------------------------------------------


def _exploration_session(db: HermesDb, sid: str, result: str, prompt: int, **session) -> str:
    db.session(sid, "cli", tokens=(prompt, 0, 0, 1), api_calls=2, **session)
    db.message(sid, "user", "q")
    db.message(sid, "assistant", None, tool_calls=[call("read_file", {"path": "big.py"}, f"{sid}-1")])
    db.message(sid, "tool", result, tool_call_id=f"{sid}-1", tool_name="read_file")
    db.message(sid, "assistant", "x")
    return args("read_file", {"path": "big.py"})


def test_no_call_is_capped_by_the_session_mean(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    big = "y" * 5000
    arguments = _exploration_session(db, "small-bill", big, prompt=2000)  # 1,000 per call, 5,000 carried
    _exploration_session(db, "roomy", big, prompt=20000)  # 10,000 per call: it fits
    rows, _ = measure(db.close())
    # Hermes trims only by compaction: the read stays, and the calibration says the bill is short of it
    carried = len(arguments) + 5000
    assert rows["small-bill"]["billed_tokens"]["exploration"] == carried
    assert rows["small-bill"]["recorded_over_billed"] > 1
    assert rows["small-bill"]["billed_tokens"]["overhead"] == 0
    assert rows["roomy"]["billed_tokens"]["exploration"] == carried
    assert rows["roomy"]["first_time_tokens"]["exploration"] == carried
    assert rows["roomy"]["recorded_over_billed"] == 1.0


def _in_place(db: HermesDb, sid: str, tail_stamp: float | None, api_calls: int | None,
              tail_text: str = "a2") -> tuple[str, str]:
    """An in-place compaction: archived rows, the summary, a copied tail row, then a new turn."""
    db.session(sid, "cli", tokens=(3000, 0, 0, 3), api_calls=api_calls)
    db.message(sid, "user", "u1", active=0, compacted=1)
    db.message(sid, "assistant", None, tool_calls=[call("read_file", {"path": "a.py"}, f"{sid}-1")], active=0,
               compacted=1)
    result = read_result("r" * 300)
    db.message(sid, "tool", result, tool_call_id=f"{sid}-1", tool_name="read_file", active=0, compacted=1)
    db.message(sid, "assistant", "a2", active=0, compacted=1)
    stamp = db.clock + 5
    db.message(sid, "user", f"{SUMMARY}\n\n{END_MARKER}", ts=stamp)
    db.message(sid, "assistant", tail_text, ts=stamp if tail_stamp is None else tail_stamp)  # the copied tail
    db.clock = stamp + 10
    db.message(sid, "user", "u2")
    db.message(sid, "assistant", "a3")
    return args("read_file", {"path": "a.py"}), result


def test_in_place_compaction_copies_are_not_calls(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    arguments, result = _in_place(db, "inplace", tail_stamp=None, api_calls=None)
    rows, _ = measure(db.close())
    row = rows["inplace"]
    # Hermes inserts the compressed list with one clock: the tail copy shares the summary's timestamp
    assert row["api_calls"] == 3
    assert row["compactions"] == 1
    # the archived read is present at call 2 only: the summary drops it before call 3
    assert row["billed_tokens"]["exploration"] == len(arguments) + len(result)
    # the copy is present again, but its text was first seen in the original
    assert row["first_time_tokens"]["conversation"] == len("u1") + len("a2") + len(SUMMARY) + 2 + len(
        END_MARKER) + len("u2") + len("a3")
    assert row["prompt_tokens_billed"] == 3000


def test_each_copy_rule_on_its_own(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    late = T0 + 10_000
    _in_place(db, "same-clock", tail_stamp=None, api_calls=None, tail_text="new words")
    _in_place(db, "repeated", tail_stamp=late, api_calls=None, tail_text="a2")
    # the fixture generator's shape: a tail row with its own clock and new text; only the count tells
    _in_place(db, "counted", tail_stamp=late, api_calls=3, tail_text="new words")
    _in_place(db, "uncounted", tail_stamp=late, api_calls=None, tail_text="new words")
    rows, _ = measure(db.close())
    assert rows["same-clock"]["api_calls"] == 3
    assert rows["repeated"]["api_calls"] == 3
    assert rows["counted"]["api_calls"] == 3  # Hermes counted 3 calls for 4 assistant rows
    assert rows["uncounted"]["api_calls"] == 4  # without the count, an assistant row is a call


def test_rotation_compaction(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 14)
    db.session("parent", "telegram", tokens=(2000, 0, 0, 2), api_calls=2, end_reason="compression")
    db.message("parent", "user", "u1")
    db.message("parent", "assistant", None, tool_calls=[call("search_files", {"pattern": "x"}, "p1")])
    db.message("parent", "tool", "match", tool_call_id="p1")
    db.message("parent", "assistant", "done")
    stamp = db.clock + 60
    db.session("child", "telegram", parent="parent", tokens=(1000, 0, 0, 1), api_calls=1, started=stamp)
    db.message("child", "user", "u1", ts=stamp)  # the protected head, copied
    db.message("child", "user", f"{SUMMARY}\n\n{END_MARKER}", ts=stamp)
    db.message("child", "assistant", "done", ts=stamp)  # the protected tail, copied
    db.clock = stamp + 5
    db.message("child", "user", "u2")
    db.message("child", "assistant", "a3")
    # a delegate child of the rotated parent is not a continuation: it starts with its own rows
    db.session("helper", "subagent", parent="parent", tokens=(100, 0, 0, 1), api_calls=2)
    db.message("helper", "user", "look")
    db.message("helper", "assistant", "one")
    db.message("helper", "assistant", "two")
    rows, _ = measure(db.close())
    assert rows["parent"]["api_calls"] == 2
    assert rows["parent"]["billed_tokens"]["exploration"] == len(args("search_files", {"pattern": "x"})) + 5
    child = rows["child"]
    assert child["api_calls"] == 1
    assert child["parent"] == "parent"
    assert child["source"] == rows["parent"]["source"] == "interactive"
    assert child["compactions"] == 1
    # the copies are the child's context at its first call
    present = len("u1") + len(SUMMARY) + 2 + len(END_MARKER) + len("done") + len("u2")
    assert child["context_tokens"] == 1000 and child["billed_tokens"]["conversation"] == present
    assert rows["helper"]["api_calls"] == 2


def test_rewound_rows_stay_until_a_summary(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 14)
    db.session("s", "desktop", tokens=(30000, 0, 0, 4), api_calls=4)
    db.message("s", "user", "delete it", active=0)
    db.message("s", "assistant", None, tool_calls=[call("terminal", {"command": "rm -rf build"}, "r1")], active=0)
    db.message("s", "tool", terminal_result(""), tool_call_id="r1", tool_name="terminal", active=0)
    db.message("s", "user", "never mind")
    db.message("s", "assistant", "ok")  # call 2: the rewound rows are still present (spec's model)
    db.message("s", "user", f"{SUMMARY}")
    db.message("s", "assistant", "after")  # call 3: dropped by the summary
    db.message("s", "assistant", "again")  # call 4
    rows, _ = measure(db.close())
    shell = len(args("terminal", {"command": "rm -rf build"})) + len(terminal_result(""))
    assert rows["s"]["api_calls"] == 4
    assert rows["s"]["billed_tokens"]["shell"] == shell


def test_compressed_summary_column(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 30)
    db.session("flagged", "cli", tokens=(100, 0, 0, 2), api_calls=2, last_activity_at=T0 + 99_999)
    db.message("flagged", "user", "old", active=0, compacted=1)
    db.message("flagged", "assistant", "a1", active=0, compacted=1)
    db.message("flagged", "user", "plain text summary", summary_flag=1)
    db.message("flagged", "user", f"{SUMMARY} (quoted by the user)")  # looks like one, flag says no
    db.message("flagged", "assistant", "a2")
    # written before an upgrade to schema 30: the column came with DEFAULT 0, so the text decides
    db.session("upgraded", "cli", tokens=(100, 0, 0, 2), api_calls=2)
    db.message("upgraded", "user", "old", active=0, compacted=1)
    db.message("upgraded", "assistant", "a1", active=0, compacted=1)
    db.message("upgraded", "user", SUMMARY)
    db.message("upgraded", "assistant", "a2")
    rows, _ = measure(db.close())
    assert rows["flagged"]["compactions"] == 1
    assert rows["flagged"]["last_activity"] == iso(T0 + 99_999)
    assert rows["upgraded"]["compactions"] == 1


@pytest.mark.parametrize(
    "text",
    [
        "[CONTEXT SUMMARY]: legacy summary",
        f"  {SUMMARY}",
        "[PRIOR CONTEXT — for reference only; not a new message]\nold tail\n"
        f"[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]\n{SUMMARY}",
    ],
)
def test_summary_prefixes(tmp_path: Path, text: str) -> None:
    db = HermesDb(tmp_path / "state.db", 17)
    db.session("s", "cli", tokens=(100, 0, 0, 2), api_calls=2)
    db.message("s", "user", "old", active=0, compacted=1)
    db.message("s", "assistant", "a1", active=0, compacted=1)
    db.message("s", "user", text)
    db.message("s", "user", "[CONTEXT SUMMARY] is what I called it")  # not the prefix
    db.message("s", "assistant", "a2")
    rows, _ = measure(db.close())
    assert rows["s"]["compactions"] == 1


def test_null_active_is_active(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 14, upgraded_from=11, null_active=True)
    db.session("s", "cli", tokens=(10000, 0, 0, 2), api_calls=2)
    db.message("s", "user", "kept")
    db.message("s", "assistant", "a1")
    db.message("s", "user", SUMMARY)
    db.message("s", "assistant", "a2")
    path = db.close()
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT count(*) FROM messages WHERE active IS NULL").fetchone()[0] == 4
    rows, _ = measure(path)
    # NULL read as 1: the rows are not dropped by the summary and ride along to call 2
    assert rows["s"]["billed_tokens"]["conversation"] == len("kept") + len("kept") + len("a1") + len(SUMMARY)


def test_columns_found_by_name(tmp_path: Path) -> None:
    fresh, _ = measure(build_standard(tmp_path / "fresh" / "state.db", 22))
    upgraded, _ = measure(build_standard(tmp_path / "upgraded" / "state.db", 22, upgraded_from=8))
    with sqlite3.connect(tmp_path / "upgraded" / "state.db") as con:
        order = [row[1] for row in con.execute("PRAGMA table_info(messages)")]
    assert order.index("api_content") < order.index("active") or order[-1] == "api_content"
    assert fresh == upgraded


@pytest.mark.parametrize("version", VERSIONS)
def test_every_schema_version(tmp_path: Path, version: int) -> None:
    rows, problems = measure(build_standard(tmp_path / "state.db", version))
    assert not problems
    for sid in SOURCES:
        assert rows[sid]["api_calls"] == 2
        assert rows[sid]["prompt_tokens_billed"] == 1000
        assert rows[sid]["first_time_tokens"]["exploration"] == len(args("read_file", {"path": "a.py"})) + len(
            read_result("1|x = 1"))
    assert rows["s-names"]["first_time_tokens"]["edit"] > 0


def test_timestamps_are_iso_utc_and_sort_as_text(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 11)
    db.session("s", "cli", tokens=(10, 0, 0, 1), api_calls=1, started=T0, ended=T0 + 3600.25)
    db.message("s", "user", "hi", ts=T0 + 1)
    db.message("s", "assistant", "ok", ts=T0 + 2)
    rows, _ = measure(db.close())
    assert rows["s"]["started_at"] == "2026-05-28T20:26:40.000Z"
    assert rows["s"]["last_activity"] == "2026-05-28T21:26:40.250Z"
    assert iso(T0) == datetime.fromtimestamp(T0, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert iso(None) is None and iso("2026-05-28T20:26:40Z") == "2026-05-28T20:26:40.000Z"


def test_every_session_has_a_row(tmp_path: Path) -> None:
    db = HermesDb(tmp_path / "state.db", 22)
    db.session("empty", "cli")
    db.session("billed-no-rows", "acp", tokens=(100, 0, 0, 1), api_calls=1)
    rows, problems = measure(db.close())
    assert rows["empty"]["api_calls"] == 0
    assert rows["billed-no-rows"]["api_calls"] == 0
    assert sum(count for kind, count in problems.items() if "no assistant row" in kind) == 1


# --- never writing, and what happens when a database cannot be read ---------------------------------


def test_wal_database_without_sidecars_gets_none(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    build_standard(folder / "state.db", 22, wal=True)
    assert sorted(os.listdir(folder)) == ["state.db"]
    before = files(folder)
    rows, problems = measure(folder / "state.db")
    assert len(rows) == len(SOURCES) + 5 and not problems
    assert files(folder) == before  # same bytes, and no -wal/-shm left behind


def test_empty_wal_and_shm_left_behind_are_not_touched(tmp_path: Path) -> None:
    writer = HermesDb(tmp_path / "live" / "state.db", 22, wal=True)
    writer.session("s", "cli", tokens=(100, 0, 0, 1), api_calls=1)
    writer.message("s", "user", "hi")
    writer.message("s", "assistant", "ok")
    writer.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # what Hermes does on close: an empty -wal
    folder = copy_database(writer.path, tmp_path / "home", ("", "-wal", "-shm")).parent
    writer.close()
    assert (folder / "state.db-wal").stat().st_size == 0
    stamps = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    before = files(folder)
    rows, problems = measure(folder / "state.db")
    assert rows["s"]["api_calls"] == 1 and not problems
    assert files(folder) == before
    assert {path.name: path.stat().st_mtime_ns for path in folder.iterdir()} == stamps  # not even the -shm


def test_a_writer_moving_the_file_under_a_read_means_reading_again(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = build_standard(tmp_path / "state.db", 22, wal=True)  # closed: no sidecars, read immutable
    writers = []
    original = hermes._read

    def read_then_write(*arguments):
        rows = original(*arguments)
        if not writers:  # Hermes starts during the first read and commits a session
            writer = sqlite3.connect(path, isolation_level=None)
            writer.execute("INSERT INTO sessions (id, source, started_at) VALUES ('late', 'cli', 1780000000)")
            writers.append(writer)
        return rows

    monkeypatch.setattr(hermes, "_read", read_then_write)
    try:
        rows, problems = measure(path)
    finally:
        for writer in writers:
            writer.close()
    assert "late" in rows and not problems


def test_rollback_journal_database_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    build_standard(folder / "state.db", 11)
    before = files(folder)
    rows, problems = measure(folder / "state.db")
    assert rows and not problems
    assert files(folder) == before


def test_live_writer_committed_rows_are_seen(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    db = HermesDb(folder / "state.db", 22, wal=True)
    build_into = db  # keep the writer open: its commits sit in the -wal
    build_into.session("live", "cli", tokens=(100, 0, 0, 1), api_calls=1)
    build_into.message("live", "user", "hi")
    build_into.message("live", "assistant", "ok")
    assert (folder / "state.db-wal").stat().st_size > 0
    main_before = (folder / "state.db").read_bytes()
    listing = sorted(os.listdir(folder))
    rows, problems = measure(folder / "state.db")
    assert rows["live"]["api_calls"] == 1 and not problems
    assert (folder / "state.db").read_bytes() == main_before
    assert sorted(os.listdir(folder)) == listing
    db.close()


def test_wal_beside_without_shm_is_read_from_a_private_copy(tmp_path: Path) -> None:
    writer = HermesDb(tmp_path / "live" / "state.db", 22, wal=True)
    writer.session("in-wal", "cli", tokens=(100, 0, 0, 1), api_calls=1)
    writer.message("in-wal", "user", "hi")
    writer.message("in-wal", "assistant", "ok")
    folder = tmp_path / "copied"
    copy_database(writer.path, folder, ("", "-wal"))  # a backup taken with its -wal
    writer.close()
    before = files(folder)
    rows, problems = measure(folder / "state.db")
    assert rows["in-wal"]["api_calls"] == 1
    assert any("private copy" in kind for kind in problems)
    assert files(folder) == before


# Runs in a process of its own: plain mode=ro first (the evidence that a fallback is needed), then xshare.
_READ_ONLY_SCRIPT = """
import json, sqlite3, subprocess, sys, urllib.parse
folder, database, remount = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if remount:
    for command in (["mount", "--bind", folder, folder], ["mount", "-o", "remount,ro,bind", folder, folder]):
        if subprocess.run(command, capture_output=True).returncode:
            print("null")
            sys.exit(0)
try:
    con = sqlite3.connect(f"file:{urllib.parse.quote(database)}?mode=ro", uri=True)
    con.execute("SELECT count(*) FROM sessions").fetchone()
    con.close()
    plain = "ok"
except sqlite3.Error as error:
    plain = str(error)
from types import SimpleNamespace
from xshare.agents.hermes.state_db import measure_hermes
rows, problems = measure_hermes([database], SimpleNamespace(count=len, name="chars", fallbacks=0, flush=lambda: None))
print(json.dumps([plain, len(rows), dict(problems)]))
"""


def _run_in_read_only_folder(folder: Path) -> tuple[str, int, dict]:
    """Root writes through permission bits, so as root the folder is made a read-only mount in a private
    mount namespace (unshare -m); otherwise its permission bits are enough."""
    repo = Path(hermes.__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-c", _READ_ONLY_SCRIPT, str(folder), str(folder / "state.db")]
    if os.geteuid() == 0:
        if not shutil.which("unshare") or not shutil.which("mount"):
            pytest.skip("running as root without unshare/mount: cannot make a read-only folder")
        command = ["unshare", "-m", "--", *command, "1"]
    else:
        command.append("0")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0 and os.geteuid() == 0 and not done.stdout:
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    if result is None:
        pytest.skip("cannot remount a folder read-only here")
    return tuple(result)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and mounts")
@pytest.mark.parametrize("sidecars", [("",), ("", "-wal")])
def test_read_only_folder(tmp_path: Path, sidecars: tuple[str, ...]) -> None:
    base = tmp_path
    try:
        writer = HermesDb(base / "live" / "state.db", 22, wal=True)
        writer.session("s", "cli", tokens=(100, 0, 0, 1), api_calls=1)
        writer.message("s", "user", "hi")
        writer.message("s", "assistant", "ok")
        if "-wal" not in sidecars:
            writer.close()  # the last connection checkpoints the WAL into the main file and removes it
        folder = copy_database(writer.path, base / "ro", sidecars).parent
        writer.close()
        for path in folder.iterdir():
            path.chmod(0o444)
        folder.chmod(0o555)
        before = files(folder)
        plain, count, problems = _run_in_read_only_folder(folder)
        assert plain != "ok"  # mode=ro alone fails here: SQLite would have to create the -shm (and -wal)
        assert count == 1
        copied = any("private copy" in kind for kind in problems)
        assert copied == ("-wal" in sidecars)  # said so on stderr when it had to read a copy
        assert not [kind for kind in problems if "private copy" not in kind]
        assert files(folder) == before
    finally:
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_locked_database_is_reported_and_others_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermes_db, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(hermes, "LOCK_RETRIES", 1)
    monkeypatch.setattr(hermes.time, "sleep", lambda seconds: None)
    locked = build_standard(tmp_path / "locked" / "state.db", 11)  # rollback journal: a writer locks readers out
    good = build_standard(tmp_path / "good" / "state.db", 22)
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        rows, problems = measure(locked, good)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(rows) == len(SOURCES) + 5
    assert [kind for kind in problems if "locked" in kind] == [f"Hermes database {locked} is locked by another "
                                                               "program; skipped"]


def test_corrupt_and_foreign_files_are_reported_and_others_measured(tmp_path: Path) -> None:
    good = build_standard(tmp_path / "good" / "state.db", 22)
    text = tmp_path / "text" / "state.db"
    text.parent.mkdir()
    text.write_text("not a database\n")
    empty = tmp_path / "empty" / "state.db"
    empty.parent.mkdir()
    empty.write_bytes(b"")
    broken = tmp_path / "broken" / "state.db"
    broken.parent.mkdir()
    data = bytearray(build_standard(tmp_path / "source" / "state.db", 22).read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # a valid header over garbage pages
    broken.write_bytes(bytes(data))
    foreign = tmp_path / "foreign" / "state.db"
    foreign.parent.mkdir()
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE other (x)")
    missing = tmp_path / "missing" / "state.db"
    before = {path: path.read_bytes() for path in (text, empty, broken, foreign)}
    rows, problems = measure(text, empty, broken, foreign, missing, good)
    assert len(rows) == len(SOURCES) + 5
    assert sum(problems.values()) == 5
    assert sum(count for kind, count in problems.items() if "not an SQLite database" in kind) == 2
    assert any(str(broken) in kind for kind in problems)
    assert any("sessions and messages tables" in kind for kind in problems)
    assert any(str(missing) in kind and "not found" in kind for kind in problems)
    assert {path: path.read_bytes() for path in before} == before


# --- real databases ---------------------------------------------------------------------------------

SPEC_GROUPS = {"cli": "interactive", "tui": "interactive",
               "desktop": "interactive", "local": "interactive", "telegram": "interactive",
               "cron": "automated", "oneshot": "automated", "a2a": "automated", "api_server": "automated",
               "subagent": "subagent", "tool": "benchmark"}


def independent_counts(path: Path) -> tuple[Counter, int]:
    """Sessions by group and assistant rows, straight from SQL (a copy, so nothing is written)."""
    with tempfile.TemporaryDirectory() as private:
        copy = copy_database(path, Path(private), ("", "-wal"))
        con = sqlite3.connect(copy)
        columns = {row[1] for row in con.execute("PRAGMA table_info(sessions)")}
        marker = ("json_valid(model_config) AND json_extract(model_config, '$._delegate_from') IS NOT NULL"
                  if "model_config" in columns else "0")
        groups = Counter()
        for source, delegate, number in con.execute(
                f"SELECT source, {marker}, count(*) FROM sessions GROUP BY 1, 2"):
            group = "subagent" if delegate else SPEC_GROUPS.get(source, source or "unknown")
            groups[group] += number
        assistants = con.execute("SELECT count(*) FROM messages WHERE role = 'assistant'").fetchone()[0]
        con.close()
    return groups, assistants


@pytest.mark.skipif(not CORPUS_HERMES.is_dir(), reason="../shared/corpus/hermes is not beside this checkout")
@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS_HERMES.glob("*") if (p / "state.db").is_file())
                         if CORPUS_HERMES.is_dir() else [])
def test_corpus_database(name: str) -> None:
    path = CORPUS_HERMES / name / "state.db"
    # the -shm is SQLite's shared-memory index, which any reader of a WAL holding commits updates
    before = {key: data for key, data in files(path.parent).items() if not key.endswith("-shm")}
    listing = sorted(os.listdir(path.parent))
    rows, problems = measure_hermes([path], Counted(len, "chars"))
    assert not [kind for kind in problems if "skipped" in kind or "not found" in kind]
    groups, assistants = independent_counts(path)
    assert Counter(row["source"] for row in rows) == groups
    # the main loop's calls are assistant rows; the auxiliary (title, compression) calls are not
    assert 0 < sum(row["api_calls"] - row["unrecorded_calls"] for row in rows) <= assistants
    assert {key: data for key, data in files(path.parent).items() if not key.endswith("-shm")} == before
    assert sorted(os.listdir(path.parent)) == listing


# --- databases written by Hermes's own SessionDB --------------------------------------------------------

HERMES_DBS = os.environ.get("XSHARE_TEST_HERMES_DBS")


@pytest.mark.skipif(not HERMES_DBS, reason="XSHARE_TEST_HERMES_DBS is not set (.ci/hermes.sh builds them)")
def test_databases_written_by_hermes_sessiondb() -> None:
    found = sorted(Path(HERMES_DBS).glob("*/state.db"))
    versions = set()
    for path in found:
        main_before = path.read_bytes()
        rows, problems = measure_hermes([path], Counted(len, "chars"))
        assert not [kind for kind in problems if "skipped" in kind], path
        groups, _ = independent_counts(path)
        assert Counter(row["source"] for row in rows) == groups, path
        with tempfile.TemporaryDirectory() as private:
            con = sqlite3.connect(copy_database(path, Path(private), ("", "-wal")))
            versions.add(con.execute("SELECT max(version) FROM schema_version").fetchone()[0])
            recorded = dict(con.execute("SELECT id, api_call_count FROM sessions"))
            con.close()
        by_id = {row["id"]: row for row in rows}
        for sid, calls in recorded.items():
            main_loop = by_id[sid]["api_calls"] - by_id[sid]["unrecorded_calls"]
            if calls and main_loop:
                assert main_loop == calls, (path, sid)  # Hermes's own count of main-loop calls
        assert path.read_bytes() == main_before
    assert len(versions) >= 3, f"expected databases of three schema versions under {HERMES_DBS}"


# --- the report ------------------------------------------------------------------------------------------


def _report(arguments: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    from xshare.cli import main

    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_repeated_report_reads_a_database_again_only_when_it_changed(tmp_path: Path, capsys, monkeypatch):
    from xshare.agents.hermes import rows_cache

    path = build_standard(tmp_path / "a" / "state.db", 22)
    reads = []
    original = rows_cache.hermes.measure_hermes
    monkeypatch.setattr(rows_cache.hermes, "measure_hermes",
                        lambda *a, **k: reads.append(a[0]) or original(*a, **k))
    arguments = ["report", "--all", "--estimate", "--json", "--hermes-db", str(path)]
    first = json.loads(_report(arguments, capsys)[1])["groups"]
    assert len(reads) == 1
    assert json.loads(_report(arguments, capsys)[1])["groups"] == first and len(reads) == 1
    os.utime(path, ns=(1, path.stat().st_mtime_ns + 10**9))
    _report(arguments, capsys)
    assert len(reads) == 2
    windowed = [argument for argument in arguments if argument != "--all"]
    _report([*windowed, "--since-days", "3650"], capsys)  # rows read for all sessions cover any window
    assert len(reads) == 2
    os.utime(path, ns=(1, path.stat().st_mtime_ns + 10**9))
    _report([*windowed, "--since-days", "3650"], capsys)
    _report([*windowed, "--since-days", "30"], capsys)  # a shorter window: the rows cover it
    # ... but it is empty, so every session is read once more to say how many lie outside it (issue 21)
    assert len(reads) == 4
    _report(arguments, capsys)  # --all: that read covered every session
    assert len(reads) == 4


def test_report_reads_hermes_databases(tmp_path: Path, capsys: pytest.CaptureFixture,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = build_standard(tmp_path / "a" / "state.db", 22)
    missing = tmp_path / "nowhere" / "state.db"
    code, out, err = _report(["report", "--all", "--estimate", "--json", "--hermes-db", str(path),
                              "--hermes-db", str(missing)], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["sources"]["Hermes"] == "read"
    groups = report["groups"]
    # one per interactive source (cli, tui, desktop, local, telegram) and s-branch, s-names, s-image, s-nm
    assert groups["hermes/interactive"]["sessions"] == 9
    assert groups["hermes/subagent"]["sessions"] == 2 and groups["hermes/discord"]["sessions"] == 1
    assert "hermes/tui" not in groups
    assert str(missing) in err  # on stderr, and the other database still measured
    # the default: $HERMES_HOME; and the demo never reads this machine's Hermes sessions
    monkeypatch.setenv("HERMES_HOME", str(path.parent))
    code, out, _ = _report(["report", "--all", "--estimate"], capsys)
    assert code == 0 and "Hermes: read" in out and "hermes / interactive" in out
    code, out, _ = _report(["report", "--demo", "--estimate"], capsys)
    assert "hermes / " not in out


# --- the plugin's own logic, with a stand-in for Hermes's PluginContext ---------------------------------
# (tests/live/test_hermes_plugin.py runs it through Hermes's real loader where hermes-agent is installed)


class FakeContext:
    def __init__(self) -> None:
        self.hooks: dict[str, list] = {}
        self.commands: dict[str, object] = {}
        self.cli: dict[str, tuple] = {}

    def register_hook(self, name: str, callback) -> None:
        self.hooks.setdefault(name, []).append(callback)

    def register_command(self, name: str, handler, description: str = "", args_hint: str = "") -> None:
        self.commands[name] = handler

    def register_cli_command(self, name: str, help: str, setup_fn, handler_fn=None, description: str = "") -> None:
        self.cli[name] = (setup_fn, handler_fn)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from xshare.live import hermes_plugin

    home = tmp_path / "hermes-home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.delenv("HERMES_SESSION_ID", raising=False)
    for name in ("_live", "_by_task"):
        monkeypatch.setattr(hermes_plugin, name, {})
    monkeypatch.setattr(hermes_plugin, "_last_session", [None])
    db = HermesDb(home / "state.db", 22)
    db.session("p1", "cli", tokens=(3000, 6000, 1000, 50), api_calls=2)
    db.message("p1", "user", "where is the config read?")
    db.message("p1", "assistant", None, tool_calls=[call("read_file", {"path": "config.py"}, "c1")])
    db.message("p1", "tool", read_result("1|import os\n2|CONFIG = os.environ['X']"), tool_call_id="c1")
    db.message("p1", "assistant", "config.py line 2 reads it.")
    db.close()
    context = FakeContext()
    from xshare import hermes_plugin as entry  # the name Hermes loads, which gives the plugin the CLI

    hermes_plugin.register(context, entry.run_cli)
    return hermes_plugin, context, home


def test_plugin_registers_hooks_command_and_subcommand(plugin) -> None:
    module, context, _ = plugin
    assert {"post_api_request", "on_session_end", "on_session_start", "on_session_finalize"} <= set(context.hooks)
    assert set(context.commands) == {"xshare"} and set(context.cli) == {"xshare"}


def test_plugin_command_equals_the_report_row(plugin) -> None:
    module, context, home = plugin
    for _ in range(2):
        for callback in context.hooks["post_api_request"]:
            callback(session_id="p1", task_id="t1", usage={"prompt_tokens": 5000}, telemetry_schema_version=1)
    for callback in context.hooks["on_session_end"]:
        callback(session_id="p1", task_id="t1", completed=True)
    text = context.commands["xshare"]("")  # no id given: the last session the hooks saw
    rows, _ = measure_hermes([home / "state.db"], module._counter)
    row = next(row for row in rows if row["id"] == "p1")
    assert f"Exploration: {row['exploration_share_of_context']:.1%} of the recorded context" in text
    assert "API calls: 2;" in text and "prompt tokens billed: 10,000" in text
    assert "Seen live by the plugin: 2 main-loop calls, 10,000 prompt tokens" in text
    saved = json.loads((module.live_dir() / "p1.json").read_text())
    assert saved["calls"] == 2 and saved["prompt_tokens"] == 10000


def test_plugin_follows_a_rotation_and_the_session_env(plugin, monkeypatch: pytest.MonkeyPatch) -> None:
    module, context, _ = plugin
    post = context.hooks["post_api_request"][0]
    post(session_id="p1", task_id="t9", usage=None)
    post(session_id="p2", task_id="t9", usage={"input_tokens": 10, "cache_read_tokens": 5})  # no on_session_start
    assert module._live["p2"]["continues"] == "p1" and module._live["p2"]["prompt_tokens"] == 15
    monkeypatch.setenv("HERMES_SESSION_ID", "p1")
    assert module.current_session_id() == "p1"
    assert "nothing recorded" in context.commands["xshare"]("no-such-session")


def test_plugin_cli_runs_xshare(plugin, capsys: pytest.CaptureFixture) -> None:
    import argparse

    _, context, _ = plugin
    setup, handler = context.cli["xshare"]
    parser = argparse.ArgumentParser()
    setup(parser)
    assert handler(parser.parse_args(["classify", "rg foo src"])) == 0
    assert capsys.readouterr().out.startswith("exploration\t")


def test_plugin_before_the_first_message_names_the_tui_session(plugin, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes sets HERMES_SESSION_ID only when the agent starts; the TUI's backend knows its session before."""
    import types

    module, context, _ = plugin
    assert context.commands["xshare"]("") == "xshare: no session is active yet."  # no host, no hook, no env
    server = types.ModuleType("tui_gateway.server")
    server._sessions = {"ui-old": {"session_key": "older", "last_active": 10.0},
                        "ui-new": {"session_key": "p1", "last_active": 20.0},
                        "broken": "not a session"}
    monkeypatch.setitem(sys.modules, "tui_gateway.server", server)
    text = context.commands["xshare"]("")
    assert "no session is active" not in text and text.startswith("xshare: session p1 (interactive)")
    server._sessions = {"ui-1": {"session_key": "20260301_090000_aaaaaa", "last_active": 5.0}}
    assert "nothing recorded in state.db yet for session 20260301_090000_aaaaaa" in context.commands["xshare"]("")
    monkeypatch.setenv("HERMES_SESSION_ID", "p1")  # once the agent started, Hermes's own variable wins
    assert module.current_session_id() == "p1"


def test_plugin_shows_the_title_call(plugin) -> None:
    module, context, home = plugin
    db = sqlite3.connect(home / "state.db")
    db.execute("INSERT INTO session_model_usage (session_id, model, task, api_call_count, input_tokens, "
               "output_tokens) VALUES ('p1', 'aux/model', 'title_generation', 1, 420, 9)")
    db.commit()
    db.close()
    text = context.commands["xshare"]("p1")
    assert "API calls: 3;" in text and "prompt tokens billed: 10,420" in text
    assert "do not show: 1 (title_generation 1), 420 prompt tokens" in text


def test_plugin_command_shows_the_cache_figures_its_data_supports(plugin) -> None:
    """By kind from state.db; the last call and a rebuild (the HTML page's rule) from the live hooks."""
    module, context, home = plugin
    post = context.hooks["post_api_request"][0]
    post(session_id="p1", task_id="t1", model="m-1",
         usage={"input_tokens": 40, "cache_read_tokens": 0, "cache_write_tokens": 20_000, "output_tokens": 300})
    post(session_id="p1", task_id="t1", model="m-2",
         usage={"input_tokens": 30, "cache_read_tokens": 0, "cache_write_tokens": 20_500, "output_tokens": 120})
    text = context.commands["xshare"]("p1")
    rows, _ = measure_hermes([home / "state.db"], module._counter)
    usage = next(row for row in rows if row["id"] == "p1")["usage"]
    weighted = (usage["input"] + usage["cache_read"] * 0.1 + usage["cache_write_5m"] * 1.25
                + usage["cache_write_1h"] * 2 + usage["output"] * 5)
    assert f"Session by kind: {weighted:,.0f} weighted" in text
    assert "Last API call: 20,530 prompt tokens (cache read 0, cache write 20,500, fresh input 30, output 120)" in text
    assert "Cache rebuilds seen live: 1 (last: model switch, m-1 → m-2)" in text
    assert "/compact nudge: not available" in text
    del module._live["p1"]  # a new Hermes process: state.db's figures only
    assert "not seen live by the plugin" in context.commands["xshare"]("p1")
