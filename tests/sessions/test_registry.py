"""The one registry: an adapter for each line of the agents' table, with the whole protocol, and every agent's
session found by the path of its file (told by its content, not its name), by id prefix, refused when a prefix
is ambiguous, and listed by `html --index`."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from importlib import import_module
from pathlib import Path
from types import ModuleType

import pytest
from agent_fixtures import codex_session, gemini_json
from claude_2_1_fixtures import ORPHAN_SESSION, orphan_subagents

from tests.agents.gemini.sample import GEMINI_ID
from tests.agents.hermes.sample import HERMES_ID, hermes_db
from xshare.agents.claude_code.adapter import ClaudeCode
from xshare.agents.claude_code.files import discover
from xshare.agents.common.counting import LazyCounter
from xshare.agents.protocol import Adapter, Looking
from xshare.agents.table import AGENTS, AgentLine
from xshare.cli import main
from xshare.demo.corpus import write_demo_corpus
from xshare.measure import tokens
from xshare.measure.tokens import TokenizerChoice
from xshare.sessions.every_agent import measure
from xshare.sessions.registry import REGISTRY, check


def run(capsys: pytest.CaptureFixture, *arguments: str) -> tuple[int, str, str]:
    code = main(list(arguments))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def sample_of(line: AgentLine) -> ModuleType:
    """An agent's tests/agents/<name>/sample.py: `sample_sessions(home)` writes its sessions in its default place
    under a home and says the file and the ids its index pages link. A new agent brings its own."""
    return import_module(f"tests.agents.{line.adapter.split('.')[2]}.sample")


def every_agent(home: Path, tmp_path: Path) -> dict[str, Path]:
    """One session of each agent in its default place, by agent: its file."""
    return {line.agent: sample_of(line).sample_sessions(home)[0] for line in AGENTS}


def test_the_registry_holds_the_tables_adapters_with_the_whole_protocol():
    assert [adapter.agent for adapter in REGISTRY] == [line.agent for line in AGENTS]
    # the table's order, not a list of agents: adding one is its folder, its line and its tests (issue 33)
    assert [line.agent for line in AGENTS][:6] == ["claude-code", "hermes", "codex", "gemini", "opencode", "openclaw"]
    assert all(isinstance(adapter, Adapter) for adapter in REGISTRY)
    with pytest.raises(ValueError, match="share an agent"):
        check((*REGISTRY, ClaudeCode()))

    class Partial:
        agent, name, flag = "partial", "Partial", "partial_home"

    with pytest.raises(TypeError, match="adapter protocol"):
        check((*REGISTRY, Partial()))


class Recording:
    """A caller's token counter that keeps what it was given: one token a character."""

    name, fallbacks = "one-per-character", 0

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.flushed = 0

    def count(self, text: str) -> int:
        self.texts.append(text)
        return len(text)

    def flush(self) -> None:
        self.flushed += 1


def test_each_adapter_reads_with_the_callers_counter(isolated_home: Path, tmp_path: Path):
    """The counter is an object the caller passes down (issue 32), not one each adapter makes for itself:
    every text of the file is counted by it, its name is the rows' tokenizer, and what it counted is flushed."""
    files = every_agent(isolated_home, tmp_path)
    for adapter in REGISTRY:
        counter = Recording()
        ledgers: dict = {}
        rows = adapter.read(files[adapter.agent], counter, Counter(), ledgers)
        assert rows and {row["tokenizer"] for row in rows} == {"one-per-character"}, adapter.agent
        assert counter.texts and counter.flushed == 1, adapter.agent
        assert set(ledgers) == {row["id"] for row in rows}, adapter.agent


class RecordingMade(Recording):
    """What a request's counter makes (measure.tokens.Counter's shape): no count store, so a report that
    would count loads it first, as a real one does."""

    choice = TokenizerChoice("one-per-character", None, "", remember=False)
    store, fast, loaded, why, known_before = None, False, None, "", None

    def load(self, fast: bool = False, why: str = "") -> None:
        pass


class RequestRecording(LazyCounter):
    """A request's counter (Looking.counter) that makes a Recording: the one every adapter must count with."""

    def __init__(self) -> None:
        super().__init__(RecordingMade.choice)
        self.recording = RecordingMade()

    def made(self) -> RecordingMade:  # type: ignore[override]
        self._made = self.recording  # type: ignore[assignment]
        return self.recording


