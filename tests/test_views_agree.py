"""Issue 28, part 2: every view of one history counts alike. For every session, the report's group, its row
(`--rows`), `sessions --json`, `session --json`, its page and the index agree on calls, bill, share and kind,
and every view counts the sessions of each kind alike: on the demo, on an invented history of every agent
(subagents whose session is gone, Hermes's rotations, one id in two databases, Gemini's A2A chats, one
session held twice by one agent's records), and on ../shared/corpus.

On the demo, the status line shows each session's share and calls as its row has them. `session --json`
runs for every invented session and for a spread of the corpus's (each agent and kind,
subagents among them); one report, one `sessions --json` and one `html --index` serve the rest.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from agent_fixtures import codex_session, gemini_json, openclaw_session, opencode_db
from claude_2_1_fixtures import ORPHAN_SESSION, orphan_subagents
from hermes_fixtures import hermes_rotations

from tests.agents.gemini.test_reader import cleared
from tests.conftest import CORPUS, needs_corpus
from tests.live.test_status_render import status_payload
from xshare.agents.claude_code.files import discover
from xshare.cli import main
from xshare.demo.corpus import write_demo_corpus
from xshare.html.cells import AGENT_NAMES
from xshare.live import session_state
from xshare.live import status_render as statusline
from xshare.measure.ledger import ROUNDING_ALLOWANCE
from xshare.printing import pct

AGENT_OF_NAME = {name: agent for agent, name in AGENT_NAMES.items()}  # the index shows agents by name


@dataclass
class Listed:
    """One session as a view other than its row shows it."""

    agent: str
    source: str
    api_calls: int
    billed: int | str  # the index shows it as text
    share: float | str | None  # exploration share of the context; the index shows it as text
    href: str | None = None


@dataclass
class Views:
    """What one report, one `sessions --json` and one `html --index` say of the same sessions."""

    rows: list[dict]
    report: dict
    text: str  # the report as printed
    listed: dict  # with --subagents
    own: dict  # without: the sessions not run inside another
    index: Path


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def gather(capsys: pytest.CaptureFixture, tmp_path: Path, flags: list[str]) -> Views:
    rows, index = tmp_path / "rows.jsonl", tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "report", "--all", "--no-history", "--json", "--rows", str(rows), *flags)
    assert code == 0, err
    report = json.loads(out)
    code, text, err = run(capsys, "report", "--all", "--no-history", *flags)
    assert code == 0, err
    code, out, err = run(capsys, "sessions", "--all", "--json", "--subagents", "--limit", "0", *flags)
    assert code == 0, err
    listed = json.loads(out)
    code, out, err = run(capsys, "sessions", "--all", "--json", "--limit", "0", *flags)
    assert code == 0, err
    own = json.loads(out)
    code, _, err = run(capsys, "html", "--index", "-o", str(index), *[flag for flag in flags if flag != "--all"])
    assert code == 0, err
    return Views([json.loads(line) for line in rows.read_text().splitlines()], report, text, listed, own, index)


def index_rows(index: Path) -> dict[tuple[str, str], list[Listed]]:
    """The index's table, by (agent, id): each row's kind, calls, bill, share and page."""
    found: dict[tuple[str, str], list[Listed]] = {}
    for session_id, body in re.findall(r'<tr class="[^"]*" data-session="([^"]*)">(.*?)</tr>', index.read_text()):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", body)
        name, _, source = html.unescape(cells[1]).partition(" \u00b7 ")
        href = re.search(r'href="([^"]+)"', cells[0])
        agent = AGENT_OF_NAME.get(name, name)
        found.setdefault((agent, html.unescape(session_id)), []).append(
            Listed(agent, source, int(cells[5].replace(",", "")), cells[6], cells[7],
                   html.unescape(href.group(1)) if href else None))
    return found


def page_figures(page: Path) -> Listed:
    """A session's page, by the figures it keeps exactly (html/cells.py `datum`) and its agent and source."""
    text = page.read_text()
    data = {name: html.unescape(value) for name, value in re.findall(r'<data id="row-([a-z_]+)" value="([^"]*)"', text)}
    name, _, source = html.unescape(re.search(r"<dt>Agent and source</dt><dd>(.*?)</dd>", text).group(1)).partition(
        " \u00b7 ")
    share = data["exploration_share_of_context"]
    return Listed(AGENT_OF_NAME.get(name, name), source, int(data["api_calls"]), int(data["prompt_tokens_billed"]),
                  float(share) if share else None)


