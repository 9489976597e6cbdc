"""A file is one file however it is reached (issue 18): symlinked config folders, roots named twice or
nested, symlinked and hard-linked transcripts, Hermes databases and other agents' homes reached by two
paths; and a file name that is not UTF-8 keeps one session id in the rows, the history, the caches and
the session lookup. Every case is measured against a clean run of the same files: the same figures."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import codex_session, gemini_json, gemini_jsonl, openclaw_session, opencode_db
from claude_2_1_fixtures import a_session_with_a_subagent_and_a_compaction
from hermes_fixtures import build_standard

from tests.conftest import CORPUS
from xshare.agents.claude_code import files as claude_files
from xshare.agents.claude_code import live_state, rows_cache
from xshare.agents.claude_code import many as claude_code
from xshare.agents.claude_code import transcript as claude
from xshare.agents.codex import reader as codex
from xshare.agents.gemini import reader as gemini
from xshare.agents.hermes import state_db as hermes
from xshare.agents.openclaw import reader as openclaw
from xshare.agents.opencode import reader as opencode
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live import session_state
from xshare.measure.ids import key_path, normal_id, path_key
from xshare.report import history
from xshare.state.store import dumps, loads

TALLY = "-home-dev-tally"  # a project folder of the demo corpus


def report(capsys, *arguments: str) -> tuple[dict, str]:
    """`xshare report --all --json` over what the arguments name: the report without its clock, and stderr."""
    code = main(["report", "--all", "--json", "--estimate", *arguments])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    figures = json.loads(captured.out)
    figures.pop("window")
    return figures, captured.err


def fresh_state(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Another xshare home: no cache, no history (a clean run beside the one under test)."""
    monkeypatch.setenv("XSHARE_HOME", str(folder))


@pytest.fixture
def config(isolated_home: Path) -> Path:
    """The demo corpus as ~/.claude (a config folder; returns its projects/)."""
    return write_demo_corpus(isolated_home / ".claude")


def relative(files: list[claude.TranscriptFile], base: Path) -> list[str]:
    return [str(file.path.relative_to(base)) for file in files]


# --- Claude Code: roots -------------------------------------------------------------------------------


def test_a_symlinked_xdg_config_folder_counts_every_session_once(capsys, monkeypatch, tmp_path, config,
                                                                  isolated_home):
    clean, clean_err = report(capsys)
    (isolated_home / ".config").mkdir()
    (isolated_home / ".config" / "claude").symlink_to(isolated_home / ".claude")
    fresh_state(monkeypatch, tmp_path / "state-2")
    assert report(capsys) == (clean, clean_err)
    assert report(capsys) == (clean, clean_err)  # the history holds each session once, too
    # the first spelling met is kept: the first default root's
    assert all(str(f.path).startswith(str(config)) for f in claude.discover(claude.default_roots()))


def test_the_real_folder_under_xdg_and_the_link_at_home(capsys, monkeypatch, tmp_path, isolated_home):
    write_demo_corpus(isolated_home / ".config" / "claude")
    clean, _ = report(capsys)
    (isolated_home / ".claude").symlink_to(isolated_home / ".config" / "claude")
    fresh_state(monkeypatch, tmp_path / "state-2")
    assert report(capsys)[0] == clean


@pytest.mark.parametrize("spellings", [
    ["{c}", "{c}/projects"],  # a config folder and its projects folder
    ["{c}", "{c}/projects/../projects/"],
    ["{c}", "{link}"],
    ["{c}/projects", "{c}/projects/" + TALLY],  # a root inside another
    ["{c}/projects/" + TALLY, "{c}"],  # the inner one first: its files are measured, not "outside any project"
    ["{link}/projects", "{c}", "{c}"],
])
def test_one_root_under_other_spellings(capsys, tmp_path, config, spellings):
    link = tmp_path / "link-to-claude"
    link.symlink_to(config.parent)
    clean, clean_err = report(capsys, "--claude-root", str(config.parent), "--no-cache")
    roots = [part for s in spellings for part in ("--claude-root", s.format(c=config.parent, link=link))]
    out, err = report(capsys, *roots, "--no-cache")
    # a problem names its file as the first spelling met named it (the link, when that came first)
    assert (out, err.replace(str(link), str(config.parent))) == (clean, clean_err)


def test_claude_config_dir_naming_one_folder_twice(capsys, monkeypatch, config):
    clean, _ = report(capsys, "--no-cache")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{config.parent},{config.parent}/,{config.parent}/../.claude")
    assert report(capsys, "--no-cache")[0] == clean


def test_symlinked_and_hard_linked_transcripts_count_once(capsys, config):
    clean, clean_err = report(capsys, "--claude-root", str(config), "--no-cache")
    sessions_before = claude.discover([config])
    main_file = next(f for f in sessions_before if f.session_id and claude.family_files(f))
    other = config / "-home-dev-zz-elsewhere"  # sorted after the real folders: their spellings are met first
    other.mkdir()
    (other / main_file.path.name).symlink_to(main_file.path)
    os.link(main_file.path, other / "zz-hard-link.jsonl")
    member = claude.family_files(main_file)[0]
    os.link(member.path, member.path.with_name(member.path.stem + "x.jsonl"))  # a second name in subagents/
    assert report(capsys, "--claude-root", str(config), "--no-cache") == (clean, clean_err)
    assert relative(claude.discover([config]), config) == relative(sessions_before, config)
    assert claude.family_files(main_file) == [member]