def test_each_adapter_measures_with_the_counter_its_looking_carries(isolated_home: Path, tmp_path: Path):
    """`measure` counts with `Looking.counter` (issue 32), not a counter of the process's or its own: its rows
    say the counter's tokenizer, every text was counted by it, and the report's tokenizer is its choice; one
    counter serves every agent of a report (`sessions/every_agent.py`)."""
    every_agent(isolated_home, tmp_path)
    homes = {adapter.agent: None for adapter in REGISTRY}
    for adapter in REGISTRY:
        counter = RequestRecording()
        gathered = adapter.measure(Looking(homes, tokens.choose(), use_cache=False, counter=counter))
        assert gathered is not None and gathered.tokenizer.name == "one-per-character", adapter.agent
        rows = list(gathered.rows)
        assert rows and {row["tokenizer"] for row in rows} == {"one-per-character"}, adapter.agent
        assert counter.recording.texts, adapter.agent
    counter = RequestRecording()
    measured = measure(Looking(homes, tokens.choose(), use_cache=False, counter=counter))
    assert {row["agent"] for row in measured.rows} == {adapter.agent for adapter in REGISTRY}
    assert {row["tokenizer"] for row in measured.rows} == {"one-per-character"}
    assert measured.tokenizer.name == "one-per-character" and counter.recording.flushed >= len(REGISTRY)