def figures(row: dict) -> tuple:
    return (row["agent"], row["source"], row["api_calls"], row["prompt_tokens_billed"],
            row["exploration_share_of_context"])


def shown(listed: Listed) -> tuple:
    return (listed.agent, listed.source, listed.api_calls, listed.billed, listed.share)


def as_index_shows(row: dict) -> tuple:
    return (row["agent"], row["source"], row["api_calls"], f"{row['prompt_tokens_billed']:,}",
            pct(row["exploration_share_of_context"]))


def assert_session_agrees(row: dict, listed: dict, indexed: Listed, page: Listed) -> None:
    """One session's views say what its row says: calls, bill, share and kind; and no view prints a share the
    bill cannot support."""
    assert_share_supported(row)
    assert figures(listed) == figures(row), ("sessions --json", listed, row)
    assert shown(indexed) == as_index_shows(row), ("index", indexed, row)
    assert shown(page) == figures(row), ("page", page, row)


def assert_share_supported(row: dict) -> None:
    """Issue 28's invariant: the parts sum to the whole, and a share is printed only where the recorded context
    is within the bill (plus the rounding allowance); elsewhere it is unknown, with the reason."""
    context, prompt = row["context_tokens"], row["prompt_tokens_billed"]
    assert sum(row["billed_tokens"].values()) == context, row["id"]
    if row["exploration_share_of_context"] is not None and prompt:
        assert context <= prompt * (1 + ROUNDING_ALLOWANCE), (row["id"], context, prompt)
    if row.get("bill_short"):
        assert row["exploration_share_of_context"] is None and row["exploration_share_of_prompt"] is None, row["id"]
        assert row["unknown_because"], row["id"]


def assert_views_agree(views: Views) -> Counter:
    """Every view's count of each kind alike, and every session alike in every view; the kinds counted."""
    kinds = Counter(row["source"] for row in views.rows)
    assert_counts_alike(views, kinds)
    listed, indexed = _by_session(views.listed["sessions"]), index_rows(views.index)
    assert Counter({key: len(entries) for key, entries in indexed.items()}) == Counter(
        (row["agent"], row["id"]) for row in views.rows)
    hrefs = [entry.href for entries in indexed.values() for entry in entries]
    assert None not in hrefs and len(set(hrefs)) == len(hrefs)  # a page of its own each
    for key, rows in _by_session(views.rows).items():
        # one id may name two sessions (two databases, a chat resumed into a second file): paired in order
        pages = sorted(((entry, page_figures(views.index.parent / entry.href)) for entry in indexed[key]),
                       key=lambda pair: _order(shown(pair[1])))
        for row, seen, (entry, page) in zip(sorted(rows, key=lambda row: _order(figures(row))),
                                            sorted(listed[key], key=lambda row: _order(figures(row))), pages,
                                            strict=True):
            assert_session_agrees(row, seen, entry, page)
    return kinds


def assert_counts_alike(views: Views, kinds: Counter) -> None:
    """The report (its JSON and its text), `sessions` with and without --subagents, and the index's header
    count the sessions, and those of each kind, as the rows do."""
    assert views.report["sessions"] == len(views.rows) == views.listed["sessions_in_window"]
    assert views.listed["by_kind"] == dict(kinds) and views.listed["not_listed"] == {}
    inside = {kind: count for kind, count in kinds.items() if kind in ("subagent", "internal")}
    assert views.own["not_listed"] == inside and views.own["sessions_in_window"] == len(views.rows)
    assert Counter(entry["source"] for entry in views.own["sessions"]) == kinds - Counter(inside)
    groups: dict[str, list[dict]] = {}
    for row in views.rows:
        groups.setdefault(f"{row['agent']}/{row['source']}", []).append(row)
    summed = {key: (len(members), sum(row["api_calls"] for row in members),
                    sum(row["prompt_tokens_billed"] for row in members)) for key, members in groups.items()}
    assert {key: (group["sessions"], group["api_calls"], group["prompt_tokens_billed"])
            for key, group in views.report["groups"].items()} == summed
    table = views.text.split("\nAgent / source", 1)[1].split("\n\n", 1)[0]  # the first: sessions, calls, shares
    printed = re.findall(r"^(\S+) / (\S+) +([\d,]+) +([\d,]+) ", table, re.MULTILINE)
    assert {f"{agent}/{source}": (_number(sessions), _number(calls)) for agent, source, sessions, calls in printed} == {
        key: figures[:2] for key, figures in summed.items()}
    header = re.search(r'<p class="sub">([0-9,]+) sessions? \(([^)]*)\), newest first', views.index.read_text())
    assert _number(header.group(1)) == len(views.rows)
    assert {kind: _number(count) for count, kind in re.findall(r"(\d[\d,]*) ([^\s,]+)", header.group(2))} == kinds


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _order(values: tuple) -> tuple:
    """Figures sortable when a share is unknown (None)."""
    return tuple((value is not None, value) for value in values)


