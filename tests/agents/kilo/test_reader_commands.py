"""Kilo CLI through every command, by the registry alone: report (its title requests named, its dollars),
sessions, session by id, prefix and path, html, html --index and advice, on an invented kilo.db."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kilo_fixtures import kilo_db

from xshare.cli import main

RATE = 0.6 / 1e6  # glm-4.5's input rate in xshare/measure/prices.json; its cache reads have no rate of their own


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, dict]:
    return kilo_db(tmp_path / "kilo" / "kilo.db", child=True)


def test_report_names_its_title_request_and_prices_it(data: tuple[Path, dict], capsys: pytest.CaptureFixture):
    path, want = data
    code, out, err = run(capsys, "report", "--all", "--json", "--kilo-db", str(path.parent))
    report = json.loads(out)
    group = report["groups"]["kilo/interactive"]
    assert code == 0 and report["sources"] == {"Kilo CLI": "read"} and not err.strip()
    assert (group["api_calls"], group["prompt_tokens_billed"]) == (want["ses_k001"]["calls"],
                                                                    want["ses_k001"]["prompt"])
    assert group["unseen_calls"] == {"kilo_title": 1} and group["unrecorded_calls"] == 0
    assert report["groups"]["kilo/subagent"]["api_calls"] == want["ses_k002"]["calls"]
    dollars = report["dollars"]
    assert dollars["sessions_priced"] == 2 and dollars["models_unpriced"] == {}
    billed = want["ses_k001"]["prompt"] + want["ses_k002"]["prompt"]
    assert dollars["prompt_dollars"] == pytest.approx(billed * RATE, abs=1e-4)  # said to four places
    code, out, _ = run(capsys, "report", "--all", "--kilo-db", str(path))
    assert "kilo/interactive: up to 1 title request Kilo CLI makes to name a new session, recorded nowhere" in out
    assert "ses_k00" not in out and "checkout" not in out  # aggregates only


def test_sessions_session_and_html(data: tuple[Path, dict], tmp_path: Path, capsys: pytest.CaptureFixture):
    path, want = data
    code, out, _ = run(capsys, "sessions", "--all", "--subagents", "--json", "--kilo-db", str(path))
    listed = {row["id"]: row for row in json.loads(out)["sessions"]}
    assert code == 0 and set(listed) == set(want)
    assert listed["ses_k001"]["api_calls"] == want["ses_k001"]["calls"]
    code, out, _ = run(capsys, "sessions", "--all", "--kilo-db", str(path))
    assert code == 0 and "ses_k001" in out and "shop" in out.splitlines()[2]  # its project folder's name
    by_id = json.loads(run(capsys, "session", "ses_k001", "--json", "--kilo-db", str(path))[1])
    assert by_id["prompt_tokens_billed"] == want["ses_k001"]["prompt"]
    code, out, _ = run(capsys, "session", "ses_k001", "--kilo-db", str(path))
    assert code == 0 and "Not in these figures: up to 1 title request Kilo CLI makes" in out
    code, _, err = run(capsys, "session", "ses_k00", "--kilo-db", str(path))  # a prefix naming two is refused
    assert code == 2 and "ses_k001 (kilo), ses_k002 (kilo)" in err
    child = json.loads(run(capsys, "session", "ses_k002", "--json", "--kilo-db", str(path))[1])
    assert child["parent"] == "ses_k001" and child["api_calls"] == want["ses_k002"]["calls"]
    single = tmp_path / "one" / "record.sqlite"  # a database of one session, named by its content alone
    single.parent.mkdir()
    shutil.copyfile(kilo_db(tmp_path / "single" / "kilo.db")[0], single)
    code, out, err = run(capsys, "session", str(single), "--json", "--kilo-db", str(path))
    assert code == 0 and json.loads(out)["agent"] == "kilo", err
    page = tmp_path / "kilo.html"
    code, out, _ = run(capsys, "html", "ses_k001", "-o", str(page), "--kilo-db", str(path))
    assert code == 0 and out.strip() == str(page)
    text = page.read_text()
    assert "Kilo CLI · interactive" in text and "Call 1: billed 9,000" in text
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "html", "--index", "-o", str(index), "--kilo-db", str(path))
    assert code == 0 and out.strip() == str(index), err
    assert "ses_k001" in index.read_text()
    for session_id in want:  # each session's page beside the index, the subagent's too
        linked = [page for page in index.parent.glob("*.html") if session_id in page.name]
        assert linked and "Kilo CLI · " in linked[0].read_text(), session_id


def test_advice_reads_it_in_detail(data: tuple[Path, dict], capsys: pytest.CaptureFixture):
    path, _ = data
    code, out, err = run(capsys, "advice", "--all", "--json", "--kilo-db", str(path))
    advice = json.loads(out)
    assert code == 0, err
    # fresh input 1, cache read 0.1, output 5: ses_k001 10,100 + 2,860 + 225, ses_k002 3,050 + 300 + 60
    assert advice["sessions"] == 2 and advice["weighted_bill"] == 16595
    exploring = next(habit for habit in advice["habits"] if habit["habit"] == "exploration")
    assert exploring["events"] == 3 and exploring["sessions_behind"] == ["ses_k001", "ses_k002"]
