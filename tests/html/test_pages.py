"""The per-session HTML summary: figures equal the session row, escaping, size, index, defaults, Hermes."""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import re
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
from claude_pages import claude_data, claude_looking, write_claude_page  # tests/ is on sys.path

from xshare.agents.claude_code.many import measure_one
from xshare.agents.claude_code.pages import children_by_parent, most_recent
from xshare.agents.claude_code.transcript import describe, discover
from xshare.agents.common.counting import LazyCounter
from xshare.agents.table import names_listed
from xshare.commands import html as html_command
from xshare.demo import TranscriptWriter, text, write_demo_corpus
from xshare.html import analysis as html_analysis
from xshare.html import write as xhtml
from xshare.html.cells import CSS, MAX_COLUMNS, SCRIPT
from xshare.html.session_page import render_session
from xshare.measure import tokens
from xshare.measure.ledger import CATEGORIES, SPREAD, USAGE_FIELDS, Ledger, session_row

START = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)
PROJECT = "-home-dev-app"


class Page(HTMLParser):
    """What a page holds: its <data> figures, every tag and attribute, script and style bodies, its text."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.figures: dict[str, str] = {}
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._open: str | None = None
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        values = dict(attrs)
        if tag == "data" and "id" in values:
            self.figures[values["id"]] = values.get("value") or ""
        if tag in ("script", "style"):
            self._open = tag
            (self.scripts if tag == "script" else self.styles).append("")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._open = None

    def handle_data(self, data):
        if self._open == "script":
            self.scripts[-1] += data
        elif self._open == "style":
            self.styles[-1] += data
        else:
            self.text.append(data)

    def number(self, name: str) -> float | int | None:
        value = self.figures[name]
        return None if value == "" else json.loads(value)

    def attr(self, tag: str, name: str) -> list[str]:
        return [value or "" for t, attrs in self.tags if t == tag for key, value in attrs if key == name]


def read_page(path: Path) -> Page:
    return Page(path.read_bytes().decode("utf-8"))  # strict: a lone surrogate would not encode


def choice() -> tokens.TokenizerChoice:
    return tokens.choose()  # what `xshare session` uses: the vocabulary packaged with xshare


def assert_page_equals_row(page: Page, row: dict) -> None:
    for name in ("api_calls", "prompt_tokens_billed", "context_tokens", "compactions", "trimmed_messages",
                 "exploration_share_of_context", "exploration_share_of_prompt", "recorded_over_billed"):
        assert page.number(f"row-{name}") == row[name], name
    for category in CATEGORIES:
        assert page.number(f"billed-{category}") == row["billed_tokens"][category], category
        if category not in ("overhead", "inherited"):  # neither has a first time: no file holds them
            assert page.number(f"first-{category}") == row["first_time_tokens"][category], category
    if any(row["usage"].values()):
        for kind in USAGE_FIELDS:
            assert page.number(f"usage-{kind}") == row["usage"][kind], kind


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def write_ascii(writer: TranscriptWriter, path: Path) -> Path:
    """JSON lines with every non-ASCII character escaped, so lone surrogates survive as \\ud800."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in writer.rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="ascii")
    return path


# --- the figures ---------------------------------------------------------------------------------


def test_every_demo_page_equals_the_session_row(demo_root: Path, tmp_path: Path):
    files = discover([demo_root])
    assert len(files) >= 8
    for file in files:
        row, _ = measure_one(file, LazyCounter(choice()))
        path = write_claude_page(file, choice(), tmp_path / "out" / xhtml.page_name(file.session_id))
        page = read_page(path)
        assert_page_equals_row(page, row)
        assert page.figures["row-exploration_share_of_context"] == repr(row["exploration_share_of_context"])


def test_the_chart_draws_exactly_the_billed_context(demo_root: Path):
    """Per call, present categories plus overhead; summed over calls that is the row's context."""
    for file in discover([demo_root]):
        data = claude_data(file, choice())
        drawn = sum(sum(call["present"].values()) + call["overhead"] for call in data.calls)
        assert drawn == data.row["context_tokens"]
        assert sum(call["prompt"] for call in data.calls) == data.row["prompt_tokens_billed"]


