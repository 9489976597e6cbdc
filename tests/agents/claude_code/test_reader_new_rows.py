"""Claude Code 2.1.3xx: the six new row types, compaction calls billed but never written (cost-state),
and `claude -p` / SDK sessions grouped as automated. Fixtures: invented sessions in 2.1.332's shapes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from agent_fixtures import Counted
from claude_2_1_fixtures import NewSession, Provider, a_session_with_a_subagent_and_a_compaction, chars

from tests.conftest import append_in_pieces
from xshare.agents.claude_code.costs import cost_totals
from xshare.agents.claude_code.transcript import AUTOMATED, INTERACTIVE, SUBAGENT, ClaudeTranscript, describe
from xshare.agents.claude_code.unrecorded import charge_unrecorded, complete_with_unrecorded
from xshare.cli import main
from xshare.live import hook, session_state
from xshare.measure.ledger import CATEGORIES

NEW_TYPES = ("atis-latch", "api-request", "api-request-shape", "api-request-blob", "tools-used", "cost-state")


def read(path: Path) -> ClaudeTranscript:
    transcript = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    transcript.catch_up()
    return transcript


def family_row(main_path: Path, agent_path: Path) -> dict:
    return complete_with_unrecorded(read(main_path).row(), [read(agent_path).row()])


def cli_json(capsys, *argv: str) -> dict | list:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# --- the new row types ------------------------------------------------------------------------------


def test_the_six_new_types_are_known_and_add_no_context(tmp_path: Path):
    main_path, _, _ = a_session_with_a_subagent_and_a_compaction(tmp_path)
    rows = [json.loads(line) for line in main_path.read_text().splitlines()]
    assert {row["type"] for row in rows} >= set(NEW_TYPES) - {"api-request-blob"} | {"api-request-blob"}
    with_them = read(main_path)
    assert not with_them.problems
    # the same file without them: every figure of the transcript's own row is the same
    bare = tmp_path / "bare" / main_path.name
    bare.parent.mkdir()
    bare.write_text("".join(json.dumps(row) + "\n" for row in rows if row["type"] not in NEW_TYPES))
    mine, theirs = with_them.row(), read(bare).row()
    for name in ("api_calls", "prompt_tokens_billed", "billed_tokens", "first_time_tokens", "context_tokens"):
        assert mine[name] == theirs[name], name
    assert theirs["cost_state"] is None and mine["cost_state"]["prompt"] > 0


def test_an_unknown_type_is_still_reported(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "something-new", "sessionId": "s"}) + "\n")
    assert read(path).problems["lines of an unknown type skipped"] == 1


@pytest.mark.parametrize("model_usage", [None, [], {"m": "x"}, {}, "many"])
def test_a_cost_state_without_usable_totals_is_ignored(model_usage):
    assert cost_totals({"type": "cost-state", "modelUsage": model_usage}) is None


def test_cost_totals_sum_the_models_and_take_the_larger_cache_write():
    row = {"modelUsage": {
        "big": {"inputTokens": 10, "cacheReadInputTokens": 100, "cacheCreationInputTokens": 0, "outputTokens": 7,
                "cacheCreationEphemeral5mInputTokens": 30, "cacheCreationEphemeral1hInputTokens": 20},
        "small": {"inputTokens": 5, "cacheReadInputTokens": -4, "cacheCreationInputTokens": 40, "outputTokens": True}}}
    totals = cost_totals(row)
    by_model = totals.pop("by_model")
    assert totals == {"prompt": 10 + 100 + 50 + 5 + 40, "input": 15, "cache_read": 100, "cache_write_5m": 70,
                      "cache_write_1h": 20, "output": 7}
    assert by_model == {
        "big": {"input": 10, "cache_read": 100, "cache_write_5m": 30, "cache_write_1h": 20, "output": 7},
        "small": {"input": 5, "cache_read": 0, "cache_write_5m": 40, "cache_write_1h": 0, "output": 0}}


# --- calls billed but not written ---------------------------------------------------------------------


@pytest.mark.parametrize("tries", [1, 2])
def test_the_session_counts_every_call_the_provider_billed(tmp_path: Path, tries: int):
    main_path, agent_path, provider = a_session_with_a_subagent_and_a_compaction(tmp_path, tries=tries)
    own, agent = read(main_path).row(), read(agent_path).row()
    row = complete_with_unrecorded(own, [agent])
    assert row["api_calls"] + agent["api_calls"] == len(provider.calls)
    assert row["prompt_tokens_billed"] + agent["prompt_tokens_billed"] == sum(provider.calls)
    assert row["unrecorded_calls"] == tries
    assert row["unrecorded_prompt_tokens"] == sum(provider.calls) - own["prompt_tokens_billed"] - agent[
        "prompt_tokens_billed"]
    # every unrecorded token is charged somewhere, and the compaction carried the exploration read before it
    added = {name: row["billed_tokens"][name] - own["billed_tokens"][name] for name in CATEGORIES}
    assert sum(added.values()) == row["unrecorded_prompt_tokens"] == row["context_tokens"] - own["context_tokens"]
    assert added["exploration"] > 0 and added["overhead"] > 0
    assert row["usage"]["output"] == provider.output - agent["usage"]["output"]
    assert row["exploration_share_of_context"] == row["billed_tokens"]["exploration"] / row["context_tokens"]


def test_without_cost_state_nothing_changes(tmp_path: Path):
    main_path, agent_path, provider = a_session_with_a_subagent_and_a_compaction(tmp_path, cost_state=False)
    own = read(main_path).row()
    row = complete_with_unrecorded(own, [read(agent_path).row()])
    assert row == own and row["unrecorded_calls"] == row["unrecorded_prompt_tokens"] == 0
    assert row["api_calls"] + 2 == len(provider.calls) - 1  # the compaction call is simply not seen


def test_an_old_style_compaction_file_is_not_counted_twice(tmp_path: Path):
    """Versions that write the compaction as agent-acompact-*.jsonl: its call is recorded, so the totals
    leave nothing unrecorded even though the main file has a compaction snapshot."""
    provider = Provider()
    session = NewSession(provider)
    helper = NewSession(provider, session.session_id, agent_id="acompact-5e6f7a8b")
    session.user("Explain the scheduler.")
    tool = session.call("", ("Read", {"file_path": "/home/dev/app/scheduler.py"}))
    session.result(tool, "def schedule(job): ...\n" * 80)
    session.call("It queues jobs.")
    helper.user("Summarise the conversation so far. " + "def schedule(job): ...\n" * 80)
    helper.call("Summary: the scheduler queues jobs.")
    session.compact("Summary: the scheduler queues jobs.", tries=0)
    session.cost_state()
    folder = tmp_path / "projects" / "-home-dev-app"
    main_path = session.write(folder / f"{session.session_id}.jsonl")
    helper_path = helper.write(folder / session.session_id / "subagents" / "agent-acompact-5e6f7a8b.jsonl")
    own, helper_row = read(main_path).row(), read(helper_path).row()
    assert helper_row["source"] == "internal" and len(own["compaction_snapshots"]) == 1
    row = complete_with_unrecorded(own, [helper_row])
    assert row["unrecorded_calls"] == row["unrecorded_prompt_tokens"] == 0
    assert row["api_calls"] + helper_row["api_calls"] == len(provider.calls)


def test_a_compaction_not_yet_covered_by_the_totals_is_not_charged(tmp_path: Path):
    """A compaction after the last cost-state (mid-turn): its calls are not in the totals yet."""
    provider = Provider()
    session = NewSession(provider)
    session.user("Start.")
    session.call("Started.")
    session.cost_state()
    session.compact("Summary: started.")
    path = session.write(tmp_path / "projects" / "-p" / f"{session.session_id}.jsonl")
    own = read(path).row()
    assert own["compaction_snapshots"] and not own["compaction_snapshots"][0]["covered"]
    assert complete_with_unrecorded(own, [])["api_calls"] == own["api_calls"] == 1


def test_unexplained_tokens_are_overhead_with_no_call_and_shares_split_by_size():
    calls, billed = charge_unrecorded(500, [])
    assert calls == 0 and billed["overhead"] == 500 and sum(billed.values()) == 500
    small = {"present": dict.fromkeys(CATEGORIES[:-1], 0) | {"exploration": 1000}, "overhead": 1000}
    large = {"present": dict.fromkeys(CATEGORIES[:-1], 0) | {"conversation": 5000}, "overhead": 1000}
    # one compaction call each: what each carried, plus an instruction of 200
    calls, billed = charge_unrecorded(2000 + 200 + 6000 + 200, [small, large])
    assert calls == 2
    assert billed["exploration"] == 1000 and billed["conversation"] == 5000
    assert billed["overhead"] == 2 * 1000 + 2 * 200
    # far less than a snapshot's size is not that compaction's call: no call, all overhead
    calls, billed = charge_unrecorded(300, [small])
    assert calls == 0 and billed["overhead"] == 300


def test_any_split_into_appended_chunks_gives_the_same_family_row(tmp_path: Path):
    main_path, agent_path, _ = a_session_with_a_subagent_and_a_compaction(tmp_path / "whole", tries=2)
    whole = family_row(main_path, agent_path)
    rng = random.Random(5)
    for attempt in range(3):
        pieces = {}
        for source in (main_path, agent_path):
            target = tmp_path / f"split{attempt}" / source.relative_to(tmp_path / "whole")
            transcript = ClaudeTranscript(describe(target), Counted(chars, "chars/4"))
            for _ in append_in_pieces(source, target, rng, rng.choice([4, 30, 200])):
                transcript.catch_up()
                transcript = ClaudeTranscript.from_state(transcript.to_state(), describe(target),
                                                         Counted(chars, "chars/4"))
            pieces[source] = transcript.row()
        assert complete_with_unrecorded(pieces[main_path], [pieces[agent_path]]) == whole


def test_report_session_path_and_live_hook_agree(capsys, tmp_path: Path):
    main_path, agent_path, provider = a_session_with_a_subagent_and_a_compaction(tmp_path / "src", tries=2)
    rng = random.Random(11)
    target = tmp_path / "live" / "projects" / main_path.parent.name / main_path.name
    agent_target = target.parent / target.stem / "subagents" / agent_path.name
    payload = {"session_id": target.stem, "transcript_path": str(target), "hook_event_name": "PostToolBatch"}
    # the subagent's file is complete before the main file's later turns, as in a real session (where the
    # main file exists by then: a missing one is a problem the hook logs)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"")
    for _ in append_in_pieces(agent_path, agent_target, rng, 5):
        hook.run_hook(json.dumps({**payload, "agent_transcript_path": str(agent_target)}).encode())
    for _ in append_in_pieces(main_path, target, rng, 25):
        hook.run_hook(json.dumps(payload).encode())
    from_path = cli_json(capsys, "session", str(target))
    from_live = cli_json(capsys, "session", target.stem)
    assert from_live == from_path
    assert from_path["api_calls"] + 2 == len(provider.calls) and from_path["unrecorded_calls"] == 2
    rows_file = tmp_path / "rows.jsonl"
    # the packaged vocabulary: the hook and the report both count with o200k_base
    report = cli_json(capsys, "report", "--all", "--no-cache", "--claude-root",
                      str(tmp_path / "live"), "--hermes-db", str(tmp_path / "none.db"), "--rows", str(rows_file))
    rows = {row["id"]: row for row in map(json.loads, rows_file.read_text().splitlines())}
    assert {**rows[target.stem], "machine": None} == {**from_path, "machine": None}  # a rows file adds its machine
    group = report["groups"]["claude-code/interactive"]
    assert group["api_calls"] + report["groups"]["claude-code/subagent"]["api_calls"] == len(provider.calls)
    assert group["unrecorded_calls"] == 2
    summary = json.loads((session_state.line_file(target.stem)).read_text())
    assert summary["api_calls"] == from_path["api_calls"]
    assert not (tmp_path / "xshare-home" / "logs" / "hook.log").exists()


def test_the_texts_say_when_calls_were_not_written(capsys, tmp_path: Path):
    main_path, _, _ = a_session_with_a_subagent_and_a_compaction(tmp_path / "src")
    assert main(["session", str(main_path), "--estimate"]) == 0
    assert ("billed but not in the record: compactions (the agent summarising a long conversation), from Claude "
            "Code's own usage totals") in capsys.readouterr().out
    assert main(["report", "--all", "--no-cache", "--estimate", "--claude-root", str(tmp_path / "src"),
                 "--hermes-db", str(tmp_path / "none.db")]) == 0
    out = capsys.readouterr().out
    assert "includes 1 call (" in out and "not in the record: compactions" in out
    plain, _, _ = a_session_with_a_subagent_and_a_compaction(tmp_path / "plain", cost_state=False)
    assert main(["session", str(plain), "--estimate"]) == 0
    assert "did not write" not in capsys.readouterr().out


# --- automated sessions -------------------------------------------------------------------------------


@pytest.mark.parametrize("entrypoint, source", [("sdk-cli", AUTOMATED), ("sdk-ts", AUTOMATED), ("sdk-py", AUTOMATED),
                                                ("cli", INTERACTIVE), ("claude-vscode", INTERACTIVE)])
def test_sdk_entry_points_are_automated_and_their_subagents_stay_subagents(tmp_path: Path, entrypoint, source):
    main_path, agent_path, _ = a_session_with_a_subagent_and_a_compaction(tmp_path, entrypoint=entrypoint)
    assert read(main_path).row()["source"] == source
    assert read(agent_path).row()["source"] == SUBAGENT


def test_the_first_row_with_an_entry_point_decides(tmp_path: Path):
    lines = [{"type": "queue-operation", "operation": "enqueue"},
             {"type": "user", "uuid": "u1", "entrypoint": "sdk-cli", "message": {"role": "user", "content": "go"}},
             {"type": "user", "uuid": "u2", "entrypoint": "cli", "message": {"role": "user", "content": "on"}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert read(path).row()["source"] == AUTOMATED
    path.write_text("".join(json.dumps(line) + "\n" for line in lines[:1]))
    assert read(path).row()["source"] == INTERACTIVE  # no entry point at all: as before


def test_automated_sessions_are_reported_outside_the_reading(capsys, tmp_path: Path):
    a_session_with_a_subagent_and_a_compaction(tmp_path / "a", entrypoint="sdk-cli")
    report = cli_json(capsys, "report", "--all", "--no-cache", "--estimate", "--claude-root", str(tmp_path / "a"),
                      "--hermes-db", str(tmp_path / "none.db"))
    assert set(report["groups"]) == {"claude-code/automated", "claude-code/subagent"}
    assert report["groups"]["claude-code/automated"]["reading"] is None
    assert report["groups"]["claude-code/automated"]["unrecorded_calls"] == 1


def test_a_forks_totals_include_its_parents_bill_and_are_not_used(tmp_path: Path):
    """--fork-session copies the history since the last compaction (rows re-labelled with the new session
    id, assistant rows keeping the parent's as `requestSessionId`) and carries the parent's totals on."""
    main_path, _, provider = a_session_with_a_subagent_and_a_compaction(tmp_path / "parent")
    parent_rows = [json.loads(line) for line in main_path.read_text().splitlines()]
    start = max(index for index, row in enumerate(parent_rows) if row.get("subtype") == "compact_boundary")
    fork = NewSession(provider, "0f1e2d3c-4b5a-4968-8776-655443322110")
    copied = [{**row, "sessionId": fork.session_id,
               **({"requestSessionId": row["sessionId"]} if row["type"] == "assistant" else {})}
              for row in parent_rows[start:] if row["type"] in ("system", "user", "assistant", "attachment")]
    fork.rows = copied
    fork.context = 300
    fork.user("Now something new.")
    fork.call("Done.")
    fork.cost_state()
    path = fork.write(tmp_path / "fork" / "projects" / "-home-dev-app" / f"{fork.session_id}.jsonl")
    row = read(path).row()
    assert row["cost_state"] is None and row["compaction_snapshots"]
    assert complete_with_unrecorded(row, []) == row


def test_two_compactions_in_a_row_are_each_sized_from_what_they_carried(tmp_path: Path):
    provider = Provider()
    session = NewSession(provider)
    session.user("Read the parser.")
    tool = session.call("", ("Read", {"file_path": "/home/dev/app/parser.py"}))
    session.result(tool, "def parse(tokens): ...\n" * 150)
    session.call("Read it.")
    session.compact("Summary: the parser was read.")
    session.compact("Summary: still the parser.")
    session.cost_state()
    path = session.write(tmp_path / "projects" / "-p" / f"{session.session_id}.jsonl")
    own = read(path).row()
    first, second = own["compaction_snapshots"]
    # the second carried only the overhead and the first's summary, not the bill before the first
    assert second["size"] == second["overhead"] + sum(second["present"].values()) < first["size"]
    row = complete_with_unrecorded(own, [])
    assert row["unrecorded_calls"] == 2 and row["api_calls"] == len(provider.calls)
    assert row["prompt_tokens_billed"] == sum(provider.calls)
