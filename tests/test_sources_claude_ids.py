"""Issue 28, part 3: a request id that does not identify a request (a proxy sending one constant id on every
call) folds no calls and is said on stderr.

Fixtures are invented sessions in Claude Code's row shapes (tests/claude_2_1_fixtures.py); the simulated provider
records every call it billed, so each test compares with what was billed, not with copied numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_2_1_fixtures import NewSession, Provider
from test_sources_claude_forks import RESUMED_ID, a_fork, an_internal_agent, cli_json, read, report, totals

from xshare.cli import main
from xshare.sources.claude.transcript import REUSED_ID

PROJECT = Path("projects") / "-home-dev-app"


def a_session(root: Path, session_id: str = "9d0c3a57-1e2f-4b6a-8c7d-0e1f2a3b4c5d", provider: Provider | None = None,
              task: str = "Find where the retry policy is configured and explain it.") -> tuple[Path, Provider]:
    """Seven calls: six reads of growing files, then an answer (each read rides along on every later call)."""
    provider = provider or Provider()
    session = NewSession(provider, session_id)
    session.user(task)
    for n in range(1, 7):
        tool = session.call("Let me look." if n == 1 else "", ("Read", {"file_path": f"/home/dev/app/m{n}.py"}))
        session.result(tool, "\n".join(f"{line}\tdef step_{n}_{line}(): return {line}" for line in range(40 * n)))
    session.call("The policy is in m3.py: three tries with backoff.")
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