def test_the_richest_demo_session_shows_compaction_rebuilds_and_subagents(demo_root: Path, tmp_path: Path):
    files = discover([demo_root])
    file = max((f for f in files if f.source == "interactive"), key=lambda f: f.path.stat().st_size)
    path = write_claude_page(file, choice(), tmp_path / "page.html")
    page = read_page(path)
    body = path.read_text(encoding="utf-8")
    assert page.number("row-compactions") == 1 and 'class="mk-c"' in body and 'class="mk-t"' in body
    assert page.number("rebuilds-compaction") >= 1 and page.number("rebuilds-idle") >= 1
    assert "paid off" in body and 'id="now"' in body
    links = [href for href in page.attr("a", "href") if href.startswith(file.session_id)]
    assert links and all((tmp_path / href).is_file() for href in links)  # the subagents' own pages
    sub = read_page(tmp_path / links[0])
    assert "page.html" in sub.attr("a", "href")  # and back to the parent
    assert "data-na" not in body  # Claude Code data supports every section


# --- analysis ------------------------------------------------------------------------------------


def _call(read: int, write: int, *, minute: float, model: str = "m", one_hour: int = 0, fresh: int = 3) -> dict:
    usage = {"input": fresh, "cache_read": read, "cache_write_5m": write, "cache_write_1h": one_hour, "output": 9}
    when = (START + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    prompt = fresh + read + write + one_hour
    return {"prompt": prompt, "present": {"conversation": prompt // 2}, "overhead": prompt // 4, "usage": usage,
            "model": model, "time": when, "thread": "main"}


def _data(calls: list[dict], markers: list[dict] | None = None) -> html_analysis.SessionData:
    return html_analysis.SessionData(row={}, calls=calls, markers=markers or [], carried=[])


def test_rebuild_causes_are_read_from_the_data():
    calls = [
        _call(0, 20_000, minute=0),  # cold start: not a rebuild
        _call(20_000, 500, minute=1),
        _call(20_400, 300, minute=1.5),  # parallel: missed the previous write, under 5%: not a rebuild
        _call(8_000, 15_000, minute=2),  # a prompt was typed: turn boundary
        _call(8_000, 16_000, minute=20),  # 18 minutes idle (and a prompt): idle wins
        _call(0, 25_000, minute=21, model="other-model"),  # a model switch
        _call(5_000, 6_000, minute=22, model="other-model"),  # a compaction
        _call(11_000, 200, minute=23, model="other-model"),
        _call(2_000, 9_500, minute=24, model="other-model"),  # nothing explains it
    ]
    markers = [{"kind": "prompt", "value": None, "at": 3}, {"kind": "prompt", "value": None, "at": 4},
               {"kind": "compaction", "value": None, "at": 6}]
    found = {r.call: r for r in html_analysis.find_rebuilds(_data(calls, markers))}
    assert sorted(found) == [3, 4, 5, 6, 8]
    assert [found[i].cause for i in (3, 4, 5, 6, 8)] == ["turn boundary", "idle", "model switch", "compaction",
                                                         "other"]
    assert found[4].also == ["turn boundary"]
    assert found[3].expected == 20_700 and found[3].read == 8_000 and found[3].rewritten == 12_700
    assert html_analysis.rebuild_weight(found[3]) == pytest.approx(12_700 * (1.25 - 0.1))


def test_a_rebuild_after_a_30_minute_gap_is_idle_even_on_the_1_hour_cache():
    """A rebuild after 5-60 minutes shows what it re-wrote had expired: idle is its likely cause, not the prompt
    typed after the gap (issue 30: such gaps rebuilt 36% of the time on the 1-hour cache, under a minute 4%)."""
    calls = [_call(0, 0, minute=0, one_hour=30_000), _call(10_000, 0, minute=30, one_hour=21_000),
             _call(0, 0, minute=95, one_hour=32_000), _call(32_000, 0, minute=96, one_hour=900)]
    markers = [{"kind": "prompt", "value": None, "at": 1}]
    found = html_analysis.find_rebuilds(_data(calls, markers))
    assert [(r.call, r.cause, r.also) for r in found] == [(1, "idle", ["turn boundary"]), (2, "idle", [])]
    assert "5-minute" in found[0].detail and "1 h" in found[1].detail
    assert [r.gap for r in found] == [30 * 60, 65 * 60] and found[1].rewritten_1h == found[1].rewritten


def test_compaction_card_follows_the_essay_arithmetic():
    """143k before, 71k after, 37k written at the 1-hour rate: ~10 calls to break even; 26 followed."""
    card = html_analysis.Compaction(1, 10, None, before=143_000, after=71_000, write_5m=0, write_1h=37_000, followed=26)
    money = html_analysis.compaction_economics(card)
    assert money["cost"] == 74_000 and money["saving"] == pytest.approx(7_200)
    assert money["break_even"] == 11 and money["paid_off"] is True
    grown = html_analysis.Compaction(2, 10, None, before=50_000, after=52_000, write_5m=9_000, write_1h=0, followed=3)
    assert html_analysis.compaction_economics(grown) == {"cost": 11_250, "saving": -200.0, "break_even": None,
                                                 "paid_off": None}


def test_a_compaction_now_is_priced_from_this_session():
    calls = [_call(0, 20_000, minute=0), _call(20_000, 30_000, minute=1, one_hour=0)]
    calls[-1]["present"] = {"conversation": 4_000, "exploration": 30_000}
    card, basis = html_analysis.compaction_now(_data(calls), [])
    assert basis == "floor" and card.after == calls[-1]["overhead"] + 4_000 and card.before == calls[-1]["prompt"]
    assert card.write_5m == card.after and card.write_1h == 0
    measured = html_analysis.Compaction(1, 1, None, before=60_000, after=9_000, write_5m=9_000, write_1h=0, followed=0)
    card, basis = html_analysis.compaction_now(_data(calls), [measured])
    assert basis == "measured" and card.after == 9_000
    assert html_analysis.compaction_now(html_analysis.SessionData({}, calls, [], [], per_call_usage=False), []) is None


def test_what_a_summary_or_a_narrower_read_removes():
    data = _data([])
    data.carried = [["Read: /a.py", "exploration", 3_000, 0, 10], ["Grep: x", "exploration", 200, 2, 5],
                    ["Bash: pytest", "shell", 9_000, 0, 10], ["Read: /late.py", "exploration", 4_000, 10, 10]]
    costs = html_analysis.exploration_costs(data)
    assert costs["carried"] == 30_000 + 600 and costs["results"] == 3
    assert costs["summary"] == 2_500 * 9  # 200-token result: nothing to summarise
    assert costs["narrow"] == 2_000 * 10
    assert costs["both"] == 30_000 - (1_000 + 500 * 9)
    assert [(r.tool, r.target, r.billed) for r in costs["top"][:2]] == [("Read", "/a.py", 30_000), ("Grep", "x", 600)]


# --- escaping ------------------------------------------------------------------------------------


def hostile_transcript(tmp_path: Path) -> Path:
    writer = TranscriptWriter("hostile", "/home/dev/app", start=START, model="claude-opus-4-6")
    writer.user('<script>alert("prompt")</script></style><!-- \ud800')
    path = "/home/dev/app/\u202egnp.exe\x00<script>alert(1)</script>.py"
    tid = writer.use("Read", {"file_path": path})
    writer.read_result(tid, path, '<script>alert(2)</script>\n</style><a href="javascript:alert(3)">x</a>\n\udfff')
    # (a lone surrogate inside a tool call's input stops the reader itself: see the report, not this page)
    command = "cat '</style><script>alert(4)</script>' | grep \"javascript:alert(5)\" \u2066x\u2069"
    tid = writer.use("Bash", {"command": command})
    writer.bash_result(tid, "<img src=x onerror=alert(6)>\n" * 40)
    tid = writer.use("Grep", {"pattern": '"><svg onload=alert(7)>', "path": "/home/dev/app"})
    writer.grep_result(tid, {"/home/dev/app/a.py": [(1, "<iframe src=javascript:alert(8)>")]}, mode="content")
    writer.call(text("done"), model='<img src=x onerror="alert(9)">\u202e\ud800')
    name = 'hostile<b>&"\'.jsonl'
    return write_ascii(writer, tmp_path / "claude" / "projects" / PROJECT / name)


def test_hostile_transcript_text_shows_as_text(tmp_path: Path):
    source = hostile_transcript(tmp_path)
    file = describe(source)
    out = write_claude_page(file, choice(), tmp_path / "out" / xhtml.page_name(file.session_id))
    assert re.fullmatch(r"[A-Za-z0-9._~-]+\.html", out.name)
    raw = out.read_bytes().decode("utf-8")
    page = Page(raw)
    assert page.scripts == [SCRIPT] and page.styles == [CSS]
    assert [tag for tag, _ in page.tags if tag in ("img", "iframe", "a") and tag != "a"] == []
    assert not [key for _, attrs in page.tags for key, _ in attrs if key.lower().startswith("on")]
    assert all(href.endswith(".html") for href in page.attr("a", "href"))
    for bad in ("\u202e", "\u2066", "\x00", "<script>alert", "<img", "<svg onload", "<!--"):
        assert bad not in raw, bad
    shown = "".join(page.text)
    assert "<script>alert(1)</script>" in shown and "[U+202E]" in shown and "[U+0000]" in shown
    assert "[U+D800]" in shown and "[U+2066]" in shown and '<img src=x onerror="alert(9)">' in shown
    assert 'hostile<b>&"\'' in shown  # the session id, from the file name


def test_odd_characters_become_visible():
    from xshare.html.cells import esc as _t

    assert _t("a\x00b\u202ec\ud83d") == "a[U+0000]b[U+202E]c[U+D83D]"
    assert _t("<a href='javascript:x'>") == "&lt;a href=&#x27;javascript:x&#x27;&gt;"
    assert _t("tab\tand\nnewline") == "tab\tand\nnewline"


def test_the_policy_allows_exactly_the_page_style_and_script(demo_root: Path, tmp_path: Path):
    file = next(f for f in discover([demo_root]) if f.source == "interactive")
    raw = write_claude_page(file, choice(), tmp_path / "p.html").read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', raw).group(1)
    digest = {name: base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
              for name, body in (("style", CSS), ("script", SCRIPT))}
    assert "default-src 'none'" in policy and "unsafe" not in policy
    assert f"style-src 'sha256-{digest['style']}'" in policy and f"script-src 'sha256-{digest['script']}'" in policy
    assert ' style="' not in raw  # inline style attributes would need 'unsafe-inline'


# --- size ----------------------------------------------------------------------------------------


def long_session(root: Path, calls: int = 1_000, filler: int = 60) -> Path:
    """An invented session of `calls` API calls: reads, shell, prompts, idle gaps and compactions."""
    writer = TranscriptWriter("long-session", "/home/dev/app", start=START, model="claude-opus-4-6")
    lines = [f"def handler_{i}(request):\n    return render(request, 'page_{i}.html', {{'n': {i}}})"
             for i in range(filler)]
    for n in range(calls):
        if n % 40 == 0:
            writer.user(f"Step {n}: carry on with the next module")
        if n % 250 == 249:
            writer.compact(f"Summary of the work up to step {n}.")
        if n % 97 == 0:
            writer.idle(9)
        if n % 3:
            path = f"/home/dev/app/module_{n}.py"
            tid = writer.use("Read", {"file_path": path})
            writer.read_result(tid, path, "\n".join(lines[: 10 + n % filler]) + f"\n# {n}\n")
        else:
            tid = writer.use("Bash", {"command": f"pytest -q tests/test_{n}.py"})
            writer.bash_result(tid, f"{n % 7} passed in 0.{n % 10}s")
    return writer.write(root / "projects" / PROJECT / "long-session.jsonl")


def test_a_1000_call_session_is_bucketed_and_small(tmp_path: Path):
    file = describe(long_session(tmp_path / "claude"))
    out = write_claude_page(file, choice(), tmp_path / "long.html")
    page = read_page(out)
    assert page.number("row-api_calls") == 1_000
    columns = int(re.search(r'data-columns="(\d+)"', out.read_text(encoding="utf-8")).group(1))
    assert columns <= MAX_COLUMNS and columns == 1_000 // 4
    assert out.stat().st_size < 2 * 1024 * 1024
    assert page.number("row-compactions") == 4


# --- the index, the default session, the command ---------------------------------------------------


def test_index_lists_every_session_and_links_its_page(demo_root: Path, tmp_path: Path):
    index, written = xhtml.write_index(claude_looking([str(demo_root)], choice()))
    assert index == xhtml.html_dir() / "index.html"
    files = discover([demo_root])
    rows = {f.session_id: measure_one(f, LazyCounter(choice()))[0] for f in files}
    sessions = set(rows)  # a session that made no API call is still a session, with an unknown share
    assert written == len(sessions)
    # the table's links (the chart's, above it, are tested in test_chart.py)
    page = Page(re.sub(r'<section class="chart">.*?</section>', "", index.read_text(), flags=re.S))
    listed = dict(zip(page.attr("tr", "data-session")[0:], page.attr("a", "href"), strict=True))
    assert set(listed) == sessions
    for sid, href in listed.items():
        linked = read_page(index.parent / href)
        assert_page_equals_row(linked, rows[sid])
        assert "index.html" in linked.attr("a", "href")
    assert xhtml.write_index(claude_looking([str(demo_root)], choice()))[1] == 0  # every page is fresh
    grown = next(f for f in files if f.source == "interactive" and rows[f.session_id]["api_calls"])
    with open(grown.path, "ab") as handle:
        handle.write(b'{"type":"ai-title","aiTitle":"later","sessionId":"x"}\n')
    assert xhtml.write_index(claude_looking([str(demo_root)], choice()))[1] == 1


def test_most_recent_is_the_latest_activity_and_a_subagent_counts_for_its_parent(tmp_path: Path):
    base = tmp_path / "claude" / "projects" / PROJECT
    older = TranscriptWriter("older", "/home/dev/app", start=START)
    older.user("first")
    older.call(text("ok"))
    newer = TranscriptWriter("newer", "/home/dev/app", start=START + timedelta(hours=1))
    newer.user("second")
    newer.call(text("ok"))
    sub = TranscriptWriter("older", "/home/dev/app", start=START + timedelta(hours=2), sidechain=True,
                           agent_id="a1b2c3")
    sub.user("look around")
    sub.call(text("done"))
    older.write(base / "older.jsonl")
    newer.write(base / "newer.jsonl")
    os.utime(base / "newer.jsonl", (0, 0))  # file times do not decide: the recorded activity does
    root = [tmp_path / "claude" / "projects"]
    assert [f.session_id for _, f in most_recent(discover(root))] == ["newer", "older"]
    sub.write(base / "older" / "subagents" / "agent-a1b2c3.jsonl")
    assert [f.session_id for _, f in most_recent(discover(root))] == ["older", "newer"]


def run_html(options: argparse.Namespace, say) -> int:
    """`xshare html` with these options, looking where they say (as the CLI builds it)."""
    return html_command.cli_html(html_command.html_options(options), say)


def args(**given) -> argparse.Namespace:
    base = {"session": None, "output": None, "open": False, "index": False, "estimate": False, "vocab": None,
            "claude_root": None, "no_cache": False, "hermes_db": None}
    return argparse.Namespace(**{**base, **given})


def test_the_command_writes_the_most_recent_session_by_default(demo_root: Path, tmp_path: Path, capsys):
    messages: list[str] = []
    assert run_html(args(claude_root=[str(demo_root)]), messages.append) == 0
    path = Path(capsys.readouterr().out.strip())
    rows = [measure_one(f, LazyCounter(choice()))[0] for f in discover([demo_root]) if f.source == "interactive"]
    latest = max(rows, key=lambda row: row["last_activity"])
    assert path == xhtml.html_dir() / xhtml.page_name(latest["id"]) and path.is_file()
    out = tmp_path / "chosen.html"
    assert run_html(args(claude_root=[str(demo_root)], session=latest["id"], output=str(out)),
                          messages.append) == 0
    assert capsys.readouterr().out.strip() == str(out) and out.is_file()
    assert run_html(args(claude_root=[str(demo_root)], session="no-such-id"), messages.append) == 2
    assert run_html(args(claude_root=[str(demo_root)], session="x", index=True), messages.append) == 2
    assert run_html(args(claude_root=[str(tmp_path / "empty")]), messages.append) == 2
    assert run_html(args(claude_root=[str(demo_root)], index=True), messages.append) == 0
    assert Path(capsys.readouterr().out.strip()) == xhtml.html_dir() / "index.html"


def test_the_demo_page_needs_no_session_on_the_machine(capsys):
    assert run_html(args(demo=True), print) == 0
    path = Path(capsys.readouterr().out.strip().splitlines()[-1])  # after what it said (say is print here)
    assert path == xhtml.html_dir() / "demo" / "session.html"
    page = read_page(path)
    assert page.number("row-compactions") == 1  # the demo's richest session
    assert "xshare's invented demo corpus: -home-dev-todo-api/" in "".join(page.text)
    assert len(list(path.parent.glob("*.html"))) == 2  # and its compaction agent's page


def test_where_pages_go_and_how_paths_are_shown(isolated_home: Path):
    assert xhtml.page_path("abc/agent-x") == xhtml.html_dir() / xhtml.page_name("abc/agent-x")
    assert xhtml.shown_path(isolated_home / ".claude" / "projects" / "p" / "s.jsonl") == "~/.claude/projects/p/s.jsonl"
    assert xhtml.shown_path(Path("/srv/t.jsonl")) == "/srv/t.jsonl"


def test_pages_go_where_the_status_line_points():
    from xshare.state.paths import html_file

    for sid in ("0b7f9e0c-1a2b-4c3d-8e9f-a0b1c2d3e4f5", "0b7f9e0c/agent-a1b2", "../../etc", 'x<b>&"\ud800'):
        assert xhtml.page_path(sid) == html_file(sid) and xhtml.page_path(sid).parent == xhtml.html_dir()
        assert re.fullmatch(r"[A-Za-z0-9._~-]+\.html", xhtml.page_name(sid))


# --- a source without per-call usage (Hermes) ------------------------------------------------------


def hermes_like(with_usage: bool = True) -> tuple[Ledger, dict]:
    """A Hermes-shaped ledger: overhead spread over the session, its bill split evenly over calls."""
    ledger = Ledger(overhead_mode=SPREAD, detail=True)
    ledger.seen_time("2026-11-03T09:00:00Z")
    usage = {"input": 400, "cache_read": 500, "cache_write_5m": 100, "output": 60} if with_usage else None
    ledger.add("conversation", 120)
    for n in range(6):
        ledger.add("exploration", 300 + n, key=f"t{n}", label="read_file")
        if n == 3:
            ledger.compact()
        ledger.call(1_000, cap=1_000, usage=usage, model="glm-4.6", time=f"2026-11-03T09:0{n}:00Z")
        ledger.add("conversation", 40)
    ledger.seen_time("2026-11-03T09:06:00Z")
    row = session_row(ledger, session_id="20261103_090000_abcd", agent="hermes", source="cli", tokenizer="chars/4")
    return ledger, row


def test_a_hermes_session_gets_what_its_data_supports():
    ledger, row = hermes_like()
    data = html_analysis.from_ledger(ledger, row, origin="~/.hermes/state.db")
    assert not data.per_call_usage and data.overhead_spread
    page_text = render_session(data)
    page = Page(page_text)
    assert_page_equals_row(page, row)
    assert set(page.attr("p", "data-na")) == {"rebuilds", "compactions", "compaction-now"}
    assert page_text.count("Not available for this agent") == 3
    assert "read_file" in "".join(page.text) and 'class="mk-c"' in page_text and "spread evenly" in page_text


def test_a_session_without_api_calls_still_gets_a_page(tmp_path: Path):
    writer = TranscriptWriter("no-calls", "/home/dev/app", start=START)
    writer.user("<command-name>/cost</command-name>")
    file = describe(writer.write(tmp_path / "claude" / "projects" / PROJECT / "no-calls.jsonl"))
    page = read_page(write_claude_page(file, choice(), tmp_path / "p.html"))
    assert page.number("row-api_calls") == 0 and page.number("row-exploration_share_of_context") is None
    assert "made no API call" in "".join(page.text) and page.scripts == []


def test_a_session_without_any_usage_says_so():
    ledger, row = hermes_like(with_usage=False)
    page = Page(render_session(html_analysis.from_ledger(ledger, row)))
    assert page.attr("p", "data-na") == ["usage"] and page.scripts == []


def test_a_hermes_session_from_a_real_database_layout_gets_its_page(tmp_path: Path, capsys):
    from hermes_fixtures import build_standard

    from xshare.cli import main

    database = build_standard(tmp_path / "hermes" / "state.db", 22)
    rows_file = tmp_path / "rows.jsonl"
    assert main(["report", "--all", "--hermes-db", str(database), "--rows", str(rows_file)]) == 0
    row = next(json.loads(line) for line in rows_file.read_text().splitlines() if '"s-names"' in line)
    capsys.readouterr()
    assert main(["html", "s-names", "--hermes-db", str(database), "-o", str(tmp_path / "s.html")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "s.html")
    page = read_page(tmp_path / "s.html")
    assert_page_equals_row(page, row)  # the page and the report's row agree
    assert set(page.attr("p", "data-na")) == {"rebuilds", "compactions", "compaction-now"}
    assert main(["html", "no-such-session", "--hermes-db", str(database)]) == 2
    assert f"{names_listed('or')} matches" in capsys.readouterr().err


def test_index_pages_link_every_subagent_of_their_session(demo_root: Path):
    index, _ = xhtml.write_index(claude_looking([str(demo_root)], choice()))
    files = discover([demo_root])
    children = children_by_parent(files)
    parents = [f for f in files if children.get(f.session_id)]
    assert parents, "the demo holds sessions with subagents"
    for parent in parents:
        links = set(read_page(index.parent / xhtml.page_name(parent.session_id)).attr("a", "href"))
        for sub in children[parent.session_id]:
            assert xhtml.page_name(sub.session_id) in links, sub.session_id


def test_a_rebuild_with_no_cache_write_recorded_is_on_the_page_as_advice_counts_it():
    """A Codex-shaped session (reads, never a write): the call after 10 minutes re-sent 17,928 cached tokens as
    fresh input; the page shows that rebuild, its extra weight at fresh input's rate, as advice counts it."""
    from xshare.html.habits import session_habits
    from xshare.measure.ledger import FIRST_CALL

    ledger = Ledger(overhead_mode=FIRST_CALL, detail=True)
    for minute, prompt, cached in ((0, 20_000, 0), (1, 21_000, 19_968), (11, 22_000, 3_072)):
        ledger.add("conversation", 900)
        ledger.call(prompt, usage={"input": prompt - cached, "cache_read": cached, "output": 40}, cap=prompt,
                    model="gpt-5-codex", time=f"2026-11-03T09:{minute:02d}:00Z")
    row = session_row(ledger, session_id="0190aaaa-codex", agent="codex", source="cli", tokenizer="chars/4")
    data = html_analysis.from_ledger(ledger, row, turn_markers=False)
    [rebuild] = html_analysis.find_rebuilds(data)
    assert (rebuild.cause, rebuild.resent, rebuild.rewritten) == ("idle", True, 17_928)
    page_text = render_session(data)
    page = Page(page_text)
    assert page.number("rebuilds-idle") == 1 and 'data-resent="17928"' in page_text
    assert f"{round(17_928 * 0.9):,}" in page_text and "re-sent as fresh input" in page_text
    assert session_habits(data)["habits"]["idle"][:2] == [1, pytest.approx(17_928 * 0.9)]
