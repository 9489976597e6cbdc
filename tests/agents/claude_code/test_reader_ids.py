"""Issue 28, parts 3 and 4: a request id that does not identify a request (a proxy sending one constant id on
every call) folds no calls and is said on stderr; a transcript copied into another folder or root (a backup) is
billed once, and counted as one session, by every command that reads many sessions (report, sessions, collect,
html --index) and by `xshare session`.

Fixtures are invented sessions in Claude Code's row shapes (tests/support/claude_2_1_fixtures.py); the simulated
provider records every call it billed, so each test compares with what was billed, not with copied numbers."""

from __future__ import annotations

import copy
import json
import random
import shutil
from pathlib import Path

import pytest
from claude_2_1_fixtures import NewSession, Provider

from tests.agents.claude_code.test_reader_forks import (
    RESUMED_ID,
    a_fork,
    an_internal_agent,
    cli_json,
    read,
    report,
    totals,
)
from xshare.agents.claude_code import copies
from xshare.agents.claude_code.copies import CallTimes, lost_calls, settle
from xshare.agents.claude_code.many import COPY_FILES
from xshare.agents.claude_code.transcript import REUSED_ID
from xshare.cli import main
from xshare.measure.digests import digest

PROJECT = Path("projects") / "-home-dev-app"


def a_session(root: Path, session_id: str = "9d0c3a57-1e2f-4b6a-8c7d-0e1f2a3b4c5d", provider: Provider | None = None,
              task: str = "Find where the retry policy is configured and explain it.",
              cost_state: bool = False) -> tuple[Path, Provider]:
    """Seven calls: six reads of growing files, then an answer (each read rides along on every later call); with
    `cost_state`, Claude Code's own totals after them (2.1.3xx)."""
    provider = provider or Provider()
    session = NewSession(provider, session_id)
    session.user(task)
    for n in range(1, 7):
        tool = session.call("Let me look." if n == 1 else "", ("Read", {"file_path": f"/home/dev/app/m{n}.py"}))
        session.result(tool, "\n".join(f"{line}\tdef step_{n}_{line}(): return {line}" for line in range(40 * n)))
    session.call("The policy is in m3.py: three tries with backoff.")
    if cost_state:
        session.cost_state()
    return session.write(root / PROJECT / f"{session_id}.jsonl"), provider


def through_a_proxy(path: Path, message_ids: str) -> Path:
    """The same transcript as a proxy would have it written: one constant request id on every call, and the
    message ids it gives (`own`: one of its own per response; `constant`: one for all; `none`)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        if row.get("type") != "assistant":
            continue
        row["requestId"] = "req_proxy_constant"
        message = row["message"]
        if message_ids == "own":
            message["id"] = "gw-" + message["id"][::-1]
        elif message_ids == "constant":
            message["id"] = "gw-msg"
        else:
            del message["id"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# --- part 3: request ids that do not identify a request ------------------------------------------------


@pytest.mark.parametrize("message_ids", ["own", "constant", "none"])
def test_a_proxys_constant_request_id_folds_no_calls(capsys, tmp_path: Path, message_ids: str):
    real, provider = a_session(tmp_path / "real")
    expected = read(real).row()
    assert expected["api_calls"] == len(provider.calls) == 7  # several rows a response, each response one call
    proxied = through_a_proxy(a_session(tmp_path / "proxy")[0], message_ids)
    transcript = read(proxied)
    assert transcript.row() == expected  # every call, its bill and what it carried, as with real ids
    assert transcript.problems == {REUSED_ID: 6}
    assert expected["exploration_share_of_context"] > 0.3
    rows_file = tmp_path / "rows.jsonl"
    assert main(["report", "--all", "--no-history", "--claude-root", str(tmp_path / "proxy"), "--hermes-db",
                 str(tmp_path / "none.db"), "--rows", str(rows_file), "--json"]) == 0
    out, err = capsys.readouterr()
    assert totals(json.loads(out)) == (7, sum(provider.calls))
    assert f"xshare: {REUSED_ID}: 6\n" in err  # said, as every other thing not read as it should
    row = json.loads(rows_file.read_text())
    assert cli_json(capsys, "session", str(proxied)) == {key: value for key, value in row.items() if key != "machine"}


def test_real_ids_are_never_reported_as_reused(tmp_path: Path):
    path, _ = a_session(tmp_path)
    assert not read(path).problems


@pytest.mark.parametrize("message_ids", ["own", "none"])
def test_a_resume_of_a_proxied_session_still_bills_each_call_once(capsys, tmp_path: Path, message_ids: str):
    """1.0.x's resume copies the history (same ids, same usage) into a new file: still copies, however constant
    the proxy's request id."""
    parent_path, copy_path, provider = a_fork(tmp_path / "cc", marked=False)
    for path in (parent_path, copy_path):
        through_a_proxy(path, message_ids)
    out, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls))
    assert rows[RESUMED_ID]["api_calls"] == 2 and rows[parent_path.stem]["api_calls"] == 2


