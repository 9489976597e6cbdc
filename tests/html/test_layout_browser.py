"""The pages fit, measured in a real headless Chromium (issue 31, finding 5): at 1280 and 1600 pixels and on
a 390-pixel phone (emulated over the DevTools pipe: tests/support/browser_layout.py), the page never scrolls
sideways, every table's right edge is within the window (a table wider than its box is cut there), every
chart draws all its calls (the index's: all its weeks), and the index's rows have no tall blank gaps.
Pages: the demo's index and richest session, and an invented 132-call session with long names. Skipped
when no chromium binary is installed (`apt-get install chromium`)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from agent_fixtures import gemini_messages
from browser_layout import Browser

from tests.html.test_browser import CHROMIUM
from xshare.agents.claude_code.transcript import discover
from xshare.cli import main
from xshare.demo import TranscriptWriter, write_demo_corpus
from xshare.html import write as xhtml

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")
WIDTHS = [(1280, False), (1600, False), (390, True)]  # True: a phone (mobile viewport, device scale 3)
LONG_ID = "refactor-the-payments-module-and-its-settlement-reports-2026-11-20"
LONG_MODEL = "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-Instruct-2026-11"
CALLS = 132
TALLEST_ROW = 3.2  # lines: an id or a habit may wrap once or twice, no row is a tall blank gap


def long_names_session(projects: Path) -> Path:
    """An invented session of CALLS API calls with long names: its id, model, paths and commands."""
    cwd = "/home/dev/a-monorepo-with-a-rather-long-name/services/payments-settlement-and-reporting"
    writer = TranscriptWriter(LONG_ID, cwd, start=datetime(2026, 11, 20, 9, tzinfo=timezone.utc), model=LONG_MODEL)
    body = "\n".join(f"def settle_{i}(batch):\n    return ledger.post(batch, account='acct-{i}')" for i in range(40))
    for n in range(CALLS):
        if n % 30 == 0:
            writer.user(f"Step {n}: carry on with the settlement module")
        if n % 2:
            path = f"{cwd}/src/payments/settlement/reporting/very_long_module_name_number_{n}_of_the_batch.py"
            writer.read_result(writer.use("Read", {"file_path": path}), path, body[: 400 + 40 * (n % 30)])
        else:
            command = f"grep -rn 'settle_{n}' src/payments/settlement/reporting/ --include='*.py' | head -n 50"
            writer.bash_result(writer.use("Bash", {"command": command}), f"src/payments/x_{n}.py:{n}: settle_{n}")
    return writer.write(projects / "-home-dev-a-monorepo-with-a-rather-long-name" / f"{LONG_ID}.jsonl")


def weekly_sessions(projects: Path, weeks: int = 31) -> None:
    """A short session a week for `weeks` weeks (as the corpus's index has): a chart with many periods."""
    for week in range(weeks):
        writer = TranscriptWriter(f"5e55{week:04d}-0000-4000-8000-000000000000", "/home/dev/weekly",
                                  start=datetime(2026, 1, 5, 9, tzinfo=timezone.utc) + timedelta(weeks=week))
        writer.user(f"Week {week}: what changed?")
        writer.read_result(writer.use("Read", {"file_path": "/home/dev/weekly/CHANGES.md"}), "/home/dev/weekly/"
                           "CHANGES.md", "\n".join(f"- change {n}" for n in range(20 + week)))
        writer.write(projects / "-home-dev-weekly" / f"5e55{week:04d}-0000-4000-8000-000000000000.jsonl")


def gemini_session(home: Path) -> None:
    """A Gemini CLI session (agent_fixtures's) whose search runs as `run_shell_command`: a tool name of 17
    characters with no place to break, as the corpus's Gemini sessions have."""
    messages, _ = gemini_messages()
    for call in messages[1]["toolCalls"]:
        if call["name"] == "grep_search":
            call["name"], call["args"] = "run_shell_command", {"command": "grep -rn retry src/"}
            call["result"][0]["functionResponse"]["name"] = "run_shell_command"
    document = {"sessionId": "3c2a1b0d-aaaa-4bbb-8ccc-000000000001", "projectHash": "5f" * 32,
                "startTime": "2026-02-10T08:59:58.000Z", "lastUpdated": "2026-02-10T09:00:20.000Z",
                "messages": messages}
    path = home / "tmp" / ("5f" * 32) / "chats" / "session-2026-02-10T08-59-3c2a1b0d.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The index (chart, habits, $ column) over the demo corpus and the long session, and two session pages."""
    tmp = tmp_path_factory.mktemp("layout")
    root = write_demo_corpus(tmp / "claude")  # its projects folder
    long_names_session(root)
    weekly_sessions(root)
    gemini_session(tmp / "gemini")
    (tmp / "site").mkdir()
    with pytest.MonkeyPatch.context() as patch:  # conftest's isolated home is per test: this is per module
        for name, value in (("HOME", tmp / "user"), ("XSHARE_HOME", tmp / "home"), ("XSHARE_WORKER", "0"),
                            ("XSHARE_NO_BACKGROUND", "1"), ("TIKTOKEN_CACHE_DIR", tmp / "tiktoken")):
            patch.setenv(name, str(value))
        for name in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XSHARE_VOCAB"):
            patch.delenv(name, raising=False)
        assert main(["html", "--index", "--claude-root", str(root), "--gemini-home", str(tmp / "gemini"), "-o",
                     str(tmp / "site" / "index.html")]) == 0
    files = discover([root])
    richest = max((f for f in files if f.source == "interactive" and f.session_id != LONG_ID),
                  key=lambda f: f.path.stat().st_size)
    site = tmp / "site"
    gemini = next(page for page in site.glob("*.html") if "run_shell_command" in page.read_text(encoding="utf-8"))
    return {"index": site / "index.html", "demo": site / xhtml.page_name(richest.session_id),
            "long": site / xhtml.page_name(LONG_ID), "gemini": gemini}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    opened = Browser(tmp_path_factory.mktemp("chromium"))
    yield opened
    opened.close()


def test_the_pages_were_written(pages):
    assert all(page.is_file() for page in pages.values())
    assert "132 calls" in pages["long"].read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["index", "demo", "long", "gemini"])
