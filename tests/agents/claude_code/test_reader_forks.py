"""Issue 19, items 1 and 6: a request is billed once across every file that holds it (forks, 1.0.x resumes that
copied the history, internal agents replaying their session), and every view of a session shows the same calls
and bill (the HTML page includes the compaction calls taken from Claude Code's totals).

Fixtures are invented sessions in Claude Code's row shapes (tests/support/claude_2_1_fixtures.py); the simulated
provider records every call it billed, so each test compares with what was billed, not with copied numbers."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest
from agent_fixtures import Counted
from claude_2_1_fixtures import NewSession, Provider, a_session_with_a_subagent_and_a_compaction, chars
from claude_pages import claude_looking, write_claude_page  # tests/support/ is on sys.path

from tests.conftest import CORPUS, append_in_pieces, needs_corpus
from tests.html.test_pages import assert_page_equals_row, read_page
from xshare.agents.claude_code import many as claude_code
from xshare.agents.claude_code import transcript as claude
from xshare.agents.claude_code.copies import lost_calls, owner_key, scan_ids
from xshare.agents.claude_code.many import measure_one
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe
from xshare.agents.common import counting as counter
from xshare.cli import main
from xshare.html import write as xhtml
from xshare.live import hook, session_state
from xshare.measure import tokens

FORK_ID = "0f1e2d3c-4b5a-4968-8776-655443322110"
RESUMED_ID = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"


def cli_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def report(capsys, root: Path, tmp_path: Path) -> tuple[dict, dict[str, dict]]:
    rows_file = tmp_path / f"rows-{random.random()}.jsonl"
    out = cli_json(capsys, "report", "--all", "--no-history", "--claude-root", str(root), "--hermes-db",
                   str(tmp_path / "none.db"), "--rows", str(rows_file))
    rows = {row["id"]: row for row in map(json.loads, rows_file.read_text().splitlines())}
    return out, rows


def totals(out: dict) -> tuple[int, int]:
    groups = [group for key, group in out["groups"].items() if key.startswith("claude-code/")]
    return sum(group["api_calls"] for group in groups), sum(group["prompt_tokens_billed"] for group in groups)


def a_parent(provider: Provider) -> NewSession:
    parent = NewSession(provider)
    parent.user("Where is the retry policy configured?")
    tool = parent.call("Let me look.", ("Read", {"file_path": "/home/dev/app/retry.py"}))
    parent.result(tool, "\n".join(f"{n}\tdef attempt_{n}(): return backoff({n})" for n in range(1, 120)))
    parent.call("The policy is in retry.py.")
    return parent


def a_fork(root: Path, marked: bool = True) -> tuple[Path, Path, Provider]:
    """`claude --resume <parent> --fork-session` (2.1.x, `marked`): the fork's file starts with the parent's rows,
    re-labelled with the fork's id, each assistant row naming the parent in `requestSessionId`; then its own turn,
    whose call carries the copied history again. Unmarked: the same copy as a 1.0.x resume wrote it (the rows'
    timestamps are the moment of the resume, no `requestSessionId`)."""
    provider = Provider()
    parent = a_parent(provider)
    fork = NewSession(provider, FORK_ID if marked else RESUMED_ID)
    for row in copy.deepcopy(parent.rows):
        if row.get("type") not in ("user", "assistant", "attachment", "system"):
            continue
        row["sessionId"] = fork.session_id
        if row["type"] == "assistant" and marked:
            row["requestSessionId"] = parent.session_id
        if not marked:
            row["timestamp"] = "2026-11-04T08:00:00.000Z"
        fork.rows.append(row)
    fork.count, fork.parent, fork.context = 7200, fork.rows[-1]["uuid"], parent.context
    fork.user("Now grep for the callers.")
    tool = fork.call("", ("Grep", {"pattern": "attempt_"}))
    fork.result(tool, "\n".join(f"app/client.py:{n}:    attempt_{n}()" for n in range(1, 30)))
    fork.call("Found them.")
    folder = root / "projects" / "-home-dev-app"
    parent_path = parent.write(folder / f"{parent.session_id}.jsonl")
    return parent_path, fork.write(folder / f"{fork.session_id}.jsonl"), provider


def read(path: Path, copied=()) -> ClaudeTranscript:
    transcript = ClaudeTranscript(describe(path), tokens.Counter(tokens.choose()), copied=copied)
    transcript.catch_up()
    return transcript


# --- item 1: forks, resumes, internal agents ---------------------------------------------------------


def test_a_fork_bills_only_its_own_calls_and_still_carries_the_copied_context(capsys, tmp_path: Path):
    parent_path, fork_path, provider = a_fork(tmp_path / "cc")
    parent, fork = read(parent_path).row(), read(fork_path).row()
    assert parent["api_calls"] + fork["api_calls"] == len(provider.calls) == 4
    assert parent["prompt_tokens_billed"] + fork["prompt_tokens_billed"] == sum(provider.calls)
    # the fork's own calls re-send the parent's Read: it is still exploration in the fork's context (counted
    # as the simulated provider counts, so that no billing cap trims it)
    by_chars = ClaudeTranscript(describe(fork_path), Counted(chars, "chars/4"))
    by_chars.catch_up()
    parent_by_chars = ClaudeTranscript(describe(parent_path), Counted(chars, "chars/4"))
    parent_by_chars.catch_up()
    copied_read = parent_by_chars.row()["first_time_tokens"]["exploration"]
    assert by_chars.row()["billed_tokens"]["exploration"] > 2 * copied_read > 0
    out, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls))
    assert {key: rows[FORK_ID][key] for key in fork} == fork
    assert cli_json(capsys, "session", str(fork_path)) == fork


def test_a_fork_fed_in_a_thousand_pieces_through_the_hook_equals_the_report(capsys, tmp_path: Path):
    _, fork_path, _ = a_fork(tmp_path / "src")
    target = tmp_path / "live" / "projects" / "-home-dev-app" / fork_path.name
    payload = {"session_id": FORK_ID, "transcript_path": str(target), "hook_event_name": "PostToolBatch"}
    for _ in append_in_pieces(fork_path, target, random.Random(19), 1000):
        hook.run_hook(json.dumps(payload).encode())
    whole = read(fork_path).row()
    from_live = cli_json(capsys, "session", FORK_ID)  # not under any Claude root: from the live ledger
    assert {key: from_live[key] for key in whole if key != "cost_state"} == {
        key: value for key, value in whole.items() if key != "cost_state"}
    assert json.loads(session_state.line_file(FORK_ID).read_text())["api_calls"] == whole["api_calls"] == 2


def test_a_resume_that_copied_the_history_unmarked_is_settled_across_files(capsys, tmp_path: Path):
    """1.0.x: nothing in the copy says it is one; the earlier rows of the same requests, in the other file, do."""
    parent_path, copy_path, provider = a_fork(tmp_path / "cc", marked=False)
    alone = read(copy_path).row()
    assert alone["api_calls"] == 4  # read alone, the copy cannot know
    out, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls))
    assert rows[RESUMED_ID]["api_calls"] == 2 and rows[parent_path.stem]["api_calls"] == 2
    # `xshare session` decides the same way, from the files beside it (no report cache here)
    assert cli_json(capsys, "session", str(copy_path), "--no-cache") == {
        key: value for key, value in rows[RESUMED_ID].items() if key != "machine"}
    # a second report, from its cache, says the same; so does one after the original is gone
    assert totals(report(capsys, tmp_path / "cc", tmp_path)[0]) == totals(out)
    parent_path.unlink()
    assert report(capsys, tmp_path / "cc", tmp_path)[1][RESUMED_ID]["api_calls"] == 4


def test_the_copy_read_in_pieces_with_its_copies_named_equals_it_read_whole(tmp_path: Path):
    _, copy_path, _ = a_fork(tmp_path / "cc", marked=False)
    copied = frozenset(list(read(copy_path).copies.times)[:2])
    whole = read(copy_path, copied).row()
    target = tmp_path / "pieces" / "projects" / "-p" / copy_path.name
    transcript = ClaudeTranscript(describe(target), Counted(chars, "chars/4"), copied=copied)
    for _ in append_in_pieces(copy_path, target, random.Random(6), 300):
        transcript.catch_up()  # the saved state, resumed: what the hook does between two calls
        transcript = ClaudeTranscript.from_state(json.loads(json.dumps(transcript.to_state())), describe(target),
                                                 Counted(chars, "chars/4"))
    by_chars = ClaudeTranscript(describe(copy_path), Counted(chars, "chars/4"), copied=copied)
    by_chars.catch_up()
    assert transcript.row() == {**by_chars.row(), "id": transcript.file.session_id}
    assert whole["api_calls"] == by_chars.row()["api_calls"] == 2


@pytest.mark.parametrize("workers", [1, 2])
def test_copies_in_many_projects_are_settled_alike_on_one_core_and_on_several(tmp_path: Path, monkeypatch,
                                                                             workers: int):
    """The files holding copies are read again over the workers, as the first reading was: the same rows."""
    monkeypatch.setattr(counter, "PARALLEL_MIN_BYTES", 0)
    for n in range(4):  # a session and its 1.0.x resume in each of four projects, every one its own ids
        for path in a_fork(tmp_path / "cc" / f"root{n}", marked=False)[:2]:
            text = path.read_text().replace('"req_', f'"req{n}_').replace('"msg_', f'"msg{n}_')
            for old in (path.stem, *(other.stem for other in path.parent.glob("*.jsonl"))):
                text = text.replace(old, f"{old[:-1]}{n}")
            path.with_name(f"{path.stem[:-1]}{n}.jsonl").write_text(text)
            path.unlink()
    files = claude.discover([tmp_path / "cc" / f"root{n}" / "projects" for n in range(4)])
    choice = tokens.choose()
    rows = claude_code.measure_claude(files, counter.LazyCounter(choice), use_cache=False, workers=workers).rows
    by_id = {row["id"]: row for row in rows}
    assert len(by_id) == 8
    for n in range(4):
        assert by_id[f"{RESUMED_ID[:-1]}{n}"]["api_calls"] == 2  # settled: its first two calls are the parent's
    one_core = claude_code.measure_claude(files, counter.LazyCounter(choice), use_cache=False, workers=1).rows
    assert list(rows) == list(one_core)


def test_who_bills_a_shared_call_does_not_depend_on_the_order_files_come_in():
    held = {
        "b/copy.jsonl": ("interactive", {"r1": "2026-11-04T08:00:00.000Z", "r2": "2026-11-04T08:00:00.000Z",
                                         "r3": "2026-11-04T08:01:00.000Z"}),
        "a/original.jsonl": ("interactive", {"r1": "2026-11-03T09:00:00.000Z", "r2": "2026-11-03T09:01:00.000Z"}),
        "a/original/subagents/agent-acompact-1.jsonl": ("internal", {"r2": "2026-11-03T09:01:00.000Z",
                                                                     "r4": None}),
        "c/copy-of-copy.jsonl": ("interactive", {"r3": "2026-11-05T10:00:00.000Z", "r1": None}),
    }
    expected = {"b/copy.jsonl": {"r1", "r2"}, "a/original.jsonl": set(),
                "a/original/subagents/agent-acompact-1.jsonl": {"r2"}, "c/copy-of-copy.jsonl": {"r1", "r3"}}
    items = list(held.items())
    for seed in range(12):
        random.Random(seed).shuffle(items)
        assert {path: set(lost) for path, lost in lost_calls(dict(items)).items()} == expected
    assert owner_key(None, "interactive", "a") > owner_key("2026-01-01T00:00:00.000Z", "internal", "z")


def an_internal_agent(root: Path) -> tuple[Path, Path, Provider]:
    """2.1.8x's side question (or compaction) file: the session's rows replayed (same request ids, uuids and
    timestamps, unmarked), then its own call."""
    provider = Provider()
    parent = a_parent(provider)
    agent = NewSession(provider, parent.session_id, agent_id="aside_question-7c1e2b9d")
    for row in copy.deepcopy(parent.rows):
        if row.get("type") in ("user", "assistant"):
            agent.rows.append({**row, "isSidechain": True, "agentId": agent.agent_id})
    agent.count, agent.parent, agent.context = 7200, agent.rows[-1]["uuid"], parent.context
    agent.user("Which file was it again?")
    agent.call("retry.py.")
    folder = root / "projects" / "-home-dev-app"
    main_path = parent.write(folder / f"{parent.session_id}.jsonl")
    agent_path = agent.write(folder / parent.session_id / "subagents" / f"agent-{agent.agent_id}.jsonl")
    return main_path, agent_path, provider


def test_an_internal_agent_bills_only_its_own_call(capsys, tmp_path: Path):
    main_path, agent_path, provider = an_internal_agent(tmp_path / "cc")
    assert scan_ids(agent_path)[0] > scan_ids(main_path)[0]  # its own call's request id besides the replayed
    row = read(agent_path).row()
    assert row["source"] == "internal" and row["api_calls"] == 1 and row["prompt_tokens_billed"] == provider.calls[-1]
    out, _ = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls))
    main_path.unlink()  # the only file left holding those calls bills them
    assert read(agent_path).row()["api_calls"] == 3


def test_a_broken_parent_leaves_the_agents_calls_its_own(tmp_path: Path):
    main_path, agent_path, _ = an_internal_agent(tmp_path / "cc")
    main_path.unlink()
    main_path.mkdir()  # a folder where the session's transcript should be: nothing to read, no traceback
    transcript = read(agent_path)
    assert transcript.row()["api_calls"] == 3 and not transcript.problems


@needs_corpus
def test_the_corpus_bills_each_distinct_request_once(capsys, tmp_path: Path):
    roots = sorted(path for path in (CORPUS / "claude").iterdir() if (path / "projects").is_dir())
    if not roots:
        pytest.skip("no Claude Code transcripts in the corpus")
    distinct: set[str] = set()
    for root in roots:
        for path in (root / "projects").rglob("*.jsonl"):
            if "tool-results" in path.parts:
                continue
            for line in path.read_bytes().splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                message = row.get("message") if isinstance(row, dict) and row.get("type") == "assistant" else None
                if (isinstance(message, dict) and message.get("usage") is not None
                        and message.get("model") != "<synthetic>" and not row.get("isApiErrorMessage")):
                    distinct.add(row.get("requestId") or message.get("id") or row.get("uuid"))
    args = [arg for root in roots for arg in ("--claude-root", str(root))]
    assert main(["report", "--all", "--json", "--no-history", *args, "--hermes-db", str(tmp_path / "no.db")]) == 0
    out = json.loads(capsys.readouterr().out)
    groups = [group for key, group in out["groups"].items() if key.startswith("claude-code/")]
    recorded = sum(group["api_calls"] - group["unrecorded_calls"] for group in groups)
    assert recorded == len(distinct)


# --- item 6: every view of a session shows the same calls and bill -------------------------------------


def test_the_page_of_a_session_with_unwritten_compaction_calls_equals_its_row(capsys, tmp_path: Path):
    main_path, _, provider = a_session_with_a_subagent_and_a_compaction(tmp_path / "cc")
    row, _ = measure_one(describe(main_path), counter.LazyCounter(tokens.choose()))
    assert row["unrecorded_calls"] == 1
    assert cli_json(capsys, "session", str(main_path)) == row
    page = read_page(write_claude_page(describe(main_path), tokens.choose(), tmp_path / "page.html",
                                       [str(tmp_path / "cc")]))
    assert_page_equals_row(page, row)
    assert "its records do not hold (compactions" in "".join(page.text)
    looking = claude_looking([str(tmp_path / "cc")], tokens.choose())
    index, _ = xhtml.write_index(looking, tmp_path / "pages" / "index.html")
    indexed = read_page(index.parent / xhtml.page_name(main_path.stem))
    assert_page_equals_row(indexed, row)
    # and the report's row for it: the same calls and bill
    _, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert {key: rows[main_path.stem][key] for key in row} == row
    assert rows[main_path.stem]["api_calls"] + 2 == len(provider.calls)  # the subagent's two are its own row's


def test_a_sessions_transcript_is_scanned_once_for_its_internal_agents_until_it_changes(tmp_path: Path,
                                                                                      monkeypatch):
    from xshare.agents.claude_code import copies

    main_path, agent_path, _ = an_internal_agent(tmp_path / "cc")
    scanned: list[Path] = []
    real_scan = copies.scan_ids
    monkeypatch.setattr(copies, "scan_ids", lambda path: scanned.append(path) or real_scan(path))
    monkeypatch.setattr(copies, "_SCANNED", {})
    assert read(agent_path).row()["api_calls"] == 1
    assert read(agent_path).row()["api_calls"] == 1  # a second agent of the session: the scan is reused
    assert scanned == [main_path]
    lines = main_path.read_text().splitlines(keepends=True)
    main_path.write_text(lines[0])  # the session's transcript rewritten without the replayed calls
    assert read(agent_path).row()["api_calls"] == 3  # scanned again: they are the agent's own now
    assert scanned == [main_path, main_path]
