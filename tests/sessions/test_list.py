"""`xshare sessions` (finding 4 of issue 21) and folders a user names (finding 6): the list's ids are ones
`xshare session` takes, its projects come from the records, it fits the width; a named folder that is not
there, or holds nothing of its agent, is one warning naming the flag, and agents not named are not read."""

from __future__ import annotations

import json

import pytest
from agent_fixtures import codex_session, gemini_jsonl
from hermes_fixtures import hermes_rotations

from xshare.cli import main
from xshare.measure.ids import short_ids


def _sessions(capsys, *arguments: str) -> tuple[int, str, str]:
    code = main(["sessions", "--all", "--estimate", *arguments])
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_list_newest_first_with_ids_session_takes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = _sessions(capsys, "--demo", "--json", "--limit", "0")
    assert code == 0 and "Traceback" not in err
    listed = json.loads(out)["sessions"]
    starts = [entry["started_at"] for entry in listed]
    assert starts == sorted(starts, reverse=True) and len(listed) == json.loads(out)["listed"]
    assert all(entry["id"].startswith(entry["short_id"]) for entry in listed)
    assert all(entry["project"] and entry["project"].startswith("-home-") for entry in listed)
    report = main(["report", "--demo", "--json", "--estimate"])
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert report == 0 and len(listed) == groups["claude-code/interactive"]["sessions"]


