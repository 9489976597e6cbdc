"""Issue 29, what reaches a page: ids that would share a page name, an id too long for a file name, and
ids holding bidi overrides and NUL, on the index and its per-week lists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from agent_fixtures import codex_session

from tests.commands.test_cli import run
from xshare.state.paths import LONGEST_NAME, file_name

SAFE_NAME = re.compile(r"[A-Za-z0-9._~-]+")
ALIKE = [("team/a1", "team_a1"), ("отчёт", "ошибк"), ("a:b", "a;b"), ("..", "_."), ("", "~"), ("x" * 300, "x" * 301),
         ("x" * 300, "x" * 299 + "y"), ("\ud800", "\ud801")]


@pytest.mark.parametrize(("one", "other"), ALIKE)
def test_ids_that_sanitise_alike_keep_names_of_their_own(one: str, other: str):
    assert file_name(one) != file_name(other)
    for name in (file_name(one), file_name(other)):
        assert SAFE_NAME.fullmatch(name) and not name.startswith(".") and len(name) <= LONGEST_NAME


def test_a_plain_id_is_its_own_name():
    for session_id in ("0b7f9e0c-1a2b-4c3d-8e9f-a0b1c2d3e4f5", "20260301_100000_abcdef", "ses_b001"):
        assert file_name(session_id) == session_id


def codex_with_id(home: Path, number: int, session_id: str) -> Path:
    """An invented Codex rollout whose session_meta holds `session_id` (the file is named plainly)."""
    path, _ = codex_session(home, f"0190aaaa-1111-7000-8000-00000000000{number}")
    lines = path.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["id"] = session_id
    meta["timestamp"] = meta["payload"]["timestamp"] = f"2026-03-0{number}T10:00:00.000Z"
    path.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    return path


HOSTILE = {"team/a1": "team/a1", "team_a1": "team_a1", "отчёт": "отчёт", "ошибк": "ошибк", "long": "c" * 300,
           "bidi": "evil\u202e\u0000txt.exe"}


def test_html_index_gives_every_id_a_page_of_its_own(isolated_home: Path, tmp_path: Path, capsys):
    home = isolated_home / ".codex"
    for number, session_id in enumerate(HOSTILE.values(), start=1):
        codex_with_id(home, number, session_id)
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "html", "--index", "-o", str(index))
    assert code == 0 and out.strip() == str(index), err
    pages = {page.name for page in index.parent.glob("*.html")} - {"index.html"}
    assert len(pages) == len(HOSTILE)  # six ids, six pages: none overwrote another
    text = index.read_text()
    rows = re.findall(r'<tr class="[^"]*" data-session="([^"]*)"><td><code><a href="([^"]+)"', text)
    assert len(rows) == len(HOSTILE) and {href for _, href in rows} == pages
    for shown, href in rows:  # each row links the page of its own session
        assert f'<p class="sub">Session <code>{shown}</code></p>' in (index.parent / href).read_text(), href


def test_the_index_shows_bidi_overrides_and_nul_escaped(isolated_home: Path, tmp_path: Path, capsys):
    codex_with_id(isolated_home / ".codex", 1, HOSTILE["bidi"])
    codex_with_id(isolated_home / ".codex", 2, "plain-session")
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, _, err = run(capsys, "html", "--index", "-o", str(index))
    assert code == 0, err
    text = index.read_text()
    assert "\u202e" not in text and "\x00" not in text
    week = text.split('<details id="period-')[1].split("</details>")[0]  # the per-week list of its sessions
    assert "evil[U+202E]" in week
    assert all("\u202e" not in page.read_text() and "\x00" not in page.read_text()
               for page in index.parent.glob("*.html"))
