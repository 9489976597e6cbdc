"""GitHub Copilot CLI through the registry with no other change: report (with dollars), sessions, session by id,
prefix and path, html, html --index and advice, on an invented session in its default place (~/.copilot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from copilot_fixtures import SESSION, copilot_session

from xshare.cli import main


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_command_reaches_it(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    path, want = copilot_session(isolated_home / ".copilot")
    code, out, err = run(capsys, "report", "--all", "--json", "--no-history")
    report = json.loads(out)
    group = report["groups"]["copilot/interactive"]
    assert code == 0 and report["sources"]["GitHub Copilot CLI"] == "read", err
    assert group["api_calls"] == want["calls"] and group["prompt_tokens_billed"] == want["prompt"]
    assert 0 < group["billed_tokens"]["exploration"] < want["prompt"]
    code, out, _ = run(capsys, "report", "--all", "--no-history")
    assert code == 0 and "GitHub Copilot CLI: read" in out and "In dollars" in out  # gpt-4.1 has a list price
    assert SESSION[:8] not in out and "orchard" not in out  # aggregates only

    code, out, _ = run(capsys, "sessions", "--all", "--json")
    listed = json.loads(out)["sessions"]
    assert code == 0 and [(entry["id"], entry["agent"], entry["api_calls"]) for entry in listed] == [
        (SESSION, "copilot", want["calls"])]

    rows = [json.loads(run(capsys, "session", given, "--json")[1]) for given in (SESSION, SESSION[:6], str(path))]
    assert rows[0] == rows[1] == rows[2] and rows[0]["prompt_tokens_billed"] == want["prompt"]

    page = tmp_path / "page.html"
    code, out, err = run(capsys, "html", SESSION[:6], "-o", str(page))
    assert code == 0 and out.strip() == str(page), err
    assert "GitHub Copilot CLI · " in page.read_text() and "Call 1: billed" in page.read_text()
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "html", "--index", "-o", str(index))
    assert code == 0 and SESSION in index.read_text(), err

    code, out, err = run(capsys, "advice")
    assert code == 0 and "view" in out and SESSION[:8] in out, err