@pytest.mark.parametrize("columns", [80, 200])
def test_text_fits_the_width_and_says_how_many_more(capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = _sessions(capsys, "--demo", "--limit", "2")
    assert code == 0
    assert max(map(len, out.splitlines())) <= columns
    assert "more in the window: `--limit" in out and "--subagents" in out
    assert "-home-dev-" in out


def test_a_hermes_session_continuing_another_is_listed_as_the_report_counts_it(tmp_path, capsys, monkeypatch):
    """Issue 28: Hermes's weixin source had 8 sessions in the report and 1 in `sessions`, which left out every
    session with a parent as a subagent; a rotation continuing its parent after a compaction is its platform's
    session. Sessions are listed and left out by kind, as the report counts them."""
    monkeypatch.setenv("COLUMNS", "200")
    db = tmp_path / "hermes" / "state.db"
    hermes_rotations(db, tmp_path / "other" / "state.db")
    assert main(["report", "--all", "--json", "--estimate", "--no-history", "--hermes-db", str(db)]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert (groups["hermes/weixin"]["sessions"], groups["hermes/subagent"]["sessions"]) == (3, 1)
    code, out, err = _sessions(capsys, "--json", "--limit", "0", "--hermes-db", str(db))
    listed = json.loads(out)
    assert code == 0 and [entry["source"] for entry in listed["sessions"]].count("weixin") == 3, err
    assert listed["sessions_in_window"] == 5 and listed["listed"] == 4 and listed["not_listed"] == {"subagent": 1}
    assert listed["by_kind"] == {"interactive": 1, "subagent": 1, "weixin": 3}
    code, out, _ = _sessions(capsys, "--hermes-db", str(db))
    assert code == 0 and out.count("hermes/weixin") == 3
    assert out.splitlines()[-1] == "1 subagent session not listed: `--subagents` lists them too"


def testshort_ids_grow_until_unique_and_leave_subagents_whole():
    short = short_ids(["aaaaaaaa1", "aaaaaaaa2", "bbbbbbbbbbbb", "bbbbbbbbbbbb/agent-1"])
    assert short == {"aaaaaaaa1": "aaaaaaaa1", "aaaaaaaa2": "aaaaaaaa2", "bbbbbbbbbbbb": "bbbbbbbb",
                     "bbbbbbbbbbbb/agent-1": "bbbbbbbbbbbb/agent-1"}


def test_other_agents_projects_and_a_listed_id_opens(tmp_path, capsys, monkeypatch):
    codex_home, gemini_home = tmp_path / "codex", tmp_path / "gemini"
    codex_session(codex_home / "sessions" / "2026" / "03" / "02")
    gemini_jsonl(gemini_home)
    code, out, err = _sessions(capsys, "--json", "--codex-home", str(codex_home), "--gemini-home", str(gemini_home))
    assert code == 0, err
    projects = {entry["agent"]: entry["project"] for entry in json.loads(out)["sessions"]}
    assert projects == {"codex": "w", "gemini": "my-app"}
    short = json.loads(out)["sessions"][0]["short_id"]
    assert main(["session", short, "--json", "--estimate", "--codex-home", str(codex_home),
                 "--gemini-home", str(gemini_home)]) == 0


def test_a_named_folder_that_is_not_there_is_a_warning(tmp_path, capsys, monkeypatch):
    codex_home = tmp_path / "codex"
    codex_session(codex_home / "sessions" / "2026" / "03" / "02")
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["report", "--all", "--json", "--estimate", "--codex-home", str(codex_home),
                 "--codex-home", str(tmp_path / "typo"), "--gemini-home", str(empty)])
    out, err = capsys.readouterr()
    assert code == 0
    lines = err.strip().splitlines()
    assert any(line.startswith("xshare: --codex-home ") and "typo: no such file or folder" in line for line in lines)
    assert any(line.startswith("xshare: --gemini-home ") and "no Gemini CLI sessions in it" in line for line in lines)
    assert json.loads(out)["groups"].keys() == {"codex/interactive"}


@pytest.mark.parametrize("command", ["sessions", "advice"])
def test_a_command_that_looks_twice_warns_once(tmp_path, capsys, command):
    """sessions and advice look at the named places a second time (project names, detail): one warning."""
    codex_home = tmp_path / "codex"
    codex_session(codex_home / "sessions" / "2026" / "03" / "02")
    code = main([command, "--all", "--estimate", "--codex-home", str(codex_home),
                 "--gemini-home", str(tmp_path / "typo")])
    err = capsys.readouterr().err
    assert code == 0 and err.count("--gemini-home") == 1, err


def test_agents_not_named_are_not_read_from_their_defaults(tmp_path, capsys, monkeypatch):
    """A Claude Code session in the default home must not reach a report on a named Codex home."""
    from xshare.demo.corpus import write_demo_corpus

    config = tmp_path / "claude-config"
    write_demo_corpus(config)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    codex_home = tmp_path / "codex"
    codex_session(codex_home / "sessions" / "2026" / "03" / "02")
    assert main(["report", "--all", "--json", "--estimate", "--no-history"]) == 0  # the default is read
    assert any(key.startswith("claude-code/") for key in json.loads(capsys.readouterr().out)["groups"])
    assert main(["report", "--all", "--json", "--estimate", "--codex-home", str(codex_home)]) == 0
    out, err = capsys.readouterr()
    assert set(json.loads(out)["groups"]) == {"codex/interactive"} and "Traceback" not in err


def test_an_empty_window_refuses_in_one_line_with_the_flag(tmp_path, capsys):
    codex_home = tmp_path / "codex"
    codex_session(codex_home / "sessions" / "2026" / "03" / "02")
    code = main(["sessions", "--since-days", "0", "--estimate", "--codex-home", str(codex_home)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "no session started in the window" in err and "Traceback" not in err


def test_limit_is_checked(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sessions", "--limit", "-1"])
    assert exit_.value.code == 2 and "0 lists every session" in capsys.readouterr().err


@pytest.mark.parametrize("columns", [60, 80, 100, 200])
def test_one_line_a_session_at_any_width_the_least_useful_columns_given_up_first(capsys, monkeypatch, columns):
    """Issue 31, finding 4: at 100 columns or less each session was a 7-line `key: value` block. Now one line a
    session, as ccusage lists them: the billed prompt and the calls go first, then the agent, the project is
    cut to its end; the id, the start, the share and the dollars always stay; what was left out is said."""
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = _sessions(capsys, "--demo", "--json")
    entries = json.loads(out)["sessions"]
    code, out, _ = _sessions(capsys, "--demo")
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= columns
    for entry in entries:  # every session on one line of its own, with its id, start and share
        line = next(line for line in lines if line.startswith(entry["short_id"] + " "))
        assert entry["started_at"][:10] in line and f"{entry['exploration_share_of_context']:.1%}" in line
        assert "$" in line or "unknown" in line
    header = lines[0].split()
    start = next((index for index, line in enumerate(lines) if line.startswith("Left out to fit")), len(lines))
    wrapped = [lines[start], *(line.strip() for line in lines[start + 1:start + 3] if line.startswith("  "))] \
        if start < len(lines) else []
    said = " ".join(wrapped)
    if columns >= 200:
        assert "billed" in header and "calls" in header and not said
    else:
        assert "billed" not in header and "billed prompt" in said
    if columns <= 80:
        assert "agent/source" not in header and "agent/source" in said and "project" in header


def test_a_fitted_table_gives_up_columns_in_the_order_asked_and_none_when_nothing_fits():
    from xshare.printing import fitted_table

    header = ("id", "wide figure", "less", "share")
    rows = [("a1", "123,456,789,000", "42", "12.5%"), ("b2", "9", "7", "0.1%")]
    lines, left_out = fitted_table(header, rows, 40, (1, 2))
    assert left_out == [] and len(lines) == 4
    lines, left_out = fitted_table(header, rows, 20, (1, 2))
    assert left_out == ["wide figure"] and lines[0].split() == ["id", "less", "share"]
    assert max(map(len, lines)) <= 20
    assert fitted_table(header, rows, 5, (1, 2)) is None  # the id and the share alone are wider
