"""Kilo CLI's kilo.db: a call per step-finish part, input excluding cache reads, a child session, the title
request named, its tools classified, unknown shapes counted, and its file told from OpenCode's."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, opencode_db
from kilo_fixtures import DEFAULT_TITLE, kilo_db

from xshare.agents.common import unseen
from xshare.agents.kilo import reader as kilo
from xshare.agents.kilo.recognise import recognises
from xshare.agents.kilo.tools import TOOLS
from xshare.measure.tool_tables import explain_tool


def _read(path: Path, ledgers: dict | None = None) -> tuple[dict[str, dict], Counter]:
    problems: Counter = Counter()
    rows = kilo.read(path, Counted(len, "chars"), problems, ledgers)
    return {row["id"]: row for row in rows}, problems


def test_steps_are_calls_and_cache_reads_are_outside_input(tmp_path: Path):
    path, want = kilo_db(tmp_path / "kilo" / "kilo.db", child=True)
    assert kilo.discover([tmp_path / "kilo"]) == [path]
    ledgers: dict = {}
    rows, problems = _read(path, ledgers)
    assert set(rows) == set(want) and not problems
    for session_id, expected in want.items():
        row = rows[session_id]
        assert (row["api_calls"], row["prompt_tokens_billed"], row["usage"]["cache_read"]) == \
            (expected["calls"], expected["prompt"], expected["cache_read"])
    main_row, child = rows["ses_k001"], rows["ses_k002"]
    assert (main_row["agent"], main_row["source"], main_row["model"]) == ("kilo", "interactive", "glm-4.5")
    assert main_row["usage"]["output"] == 10 + 12 + 20 + 3
    assert child["source"] == "subagent" and child["parent"] == "ses_k001"
    log = ledgers["ses_k001"].call_log
    # the read's result is present from the second call, the grep run's (read-only: exploration) from the third
    assert log[0]["present"]["exploration"] == 0 < log[1]["present"]["exploration"] < log[2]["present"]["exploration"]
    assert main_row["billed_tokens"]["edit"] > 0 and child["billed_tokens"]["exploration"] > 0


def test_the_title_request_is_named_for_every_top_level_session(tmp_path: Path):
    titled, _ = _read(kilo_db(tmp_path / "a" / "kilo.db", child=True)[0])
    assert unseen.counts(titled["ses_k001"].get(unseen.FIELD)) == {kilo.TITLE: 1}
    assert unseen.FIELD not in titled["ses_k002"]  # a child session is not named by a request
    # `kilo run` may exit before storing the title it was sent: a default title still names up to one
    untitled, _ = _read(kilo_db(tmp_path / "b" / "kilo.db", title=DEFAULT_TITLE)[0])
    assert unseen.counts(untitled["ses_k001"].get(unseen.FIELD)) == {kilo.TITLE: 1}


def test_unknown_shapes_and_bad_data_are_counted_not_read_as_zero(tmp_path: Path):
    path, want = kilo_db(tmp_path / "kilo.db")
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO message VALUES ('msg_k009', 'ses_k001', 0, 0, ?)",
                       (json.dumps({"role": "narrator", "time": {"created": 1782896409000}}),))
    connection.execute("INSERT INTO part VALUES ('prt_k001_900', 'msg_k001', 'ses_k001', 0, 0, ?)",
                       (json.dumps({"type": "board-note"}),))
    connection.execute("INSERT INTO part VALUES ('prt_k001_901', 'msg_k001', 'ses_k001', 0, 0, '{\"type\": \"te')")
    connection.commit()
    connection.close()
    rows, problems = _read(path)
    assert problems == {kilo.FORK.unknown_part: 1, kilo.FORK.unknown_role: 1, kilo.FORK.not_json: 1}
    assert "Kilo CLI" in kilo.FORK.unknown_part
    assert rows["ses_k001"]["api_calls"] == want["ses_k001"]["calls"]
    assert rows["ses_k001"]["prompt_tokens_billed"] == want["ses_k001"]["prompt"]


def test_not_a_kilo_database(tmp_path: Path):
    junk = tmp_path / "kilo.db"
    junk.write_bytes(b"not sqlite at all")
    rows, problems = _read(junk)
    assert rows == {} and sum(problems.values()) == 1
    opencode, _ = opencode_db(tmp_path / "opencode.db")
    assert not recognises(opencode) and not recognises(junk)
    assert recognises(kilo_db(tmp_path / "k" / "kilo.db")[0])


def test_discovery_takes_kilo_and_channel_databases_only(tmp_path: Path):
    data = tmp_path / "kilo"
    kilo_db(data / "kilo.db")
    kilo_db(data / "kilo-nightly.db")
    opencode_db(data / "opencode.db")
    assert [path.name for path in kilo.discover([data])] == ["kilo-nightly.db", "kilo.db"]
    assert kilo.discover([data / "kilo.db"]) == [data / "kilo.db"]


@pytest.mark.parametrize("name,args,want", [
    ("read", {"filePath": "a.py"}, "exploration"), ("glob", {"pattern": "*.py"}, "exploration"),
    ("grep", {"pattern": "x"}, "exploration"), ("bash", {"command": "grep -n x a.py"}, "exploration"),
    ("bash", {"command": "touch done.flag"}, "shell"), ("edit", {"filePath": "a.py"}, "edit"),
    ("write", {"filePath": "a.py"}, "edit"), ("webfetch", {"url": "https://example.com"}, "web"),
    ("task", {"prompt": "look"}, "other"), ("kilo_local_recall", {}, "other"),
])
def test_kilo_tools(name: str, args: dict, want: str):
    assert explain_tool(TOOLS, name, args).category == want