@pytest.mark.parametrize(("width", "phone"), WIDTHS)
def test_nothing_sticks_out_and_every_chart_draws_all_it_has(pages, browser, name, width, phone):
    layout = browser.measure(pages[name], width, phone)
    assert layout["window"] == width
    assert layout["page"] <= width, layout["wide"]  # no sideways scroll of the page
    for table in layout["tables"]:  # nor cut at its box's edge or the window's
        assert table["left"] >= -1 and table["right"] <= width + 1 and not table["boxed"], table
    assert layout["charts"]
    for chart in layout["charts"]:
        assert chart["shown"] == chart["total"] > 0, chart
        assert chart["overlaps"] == [], chart  # its labels legible, none drawn over another
        assert chart["left"] >= -1 and chart["right"] <= width + 1, chart
    if name == "long":
        assert [chart["total"] for chart in layout["charts"]] == [CALLS]


@pytest.mark.parametrize(("width", "phone"), WIDTHS[:2])
def test_the_indexs_rows_have_no_tall_blank_gaps(pages, browser, width, phone):
    tables = {table["name"].split()[-1]: table for table in browser.measure(pages["index"], width, phone)["tables"]}
    assert tables["table.sessions"]["tallest"] <= TALLEST_ROW, tables["table.sessions"]


def test_the_measure_catches_a_cut_table_and_a_cut_chart(pages, browser):
    source = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", pages["long"].read_text(encoding="utf-8"))
    wide = pages["long"].with_name("wide.html")  # without its policy, so that style attributes apply
    wide.write_text(source.replace('<section id="exploration">', '<section id="exploration"><div class="scroll">'
                                   '<table><tr><td style="min-width:900px">too wide</td></tr></table></div>', 1)
                    .replace('<svg class="chart"', '<svg style="min-width:2000px" class="chart"', 1), encoding="utf-8")
    layout = browser.measure(wide, 390, phone=True)
    assert any(table["right"] > 391 for table in layout["tables"])
    assert layout["charts"][0]["shown"] < CALLS
