"""OpenCode 1.18: the title request no record holds is named, not counted; shapes it does not know are counted."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, opencode_db

from xshare.agents.common import sqlite, unseen
from xshare.agents.opencode import reader as opencode
from xshare.cli import main


def _titled(tmp_path: Path, title: str | None) -> Path:
    path, _ = opencode_db(tmp_path / "opencode" / "opencode.db")
    connection = sqlite3.connect(path)
    connection.execute("UPDATE session SET title = ?", (title,))  # the child too: it never asks for one
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize(("title", "want"), [
    ("Why the build is slow", 1),
    ("New session - 2026-06-09T10:00:00.000Z", 0),  # the default: no title request answered
    (None, 0),
])
def test_a_titled_session_says_its_title_request_is_not_counted(tmp_path: Path, title: str | None, want: int):
    path = _titled(tmp_path, title)
    problems: Counter = Counter()
    rows = {row["id"]: row for row in opencode.read(path, Counted(len, "chars"), problems)}
    assert unseen.counts(rows["ses_b001"].get(unseen.FIELD)).get(opencode.TITLE, 0) == want
    assert unseen.FIELD not in rows["ses_b002"]  # a task's child session gets no title request
    assert rows["ses_b001"]["api_calls"] == 3 and not problems  # the figures themselves do not change


def test_the_report_and_the_session_name_the_title_requests(tmp_path: Path, capsys: pytest.CaptureFixture):
    path = _titled(tmp_path, "Why the build is slow")
    assert main(["report", "--all", "--no-cache", "--opencode-db", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Calls you were billed for that no record holds" in text
    assert "opencode/interactive: up to 1 title request OpenCode makes to name a new session" in text
    assert main(["report", "--all", "--json", "--no-cache", "--opencode-db", str(path)]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["opencode/interactive"][unseen.FIELD] == {opencode.TITLE: 1}
    assert groups["opencode/interactive"]["unrecorded_calls"] == 0  # named, never added to the bill
    assert main(["session", "ses_b001", "--opencode-db", str(path)]) == 0
    assert "Not in these figures: up to 1 title request OpenCode makes" in capsys.readouterr().out


def _with_unknown_shapes(tmp_path: Path) -> tuple[Path, dict]:
    path, want = opencode_db(tmp_path / "opencode.db")
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO message VALUES ('msg_z001', 'ses_b001', 0, 0, ?)",
                       (json.dumps({"role": "narrator", "time": {"created": 1781000099000}}),))
    connection.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES "
                       "('prt_z001', 'msg_a001', 'ses_b001', 0, 0, ?)", (json.dumps({"type": "hologram"}),))
    connection.commit()
    connection.close()
    return path, want


def test_unknown_parts_and_roles_are_counted(tmp_path: Path):
    path, want = _with_unknown_shapes(tmp_path)
    problems: Counter = Counter()
    rows = {row["id"]: row for row in opencode.read(path, Counted(len, "chars"), problems)}
    assert problems == {opencode.UNKNOWN_PART: 1, opencode.UNKNOWN_ROLE: 1}
    assert rows["ses_b001"]["api_calls"] == want["ses_b001"]["calls"]


def test_a_read_done_again_counts_what_it_met_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A writer moved the database under the first read: it is read again, and only that read's problems count."""
    path, want = _with_unknown_shapes(tmp_path)
    opened = sqlite.open_database
    reads = []

    @contextlib.contextmanager
    def moved_once(*args, **kwargs):
        with opened(*args, **kwargs) as (connection, unchanged):
            reads.append(kwargs.get("careful"))
            yield connection, (lambda: False) if len(reads) == 1 else unchanged

    monkeypatch.setattr(sqlite, "open_database", moved_once)
    problems: Counter = Counter()
    rows = {row["id"]: row for row in opencode.read(path, Counted(len, "chars"), problems)}
    assert reads == [False, True]  # read again, carefully
    assert problems == {opencode.UNKNOWN_PART: 1, opencode.UNKNOWN_ROLE: 1}
    assert rows["ses_b001"]["api_calls"] == want["ses_b001"]["calls"]


def test_data_that_is_not_json_is_counted(tmp_path: Path):
    path, want = opencode_db(tmp_path / "opencode.db")
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO message VALUES ('msg_z002', 'ses_b001', 0, 0, '{\"role\": \"assi')")
    connection.execute("INSERT INTO part VALUES ('prt_z002', 'msg_a001', 'ses_b001', 0, 0, '[1, 2]')")
    connection.commit()
    connection.close()
    problems: Counter = Counter()
    rows = {row["id"]: row for row in opencode.read(path, Counted(len, "chars"), problems)}
    assert problems == {opencode.FORK.not_json: 2}
    assert rows["ses_b001"]["prompt_tokens_billed"] == want["ses_b001"]["prompt"]