def test_session_by_path_is_told_by_content(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    files = every_agent(isolated_home, tmp_path)
    opencode_one = tmp_path / "one" / "opencode.db"  # OpenCode's fixture holds two sessions: keep one
    opencode_one.parent.mkdir()
    for agent, path in files.items():
        # renamed to a name that says nothing (Codex's and Gemini CLI's were read as Claude Code's, 0 calls)
        plain = tmp_path / (path.stem if agent == "claude-code" else f"record-of-{agent}")  # Claude's id: its stem
        shutil.copyfile(path, plain)
        code, out, err = run(capsys, "session", str(plain), "--json")
        if agent == "opencode":  # a database of several sessions names none: refused with them
            assert code == 2 and "ses_b001" in err and "ses_b002" in err and len(err.splitlines()) == 1
            continue
        row = json.loads(out)
        assert code == 0 and row["agent"] == agent and row["api_calls"] >= 1, (agent, err)
        by_id = json.loads(run(capsys, "session", row["id"], "--json")[1])
        assert by_id == row  # the same figures as found by its id


def test_session_and_html_by_id_prefix_for_each_agent(isolated_home: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture):
    every_agent(isolated_home, tmp_path)
    rows = [json.loads(line) for line in run_rows(capsys, tmp_path)]
    assert {row["agent"] for row in rows} == {adapter.agent for adapter in REGISTRY}
    ids = {row["id"] for row in rows if "/" not in row["id"]}  # a session's prefix names it, not its subagents
    for row in (row for row in rows if row["id"] in ids):
        prefix = next(row["id"][:n] for n in range(4, len(row["id"]) + 1)
                      if sum(other.startswith(row["id"][:n]) for other in ids) == 1)
        code, out, err = run(capsys, "session", prefix, "--json")
        assert code == 0 and json.loads(out)["id"] == row["id"], (prefix, err)
        page = tmp_path / f"{row['agent']}.html"
        code, out, err = run(capsys, "html", prefix, "-o", str(page))
        assert code == 0 and page.is_file(), (prefix, err)


def run_rows(capsys: pytest.CaptureFixture, tmp_path: Path) -> list[str]:
    rows = tmp_path / "rows.jsonl"
    assert run(capsys, "report", "--all", "--rows", str(rows), "--no-history")[0] == 0
    return [line for line in rows.read_text().splitlines() if json.loads(line)["agent"]]


def test_an_ambiguous_prefix_is_refused_with_the_candidates(isolated_home: Path, capsys: pytest.CaptureFixture):
    codex_session(isolated_home / ".codex")
    codex_session(isolated_home / ".codex", "0190aaaa-1111-7000-8000-000000000002")
    for command in ("session", "html"):
        code, out, err = run(capsys, command, "0190aaaa")
        assert code == 2 and out == ""
        assert len(err.splitlines()) == 1 and "names 2 sessions" in err
        assert "0190aaaa-1111-7000-8000-000000000001 (codex)" in err and "0190aaaa-1111-7000-8000-000000000002" in err


def test_html_index_lists_every_agents_sessions(isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    samples = {line.agent: sample_of(line).sample_sessions(isolated_home)[1] for line in AGENTS}
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    code, out, err = run(capsys, "html", "--index", "-o", str(index))
    assert code == 0 and out.strip() == str(index), err
    text = index.read_text()
    for agent, session_id in ((agent, session_id) for agent, ids in samples.items() for session_id in ids):
        assert session_id in text, session_id
        linked = [page for page in index.parent.glob("*.html") if session_id in page.name]
        assert linked and "Call 1" in linked[0].read_text() or agent == "hermes", session_id  # its page: totals



def test_html_finds_a_claude_session_when_another_agents_flag_is_given(isolated_home: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture):
    files = every_agent(isolated_home, tmp_path)
    session_id = files["claude-code"].stem
    page = tmp_path / "claude.html"
    root = next(folder for folder in files["claude-code"].parents if folder.name == "projects")
    code, out, err = run(capsys, "html", session_id, "--claude-root", str(root), "--hermes-db", str(files["hermes"]),
                         "-o", str(page))
    assert code == 0 and page.is_file(), err  # it used to look for the id in Hermes's database only
    assert "Claude Code" in page.read_text()
    # named folders are where it looks (issue 21): Hermes's alone does not hold a Claude Code session
    code, _, err = run(capsys, "html", session_id, "--hermes-db", str(files["hermes"]), "-o", str(page))
    assert code == 2 and "matches" in err


def test_a_prefix_names_a_session_before_its_subagents_and_them_when_it_is_gone(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture):
    """Issue 28: `xshare session 52af37d3` said no session matched, though four subagents' ids start with it
    (their session's own transcript was gone)."""
    projects = write_demo_corpus(tmp_path / "claude")
    orphan_subagents(projects)
    flags = ["--claude-root", str(projects), "--estimate"]
    for command in ("session", "html"):
        code, out, err = run(capsys, command, ORPHAN_SESSION[:8], *flags)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "names 2 subagent sessions (the file of the session that ran them is gone)" in err
        assert f"{ORPHAN_SESSION}/agent-a1f0c2d3e4b5a697 (claude-code)" in err and "agent-a2e1d0c3b4a59687" in err
    code, out, err = run(capsys, "session", f"{ORPHAN_SESSION}/agent-a2e1", "--json", *flags)
    assert code == 0 and json.loads(out)["id"] == f"{ORPHAN_SESSION}/agent-a2e1d0c3b4a59687", err
    main_file = next(file for file in discover([projects]) if file.parent_id and file.parent_id != ORPHAN_SESSION)
    code, out, err = run(capsys, "session", main_file.parent_id[:8], "--json", *flags)
    assert code == 0 and json.loads(out)["id"] == main_file.parent_id, err  # the session, not its subagents


def test_an_id_two_files_hold_is_refused_with_both(tmp_path: Path, capsys: pytest.CaptureFixture):
    """One id in two Hermes databases, and a Gemini chat in two homes named: `session` and `html` name both
    files rather than answer with whichever they read first. (Two files of one chat folder are one session:
    tests/agents/gemini/test_reader.py.)"""
    first, second = hermes_db(tmp_path / "one" / "state.db"), hermes_db(tmp_path / "two" / "state.db")
    gemini, _ = gemini_json(tmp_path / "gemini")
    elsewhere = tmp_path / "gemini-copy" / gemini.relative_to(tmp_path / "gemini")
    elsewhere.parent.mkdir(parents=True)
    shutil.copyfile(gemini, elsewhere)
    flags = ["--hermes-db", str(first), "--hermes-db", str(second), "--gemini-home", str(tmp_path / "gemini"),
             "--gemini-home", str(tmp_path / "gemini-copy"), "--estimate"]
    for command in ("session", "html"):
        for session_id, where in ((HERMES_ID, (first, second)), (GEMINI_ID, (gemini, elsewhere))):
            code, out, err = run(capsys, command, session_id, *flags)
            assert code == 2 and out == "" and len(err.splitlines()) == 1, err
            assert f"{session_id!r} is the id of 2 sessions in different files" in err
            assert all(str(path) in err for path in where), err
    code, out, err = run(capsys, "session", HERMES_ID, "--json", "--hermes-db", str(second), "--estimate")
    assert code == 0 and json.loads(out)["id"] == HERMES_ID, err  # that database named alone: its session


def test_an_unusable_vocabulary_falls_back_once_for_every_agent(isolated_home: Path, tmp_path: Path):
    """The request's counter knows the choice it made: a vocabulary that fails its check makes the whole
    report an estimate, every agent's rows and the report's tokenizer line alike, never a mix."""
    every_agent(isolated_home, tmp_path)
    vocab = tmp_path / "o200k_base.tiktoken"
    vocab.write_text("not a vocabulary\n")
    looking = Looking({adapter.agent: None for adapter in REGISTRY}, tokens.choose(vocab=str(vocab)), use_cache=False)
    assert looking.choice.name == tokens.O200K  # the file is there: checked only when a text is counted
    measured = measure(looking)
    assert {row["agent"] for row in measured.rows} == {adapter.agent for adapter in REGISTRY}
    assert {row["tokenizer"] for row in measured.rows} == {tokens.ESTIMATE}
    assert measured.tokenizer.name == tokens.ESTIMATE and measured.tokenizer.note.startswith("vocabulary unusable")