def test_a_link_named_otherwise_keeps_the_transcripts_own_id(capsys, monkeypatch, tmp_path, config):
    """The hook knows a session by the name Claude Code wrote; a link sorted first must not rename it."""
    clean, _ = report(capsys)
    target = next((config / TALLY).glob("*.jsonl"))
    (config / TALLY / "0-alias.jsonl").symlink_to(target.name)
    fresh_state(monkeypatch, tmp_path / "state-2")
    history.remember([session_state.update(target)])  # what the hook wrote at the end of a turn
    figures, _ = report(capsys)
    assert figures == clean and figures["remembered_sessions"] == 0
    assert target.stem in {file.session_id for file in claude.discover([config])}


def test_a_file_refused_under_two_roots_is_counted_once(tmp_path):
    projects = tmp_path / "cfg" / "projects"
    (projects / "-p").mkdir(parents=True)
    (projects / "stray.jsonl").write_text("")
    (projects / "-p" / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    link = tmp_path / "link"
    link.symlink_to(projects)
    skipped: Counter = Counter()
    assert claude.discover([projects, link, projects / ".." / "projects"], skipped) == []
    assert skipped == {claude_files.OUTSIDE_PROJECTS: 1, claude_files.NOT_REGULAR: 1}


def test_the_session_and_html_commands_find_one_file(capsys, monkeypatch, tmp_path, isolated_home):
    """A session whose usage totals show calls no file recorded: its subagent file must count once."""
    main_path, agent_path, _ = a_session_with_a_subagent_and_a_compaction(isolated_home / ".claude")
    session_id = main_path.stem
    assert main(["session", session_id, "--json", "--estimate"]) == 0
    clean = json.loads(capsys.readouterr().out)
    (isolated_home / ".config").mkdir()
    (isolated_home / ".config" / "claude").symlink_to(isolated_home / ".claude")
    os.link(agent_path, agent_path.with_name(agent_path.stem + "x.jsonl"))  # a second name in subagents/
    fresh_state(monkeypatch, tmp_path / "state-2")
    assert main(["session", session_id, "--json", "--estimate"]) == 0
    assert json.loads(capsys.readouterr().out) == clean
    pages = tmp_path / "pages"
    pages.mkdir()
    assert main(["html", session_id, "--estimate", "-o", str(pages / "page.html")]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert len(list(pages.glob("*.html"))) == 2  # the session's page and its one subagent's


# --- Hermes and the other agents ------------------------------------------------------------------------


def test_hermes_home_naming_a_profile_by_another_path(capsys, monkeypatch, isolated_home):
    build_standard(isolated_home / ".hermes" / "state.db")
    work = build_standard(isolated_home / ".hermes" / "profiles" / "work" / "state.db")
    build_standard(isolated_home / ".hermes" / "profiles" / "home" / "state.db")
    clean, clean_err = report(capsys, "--no-cache")
    assert clean["sessions"] > 0
    monkeypatch.setenv("HERMES_HOME", str(isolated_home / ".hermes" / "profiles" / ".." / "profiles" / "work"))
    assert hermes.default_databases() == [Path(os.environ["HERMES_HOME"]) / "state.db",
                                          isolated_home / ".hermes" / "profiles" / "home" / "state.db"]
    monkeypatch.setenv("HERMES_HOME", str(isolated_home / ".hermes"))  # the default, named
    assert report(capsys, "--no-cache") == (clean, clean_err)
    assert work in hermes.default_databases()


def test_a_hermes_database_named_twice(capsys, tmp_path):
    database = build_standard(tmp_path / "h" / "state.db")
    clean, clean_err = report(capsys, "--hermes-db", str(database), "--no-cache")
    twice = ["--hermes-db", str(tmp_path / "h" / ".." / "h" / "state.db"), "--hermes-db", str(database)]
    assert report(capsys, *twice, "--no-cache") == (clean, clean_err)


def agent_homes(tmp_path: Path) -> dict[str, tuple[str, list[Path], list[Path]]]:
    """Each agent's flag, its home given once, and the same files given again by other paths."""
    codex_home, gemini_home, claw_home = tmp_path / "codex", tmp_path / "gemini", tmp_path / "openclaw"
    codex_session(codex_home)
    gemini_json(gemini_home)
    gemini_jsonl(gemini_home)
    openclaw_session(claw_home)
    database, _ = opencode_db(tmp_path / "opencode" / "opencode.db")
    for home in (codex_home, gemini_home, claw_home, database.parent):
        (tmp_path / f"{home.name}-link").symlink_to(home)
    return {
        "codex": ("--codex-home", [codex_home], [tmp_path / "codex-link", codex_home / ".." / "codex"]),
        # a home, its tmp/ and a link to it
        "gemini": ("--gemini-home", [gemini_home], [gemini_home / "tmp", gemini_home, tmp_path / "gemini-link"]),
        # a folder, the database in it, and a link to the folder
        "opencode": ("--opencode-db", [database], [database.parent, database, tmp_path / "opencode-link"]),
        "openclaw": ("--openclaw-home", [claw_home], [tmp_path / "openclaw-link", claw_home]),
    }


@pytest.mark.parametrize("agent", ["codex", "gemini", "opencode", "openclaw"])
def test_another_agents_files_reached_twice(capsys, tmp_path, agent):
    flag, once, twice = agent_homes(tmp_path)[agent]
    clean, clean_err = report(capsys, *[part for home in once for part in (flag, str(home))], "--no-cache")
    assert clean["sessions"] >= 1
    doubled = report(capsys, *[part for home in twice for part in (flag, str(home))], "--no-cache")
    assert doubled == (clean, clean_err)
    adapter = {"codex": codex, "gemini": gemini, "opencode": opencode, "openclaw": openclaw}[agent]
    assert len(adapter.discover(twice)) == len(adapter.discover(once))


# --- session ids from file names that are not UTF-8 ---------------------------------------------------


@pytest.fixture
def odd_name(config: Path) -> Path:
    """A demo transcript renamed with a byte that is not UTF-8 (skipped where the file system refuses it)."""
    source = next((config / TALLY).glob("*.jsonl"))
    target = Path(os.fsdecode(os.fsencode(source.parent) + b"/caf\xe9-" + os.fsencode(source.name)))
    try:
        source.rename(target)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    return target


def test_a_name_that_is_not_utf8_is_one_session_from_report_to_report(capsys, monkeypatch, odd_name):
    first, err = report(capsys)
    lines = history.history_path().read_bytes().count(b"\n")
    read: list[Path] = []
    original = claude_code.read_file  # every transcript a report reads goes through it
    monkeypatch.setattr(claude_code, "read_file",
                        lambda file, *a, **named: read.append(file.path) or original(file, *a, **named))
    second, second_err = report(capsys)
    assert (second, second_err) == (first, err) and second["remembered_sessions"] == 0
    assert history.history_path().read_bytes().count(b"\n") == lines  # nothing new to remember
    assert read == []  # the cache found the odd file under its key
    heads = [line.partition(b"\t")[0] for line in rows_cache.cache_file().read_bytes().splitlines()[1:]
             if line.count(b"\t") == 2]  # an entry's line (the `settled` line has one tab)
    assert odd_name in {key_path(loads(head)[0]) for head in heads}


def test_the_live_ledger_and_the_lookup_use_the_same_id(capsys, odd_name):
    row = session_state.update(odd_name)
    assert row is not None and row["id"] == normal_id(odd_name.stem) and "\ufffd" in row["id"]
    assert live_state.live_row(claude.describe(odd_name).session_id)["id"] == row["id"]
    history.remember([row])  # what the hook does at a turn's end
    figures, _ = report(capsys)
    assert figures["remembered_sessions"] == 0
    assert figures["sessions"] == len(claude.discover(claude.default_roots()))
    for wanted in (row["id"], odd_name.stem):  # as printed, or as the shell passes the file name's bytes
        assert main(["session", wanted, "--json", "--estimate", "--claude-root", str(odd_name.parents[1])]) == 0
        assert json.loads(capsys.readouterr().out)["id"] == row["id"]


def test_ids_are_spelled_as_stored_and_path_keys_come_back():
    odd = "caf\udce9-\udcff"
    assert normal_id(odd) == loads(dumps(odd)) == "caf\ufffd-\ufffd"
    assert normal_id("s1/agent-a1") == "s1/agent-a1"
    plain = Path("/home/dev/.claude/projects/-p/s1.jsonl")
    assert path_key(plain) == str(plain) and key_path(path_key(plain)) == plain
    one, other = Path(f"/p/{odd}.jsonl"), Path("/p/caf\udce8-\udcff.jsonl")
    assert path_key(one) != path_key(other)  # the same once U+FFFD stands for both bytes: never as keys
    assert key_path(loads(dumps(path_key(one)))) == one


# --- the corpus -------------------------------------------------------------------------------------------


@pytest.mark.skipif(not (CORPUS / "claude").is_dir(), reason="../shared/corpus/claude is not beside this checkout")
def test_corpus_roots_reached_twice_give_the_same_files(tmp_path):
    roots = sorted(path for path in (CORPUS / "claude").iterdir() if path.is_dir())[:3]
    links = []
    for number, root in enumerate(roots):
        links.append(tmp_path / f"link-{number}")
        links[-1].symlink_to(root.resolve())
    once = claude.discover([claude.resolve_root(root) for root in roots])
    twice = claude.discover([claude.resolve_root(path) for path in [*roots, *links, *roots]])
    assert [file.path for file in twice] == [file.path for file in once]