def test_an_internal_agent_behind_a_proxy_bills_its_own_call(capsys, tmp_path: Path):
    """Its replay of the session's calls is the session's; its own call, under the same constant request id but
    its own message id, is its own."""
    main_path, agent_path, provider = an_internal_agent(tmp_path / "cc")
    for path in (main_path, agent_path):
        through_a_proxy(path, "own")
    row = read(agent_path).row()
    assert row["api_calls"] == 1 and row["prompt_tokens_billed"] == provider.calls[-1]
    out, _ = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls))


# --- part 4: copies settled across everything a command reads ------------------------------------------


def packed_times(times: dict) -> CallTimes:
    """A file's calls (keys) and times as a worker packs them and the rows cache keeps them (through JSON)."""
    packed = CallTimes()
    for key, time in times.items():
        packed.own(key, time)
    return CallTimes.from_json(json.loads(json.dumps(packed.to_json())))


@pytest.mark.parametrize("small_history", [1 << 19, 0], ids=["repeats-in-a-set", "repeats-in-sorted-arrays"])
def test_settling_many_files_decides_as_settling_them_together(monkeypatch, small_history):
    """`settle` (every file a command reads, a file's times decoded at a time, packed as the rows cache keeps
    them) names the calls each file loses exactly as `lost_calls` (every file's times at once) does, in any
    order, whether its repeats are found in a set (a history of up to SMALL_HISTORY calls) or in sorted
    arrays (past it); a time of another form than Claude Code's is compared as the text it was."""
    monkeypatch.setattr(copies, "SMALL_HISTORY", small_history)
    rng = random.Random(28)
    calls = [f"req_{n}\x1fmsg_{n}\x1f{1000 + n}" for n in range(60)]
    held, keys = {}, {}
    for n in range(25):
        times = {key: rng.choice([None, f"2026-11-0{rng.randrange(1, 4)}T09:00:00.000Z",
                                  f"2026-11-0{rng.randrange(1, 4)}T09:00:00Z"])
                 for key in rng.sample(calls, rng.randrange(0, 12))}
        keys[f"p{n % 4}/file{n}.jsonl"] = times
        held[f"p{n % 4}/file{n}.jsonl"] = (rng.choice(["interactive", "subagent", "internal"]),
                                           {digest(key): time for key, time in times.items()})
        assert dict(packed_times(times).items()) == held[f"p{n % 4}/file{n}.jsonl"][1]
    expected = {name: lost for name, lost in lost_calls(held).items() if lost}
    assert expected and len(expected) < len(held)
    for seed in range(5):
        items = list(held.items())
        random.Random(seed).shuffle(items)
        files = [(name, source) for name, (source, _) in items]
        assert settle(files, lambda index, items=items: packed_times(keys[items[index][0]])) == expected


def backed_up(tmp_path: Path, where: str, cost_state: bool = False) -> tuple[list[str], Path, Path, Provider]:
    """A session and a backup copy of its transcript: in `<project>/sessions/` (a layout backups use), or in a
    second Claude root (a copy of the whole config folder). Returns the --claude-root arguments too."""
    original, provider = a_session(tmp_path / "claude", cost_state=cost_state)
    if where == "sessions folder":
        copy = original.parent / "sessions" / original.name
        roots = ["--claude-root", str(tmp_path / "claude")]
    else:
        copy = tmp_path / "backup" / PROJECT / original.name
        roots = ["--claude-root", str(tmp_path / "claude"), "--claude-root", str(tmp_path / "backup")]
    copy.parent.mkdir(parents=True)
    shutil.copy2(original, copy)
    return roots, original, copy, provider


def run_json(capsys, *argv: str) -> dict:
    return run_with_err(capsys, *argv)[0]