def _by_session(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    found: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        found.setdefault((row["agent"], row["id"]), []).append(row)
    return found


def assert_session_json_agrees(capsys: pytest.CaptureFixture, views: Views, flags: list[str],
                               wanted: list[dict]) -> None:
    """`session ID --json` of each wanted session says what its row says; an id two sessions share is
    refused with both files, never answered with one of them."""
    shared = Counter((row["agent"], row["id"]) for row in views.rows)
    for row in wanted:
        code, out, err = run(capsys, "session", row["id"], "--json", *flags)
        if shared[(row["agent"], row["id"])] > 1:
            assert code == 2 and out == "" and "is the id of 2 sessions in different files" in err, err
            continue
        assert code == 0, (row["id"], err)
        assert figures(json.loads(out)) == figures(row), row["id"]


# --- the demo: every view, every session ----------------------------------------------------------------


def test_the_demo_counts_alike_in_every_view(tmp_path: Path, capsys: pytest.CaptureFixture):
    views = gather(capsys, tmp_path, ["--demo"])  # the tokenizer the hook counts with, for the status line
    kinds = assert_views_agree(views)
    assert kinds == {"interactive": 6, "subagent": 1, "internal": 1}
    written = write_demo_corpus(tmp_path / "demo")  # the same invented corpus, for `session` and the hook
    assert_session_json_agrees(capsys, views, ["--claude-root", str(written)], views.rows)
    rows = {row["id"]: row for row in views.rows}
    for file in (file for file in discover([written]) if not file.parent_id):
        session_state.update(file.path)  # as the hook does after a tool batch
        row = rows[file.session_id]
        line = statusline.render(status_payload(file.path), "{context} of context · {calls} calls", None, False)
        assert line == f"{pct(row['exploration_share_of_context'])} of context · {row['api_calls']:,} calls"


# --- every agent, invented: what made the views disagree -----------------------------------------------


def a2a_chats(home: Path) -> None:
    """Gemini CLI's A2A server gives every chat one id; xshare names each by its file (session-<time>-a2a-serv)."""
    first, _ = gemini_json(home, session_id="a2a-server")
    shutil.copyfile(first, first.with_name("session-2026-02-10T09-30-a2a-serv.json"))


def one_session_twice(projects: Path, gemini_home: Path, openclaw_home: Path) -> None:
    """An agent's records holding one session twice: a Claude Code transcript backed up into its project's
    sessions/ folder, a Gemini CLI chat cleared into a second file under its id (before 2026), an OpenClaw
    live file beside its own reset archive (a backup taken before the reset)."""
    original = next(file.path for file in discover([projects]) if not file.parent_id)
    backup = original.parent / "sessions" / original.name
    backup.parent.mkdir()
    shutil.copy2(original, backup)
    first, _ = gemini_json(gemini_home, session_id="5d4c3b2a-cccc-4ddd-8eee-000000000003")
    cleared(first)
    archive, _ = openclaw_session(openclaw_home, "21e0d9c8-4444-4555-8666-777788889999",
                                  ".reset.2026-04-02T00-00-00.000Z")
    live = archive.with_name(archive.name.split(".reset.")[0])
    live.write_text("".join(archive.read_text().splitlines(keepends=True)[:6]))


def every_agent(tmp_path: Path) -> list[str]:
    projects = write_demo_corpus(tmp_path / "claude")
    orphan_subagents(projects)
    hermes_rotations(tmp_path / "hermes" / "state.db", tmp_path / "hermes-copy" / "state.db")
    codex_session(tmp_path / "codex")
    a2a_chats(tmp_path / "gemini")
    opencode_db(tmp_path / "opencode" / "opencode.db")
    openclaw_session(tmp_path / "openclaw")
    one_session_twice(projects, tmp_path / "gemini", tmp_path / "openclaw")
    return ["--claude-root", str(projects), "--hermes-db", str(tmp_path / "hermes" / "state.db"),
            "--hermes-db", str(tmp_path / "hermes-copy" / "state.db"), "--codex-home", str(tmp_path / "codex"),
            "--gemini-home", str(tmp_path / "gemini"), "--opencode-db", str(tmp_path / "opencode" / "opencode.db"),
            "--openclaw-home", str(tmp_path / "openclaw"), "--estimate"]


def test_every_agent_counts_alike_in_every_view(tmp_path: Path, capsys: pytest.CaptureFixture):
    flags = every_agent(tmp_path / "records")
    views = gather(capsys, tmp_path, flags)
    kinds = assert_views_agree(views)
    assert kinds["weixin"] == 3 and kinds["subagent"] >= 4  # the rotations are weixin's, as the report has them
    twice = [row for row in views.rows if row["id"].startswith(("5d4c3b2a", "21e0d9c8"))]
    assert sorted(row["api_calls"] for row in twice) == [3, 6]  # each once, every call of both files
    assert Counter((row["agent"], row["id"]) for row in views.rows).most_common(1)[0][1] == 2  # Hermes's alone
    assert_session_json_agrees(capsys, views, flags, views.rows)
    # the index names the A2A chats and the subagents whose session is gone apart, each by `sessions`'s short id
    text = views.index.read_text()
    short = {entry["id"]: entry["short_id"] for entry in views.listed["sessions"]}
    assert short["session-2026-02-10T09-30-a2a-serv"] == "session-2026-02-10T09"
    assert ">session-2026-02-10T09</span>" in text and ">session-2026-02-10T08</span>" in text
    assert f">{ORPHAN_SESSION[:8]}/a1f0c2d3</span>" in text and f">{ORPHAN_SESSION[:8]}/a2e1d0c3</span>" in text


# --- ../shared/corpus: every agent's real records ------------------------------------------------------


def corpus_flags() -> list[str]:
    """The flags naming every home of the corpus, as /tmp/x28/args.sh builds them."""
    flags = [flag for folder in sorted((CORPUS / "claude").glob("*/")) for flag in ("--claude-root", str(folder))]
    flags += [flag for db in sorted((CORPUS / "hermes").rglob("state.db")) for flag in ("--hermes-db", str(db))]
    for agent, flag in (("codex", "--codex-home"), ("gemini", "--gemini-home"), ("opencode", "--opencode-db"),
                        ("openclaw", "--openclaw-home")):
        flags += [part for folder in sorted((CORPUS / agent).glob("*/")) for part in (flag, str(folder))]
    return flags


def spread(rows: list[dict], each: int = 2) -> list[dict]:
    """A few sessions of every agent and kind (the first and last by id), and every id two sessions share."""
    groups: dict[str, list[dict]] = {}
    for row in sorted(rows, key=lambda row: row["id"]):
        groups.setdefault(f"{row['agent']}/{row['source']}", []).append(row)
    chosen = [row for members in groups.values() for row in (members[:each // 2] + members[-(each - each // 2):])]
    shared = Counter((row["agent"], row["id"]) for row in rows)
    twice = [row for row in rows if shared[(row["agent"], row["id"])] > 1]
    return list({(row["agent"], row["id"]): row for row in chosen + twice[:2]}.values())


@needs_corpus
def test_the_corpus_counts_alike_in_every_view(tmp_path: Path, capsys: pytest.CaptureFixture):
    flags = corpus_flags()
    views = gather(capsys, tmp_path, flags)
    kinds = assert_views_agree(views)
    assert kinds["subagent"] and kinds["internal"]
    wanted = spread(views.rows)
    assert {row["agent"] for row in wanted} == {row["agent"] for row in views.rows}
    assert_session_json_agrees(capsys, views, flags, wanted)
