"""pi through every command, by the registry alone: report (with dollars), sessions, session by id, prefix and
path, html, html --index and advice, on an invented session in its default place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_fixtures import PI_ID, PiSession, pi_session

from xshare.cli import main


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def priced_session(home: Path) -> tuple[Path, PiSession]:
    """The fixture's session on a model with a list price (pi records the provider's model id as it sent it)."""
    session = pi_session()
    for entry in session.entries:
        if isinstance(entry, dict) and isinstance(entry.get("message"), dict) and "model" in entry["message"]:
            entry["message"]["model"] = "claude-sonnet-4-5"
    return session.write(home / ".pi" / "agent" / "sessions"), session


def test_report_sessions_and_dollars(isolated_home: Path, capsys: pytest.CaptureFixture):
    _, session = priced_session(isolated_home)
    code, out, err = run(capsys, "report", "--all", "--json", "--estimate")
    report = json.loads(out)
    group = report["groups"]["pi/interactive"]
    assert code == 0 and report["sources"]["pi"] == "read", err
    assert group["sessions"] == 1 and group["api_calls"] == len(session.billed)
    assert group["prompt_tokens_billed"] == sum(call[0] for call in session.billed)
    assert PI_ID not in out and "parse" not in out  # aggregates only
    code, out, _ = run(capsys, "report", "--all", "--estimate")
    assert code == 0 and "pi / interactive" in out and "$" in out and "no session's model has a list price" not in out
    code, out, _ = run(capsys, "sessions", "--all", "--json", "--estimate")
    listed = [row for row in json.loads(out)["sessions"] if row["agent"] == "pi"]
    assert code == 0 and [row["id"] for row in listed] == [PI_ID]
    assert listed[0]["api_calls"] == len(session.billed) and listed[0]["project"] == "app"  # its header's cwd


def test_session_pages_index_and_advice(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    path, session = priced_session(isolated_home)
    for argument in (PI_ID, PI_ID[:8], str(path)):
        code, out, err = run(capsys, "session", argument, "--json", "--estimate")
        shown = json.loads(out)
        assert code == 0 and shown["id"] == PI_ID and shown["api_calls"] == len(session.billed), (argument, err)
    page = tmp_path / "pi.html"
    code, out, err = run(capsys, "html", PI_ID[:8], "-o", str(page), "--estimate")
    text = page.read_text()
    assert code == 0 and "pi · " in text and "Call 1: billed" in text and "Call 6: billed" in text, err
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "html", "--index", "-o", str(index), "--estimate")
    assert code == 0 and PI_ID in index.read_text(), err
    assert any(PI_ID in linked.name for linked in index.parent.glob("*.html"))
    code, out, err = run(capsys, "advice", "--json", "--estimate")
    assert code == 0, err
    assert json.loads(out)["sessions"] >= 1