def run_with_err(capsys, *argv: str) -> tuple[dict, str]:
    assert main([*argv, "--json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


@pytest.mark.parametrize("cost_state", [False, True], ids=["2.1.2xx", "with cost-state"])
@pytest.mark.parametrize("where", ["sessions folder", "another root"])
def test_a_backup_copy_is_one_session_in_every_view(capsys, tmp_path: Path, where: str, cost_state: bool):
    """Issue 28: the copy bills nothing twice (its calls are the original's) and is no second session: every
    command that reads many leaves it out and says so once; `session` of its id, or of either file, answers
    with the one session. With Claude Code's own totals in the file (2.1.3xx), the copy no more bills them as
    calls no file recorded."""
    roots, original, copy, provider = backed_up(tmp_path, where, cost_state)
    billed = (len(provider.calls), sum(provider.calls))
    no_hermes = ["--hermes-db", str(tmp_path / "none.db")]
    report_out, err = run_with_err(capsys, "report", "--all", "--no-history", *roots, *no_hermes)
    assert totals(report_out) == billed and report_out["sessions"] == 1  # not (14, twice the bill), not 2
    assert err.count(f"xshare: {COPY_FILES}: 1\n") == 1, err
    listed, err = run_with_err(capsys, "sessions", "--all", *roots, *no_hermes)
    assert [(entry["api_calls"], entry["prompt_tokens_billed"]) for entry in listed["sessions"]] == [billed]
    assert listed["sessions_in_window"] == 1 and COPY_FILES in err
    rows_file = tmp_path / "collected.jsonl"
    assert main(["collect", "--all", "--rows", str(rows_file), *roots, *no_hermes]) == 0
    capsys.readouterr()
    collected = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert [(row["api_calls"], row["prompt_tokens_billed"]) for row in collected] == [billed]
    index = tmp_path / "pages" / "index.html"
    index.parent.mkdir()
    assert main(["html", "--index", "-o", str(index), *roots, *no_hermes]) == 0
    assert COPY_FILES in capsys.readouterr().err
    assert index.read_text().count(f'data-session="{original.stem}"') == 1 and "1 session (" in index.read_text()
    assert len(list(index.parent.glob("*.html"))) == 2  # the index and the one session's page
    # `session` of the id, or of either file, is the one session; the file that copies it says so on stderr (of
    # two files alike the first path bills, copies.py: the one under backup/ sorts before claude/)
    by_id = run_json(capsys, "session", original.stem, *roots)
    assert (by_id["api_calls"], by_id["prompt_tokens_billed"]) == billed
    notes = []
    for path in (original, copy):
        view, err = run_with_err(capsys, "session", str(path), *roots)
        assert (view["api_calls"], view["prompt_tokens_billed"]) == billed
        notes += [line for line in err.splitlines() if "only copies the session of" in line]
    the_copy = copy if where == "sessions folder" else original
    assert len(notes) == 1 and notes[0].startswith(f"xshare: {the_copy} ")
    page = tmp_path / "page.html"
    assert main(["html", str(the_copy), "-o", str(page), *roots]) == 0
    assert "only copies the session of" in capsys.readouterr().err
    assert f'<data id="row-api_calls" value="{billed[0]}">' in page.read_text()
    # a second report, from its cache, says the same; with the original gone, the copy is the session
    assert totals(run_json(capsys, "report", "--all", "--no-history", *roots, *no_hermes)) == billed
    original.unlink()
    report_out, err = run_with_err(capsys, "report", "--all", "--no-history", *roots, *no_hermes)
    assert totals(report_out) == billed and report_out["sessions"] == 1 and COPY_FILES not in err


def test_a_warm_report_settles_copies_again_only_when_the_files_differ(capsys, monkeypatch, tmp_path: Path):
    """The rows cache names the files its copies were settled over: a report over the same files, none changed,
    takes their settling as it is; over other files (a root left out, then named again) it settles again,
    and the copy is still one session."""
    roots, original, copy, provider = backed_up(tmp_path, "another root")
    billed = (len(provider.calls), sum(provider.calls))
    settled = []
    monkeypatch.setattr(copies, "settle", lambda *args, real=copies.settle: settled.append(1) or real(*args))
    argv = ("report", "--all", "--no-history", "--hermes-db", str(tmp_path / "none.db"))

    def reported(*more: str) -> tuple[tuple[int, int], int, str]:
        before = len(settled)
        out, err = run_with_err(capsys, *argv, *more)
        return totals(out), len(settled) - before, err

    assert reported(*roots)[:2] == (billed, 1)  # cold: read and settled
    figures, settling, err = reported(*roots)
    assert (figures, settling) == (billed, 0) and COPY_FILES in err  # warm: the copy still said, not settled
    assert reported("--claude-root", str(tmp_path / "claude"))[:2] == (billed, 1)  # one root: its own settling
    assert reported(*roots)[:2] == (billed, 1)  # both again: settled again, not taken from the one root's
    assert reported(*roots)[:2] == (billed, 0)
    copy.write_text(copy.read_text())  # rewritten alike: a newer modification time is another file
    assert reported(*roots)[:2] == (billed, 1)


def test_a_copy_that_went_on_on_its_own_is_a_session_of_its_own_calls(capsys, tmp_path: Path):
    """A copy that bills calls of its own (the config folder copied to another machine, the session resumed
    there too) stays a session: those calls are billed nowhere else. The calls both files hold are billed
    once; `session` of the id names both files rather than pick one."""
    provider = Provider()
    session = NewSession(provider)
    session.user("Find where the retry policy is configured.")
    for n in range(1, 5):
        tool = session.call("", ("Read", {"file_path": f"/home/dev/app/m{n}.py"}))
        session.result(tool, "\n".join(f"def step_{n}_{line}(): return {line}" for line in range(30 * n)))
    elsewhere = NewSession(provider, session.session_id)
    elsewhere.rows, elsewhere.count, elsewhere.parent = copy.deepcopy(session.rows), 500, session.parent
    elsewhere.context = session.context
    session.call("The policy is in m3.py.")
    elsewhere.user("And the timeouts?")
    elsewhere.call("In m4.py.")
    original = session.write(tmp_path / "claude" / PROJECT / f"{session.session_id}.jsonl")
    other = elsewhere.write(tmp_path / "other" / PROJECT / original.name)
    roots = ["--claude-root", str(tmp_path / "claude"), "--claude-root", str(tmp_path / "other")]
    out, err = run_with_err(capsys, "report", "--all", "--no-history", *roots, "--hermes-db", str(tmp_path / "x.db"))
    assert totals(out) == (len(provider.calls), sum(provider.calls)) == (6, sum(provider.calls))
    assert out["sessions"] == 2 and COPY_FILES not in err
    views = sorted(run_json(capsys, "session", str(path), *roots)["api_calls"] for path in (original, other))
    assert views == [1, 5]  # four shared calls and one of its own, billed by the earlier file; one of its own
    assert main(["session", session.session_id, *roots]) == 2
    assert "is the id of 2 sessions in different files" in capsys.readouterr().err


def test_a_fork_stays_a_session_even_with_no_call_of_its_own(capsys, tmp_path: Path):
    """`--fork-session` gives the fork an id of its own: with its own calls it is a session of those; forked and
    left (every call in it marked as the parent's) it is a session of no calls, as any session opened and left,
    not a copy."""
    parent_path, fork_path, provider = a_fork(tmp_path / "cc")
    left = fork_path.with_name("1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9.jsonl")
    rows = [json.loads(line) for line in fork_path.read_text().splitlines()]
    marked = [row for row in rows if row.get("type") != "assistant" or row.get("requestSessionId")]
    left.write_text("".join(json.dumps({**row, "sessionId": left.stem}) + "\n" for row in marked[:-1]))
    out, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (len(provider.calls), sum(provider.calls)) and out["sessions"] == 3
    assert rows[fork_path.stem]["api_calls"] == 2 and rows[left.stem]["api_calls"] == 0


@pytest.mark.parametrize("message_ids", ["own", "none"])
def test_sessions_in_other_projects_through_one_proxy_keep_their_own_calls(capsys, tmp_path: Path, message_ids: str):
    """Settled across every file read, two sessions sent through one proxy's constant request id are still two
    sessions' calls: their message ids, or the prompts they were billed, differ."""
    provider = Provider()
    first, _ = a_session(tmp_path / "cc", "11111111-1e2f-4b6a-8c7d-0e1f2a3b4c5d", provider)
    second, _ = a_session(tmp_path / "other", "22222222-1e2f-4b6a-8c7d-0e1f2a3b4c5d", provider,
                          task="Why does the second retry wait so long?")
    moved = tmp_path / "cc" / "projects" / "-home-dev-other" / second.name
    moved.parent.mkdir(parents=True)
    second.rename(moved)
    for path in (first, moved):
        through_a_proxy(path, message_ids)
    out, rows = report(capsys, tmp_path / "cc", tmp_path)
    assert totals(out) == (14, sum(provider.calls))
    assert rows[first.stem]["api_calls"] == rows[moved.stem]["api_calls"] == 7
