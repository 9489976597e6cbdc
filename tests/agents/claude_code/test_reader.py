"""The Claude Code adapter: discovery, API calls, categories, compaction, trims, bad input, increments."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from agent_fixtures import Counted

from tests.conftest import CORPUS, needs_corpus
from xshare.agents.claude_code.files import NOT_REGULAR, any_transcript, passed_over
from xshare.agents.claude_code.transcript import (
    INTERACTIVE,
    INTERNAL,
    SUBAGENT,
    ClaudeTranscript,
    call_usage,
    default_roots,
    describe,
    discover,
    resolve_root,
)
from xshare.demo import TranscriptWriter, text, tool_use, write_demo_corpus

START = datetime(2026, 11, 3, 9, 0, tzinfo=timezone.utc)


def chars(text: str) -> int:
    return (len(text) + 3) // 4


def measure(path: Path) -> ClaudeTranscript:
    transcript = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    transcript.catch_up()
    return transcript


def write(tmp_path: Path, writer: TranscriptWriter, name: str = "s1") -> Path:
    return writer.write(tmp_path / "projects" / "-home-dev-app" / f"{name}.jsonl")


def session(**kwargs) -> TranscriptWriter:
    return TranscriptWriter("s1", "/home/dev/app", start=START, **kwargs)


# --- API calls and the bill ---------------------------------------------------------------------------


def test_one_request_written_as_many_rows_is_one_call_with_its_largest_output(tmp_path: Path):
    writer = session()
    writer.user("Where is the config loaded?")
    writer.call(text("Let me look."), tool_use("Read", {"file_path": "/home/dev/app/config.py"}),
                tool_use("Grep", {"pattern": "load_config"}))
    rows = [json.loads(line) for line in writer.lines() if '"assistant"' in line]
    assert len(rows) == 3 and len({row["requestId"] for row in rows}) == 1
    transcript = measure(write(tmp_path, writer))
    row = transcript.row()
    assert row["api_calls"] == 1
    assert row["usage"]["output"] == max(r["message"]["usage"]["output_tokens"] for r in rows)
    usage = rows[0]["message"]["usage"]
    assert row["prompt_tokens_billed"] == (usage["input_tokens"] + usage["cache_read_input_tokens"]
                                           + usage["cache_creation_input_tokens"])


def test_without_request_id_the_message_id_keys_the_call(tmp_path: Path):
    writer = session(gateway=True)
    writer.user("hi")
    writer.call(text("one"), text("two"))
    writer.call(text("three"))
    assert measure(write(tmp_path, writer)).row()["api_calls"] == 2


def test_synthetic_and_api_error_rows_are_not_calls(tmp_path: Path):
    writer = session()
    writer.user("hi")
    writer.call(text("hello"))
    writer.synthetic("No response requested.")
    writer.synthetic("API Error: overloaded", api_error_status=529)
    assert measure(write(tmp_path, writer)).row()["api_calls"] == 1


@pytest.mark.parametrize(
    ("usage", "prompt"),
    [
        ({"input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}, 125),
        # the nested split read 0 while the flat field was set (gateways, pre-2.1.152 builds)
        ({"input_tokens": 5, "cache_creation_input_tokens": 20,
          "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}, 25),
        # and the other way round
        ({"input_tokens": 5, "cache_creation_input_tokens": 0,
          "cache_creation": {"ephemeral_5m_input_tokens": 7, "ephemeral_1h_input_tokens": 13}}, 25),
        # a null field is a missing one
        ({"input_tokens": None, "cache_read_input_tokens": 12, "output_tokens": 3}, 12),
    ],
)
def test_prompt_tokens_billed(usage: dict, prompt: int):
    assert call_usage(usage)[0] == prompt


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": None, "cache_read_input_tokens": "12", "output_tokens": -3},
        {"input_tokens": "5", "cache_read_input_tokens": 100},
        {"input_tokens": -5, "cache_read_input_tokens": 100},
        {"input_tokens": float("nan"), "cache_read_input_tokens": 100},
        {"input_tokens": float("inf"), "cache_read_input_tokens": 100},
        {"input_tokens": 1e30, "cache_read_input_tokens": 100},
        {"input_tokens": 10**30, "cache_read_input_tokens": 100},
        {"input_tokens": 5.0, "cache_read_input_tokens": 100},
        {"input_tokens": True, "cache_read_input_tokens": 100},
        {"input_tokens": 5, "output_tokens": {}},
        {"input_tokens": 5, "cache_creation": "lots"},
        {"input_tokens": 5, "cache_creation": {"ephemeral_5m_input_tokens": [3]}},
        {},
        {"input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 9},
        [],
        "usage",
    ],
)
def test_unusable_usage_is_no_bill(usage: object):
    """Strings, negatives, NaN/inf, absurd sizes, other shapes, or no prompt at all: not a bill."""
    assert call_usage(usage) is None


# --- categories -----------------------------------------------------------------------------------------


def test_tool_results_and_arguments_take_their_calls_category(tmp_path: Path):
    writer = session()
    writer.user("Check the parser.")
    read = writer.use("Read", {"file_path": "/home/dev/app/parser.py"})
    writer.read_result(read, "/home/dev/app/parser.py", "def parse(text):\n    return text.split()\n")
    bash = writer.use("Bash", {"command": "python -m pytest -q"})
    writer.bash_result(bash, "3 passed in 0.12s\n")
    edit = writer.use("Edit", {"file_path": "/home/dev/app/parser.py", "old_string": "split()",
                               "new_string": "split(',')"})
    writer.edit_result(edit, "/home/dev/app/parser.py", "split()", "split(',')", "x")
    fetch = writer.use("WebFetch", {"url": "https://docs.python.org/3/library/stdtypes.html"})
    writer.tool_result(fetch, "str.split(sep=None) returns a list of the words")
    writer.call(text("Done."))
    first = measure(write(tmp_path, writer)).row()["first_time_tokens"]
    assert first["exploration"] >= chars("def parse(text):\n    return text.split()\n")
    assert first["shell"] >= chars("3 passed in 0.12s\n")
    assert first["edit"] > 0 and first["web"] > 0
    assert first["conversation"] > 0


def test_a_read_result_is_charged_to_every_later_call(tmp_path: Path):
    writer = session()
    writer.user("Read it.")
    read = writer.use("Read", {"file_path": "/home/dev/app/big.py"})
    writer.read_result(read, "/home/dev/app/big.py", "x = 1\n" * 400)
    for turn in range(3):
        writer.call(text(f"thinking aloud {turn}"))
    row = measure(write(tmp_path, writer)).row()
    result_tokens = row["first_time_tokens"]["exploration"]
    assert row["billed_tokens"]["exploration"] >= 3 * (result_tokens - 30)  # the result rode 3 calls


def test_injected_context_and_the_neuralmind_block(tmp_path: Path):
    writer = session()
    writer.hook_success("Project rules: run make check before committing.")
    writer.user("Fix the date bug.", reminder="The user has opened config.py in the editor.")
    writer.hook_context(["Code matching this prompt:\n  dates.py:12 def parse_due(value): ..."])
    writer.meta("Base directory for this skill: /home/dev/.claude/skills/commit")
    writer.call(text("Looking."))
    first = measure(write(tmp_path, writer)).row()["first_time_tokens"]
    assert first["neuralmind"] == chars("Code matching this prompt:\n  dates.py:12 def parse_due(value): ...")
    assert first["injected"] >= chars("Project rules: run make check before committing.")


def test_a_reminder_appended_to_a_tool_result_is_injected_not_exploration(tmp_path: Path):
    writer = session()
    writer.user("Read it.")
    read = writer.use("Read", {"file_path": "/home/dev/app/a.py"})
    body = "print('hello')\n"
    reminder = "Whenever you read a file, consider whether it is malware."
    writer.tool_result(read, body, reminder=reminder)
    writer.call(text("ok"))
    first = measure(write(tmp_path, writer)).row()["first_time_tokens"]
    assert first["injected"] >= chars(reminder)
    assert first["exploration"] < chars(body + reminder)


# --- presence -------------------------------------------------------------------------------------------


def test_compaction_drops_what_came_before_and_keeps_the_summary(tmp_path: Path):
    writer = session(system_tokens=100)
    writer.user("Read everything.")
    read = writer.use("Read", {"file_path": "/home/dev/app/a.py"})
    writer.read_result(read, "/home/dev/app/a.py", "y = 2\n" * 500)
    writer.call(text("Read."))
    before = measure(write(tmp_path, writer)).row()["billed_tokens"]["exploration"]
    writer.compact("Summary: a.py assigns y.")
    for _ in range(4):
        writer.call(text("after"))
    row = measure(write(tmp_path, writer)).row()
    assert row["compactions"] == 1
    assert row["billed_tokens"]["exploration"] == before  # nothing of a.py rides the later calls


def test_microcompaction_stops_charging_the_cleared_results(tmp_path: Path):
    writer = session(system_tokens=100)
    writer.user("Read two files.")
    first = writer.use("Read", {"file_path": "/home/dev/app/a.py"})
    writer.read_result(first, "/home/dev/app/a.py", "a = 1\n" * 300)
    second = writer.use("Read", {"file_path": "/home/dev/app/b.py"})
    writer.read_result(second, "/home/dev/app/b.py", "b = 2\n" * 300)
    writer.call(text("Both read."))
    writer.microcompact([first])
    kept = measure(write(tmp_path, writer)).row()
    writer.call(text("later"))
    later = measure(write(tmp_path, writer)).row()
    added = later["billed_tokens"]["exploration"] - kept["billed_tokens"]["exploration"]
    total = later["first_time_tokens"]["exploration"]  # a's and b's results (same size) and both calls' args
    assert later["trimmed_messages"] == 1
    assert total / 3 < added < 2 * total / 3  # the last call carried b.py's result, not a.py's


def test_inline_sidechain_rows_are_a_conversation_of_their_own(tmp_path: Path):
    main = TranscriptWriter("s1", "/home/dev/app", version="1.0.38", start=START, system_tokens=100)
    main.user("Find the bug.")
    task = main.use("Task", {"description": "search", "prompt": "Find where dates are parsed"})
    sub = TranscriptWriter("s1", "/home/dev/app", version="1.0.38", start=main.now, sidechain=True,
                           system_tokens=50)
    sub.user("Find where dates are parsed")
    grep = sub.use("Grep", {"pattern": "parse_due"})
    sub.grep_result(grep, {"/home/dev/app/dates.py": [(12, "def parse_due(value):")]})
    sub.call(text("In dates.py."))
    main.absorb(sub)
    main.task_result(task, sub, "dates.py:12", prompt="Find where dates are parsed", agent_type="general-purpose")
    main.call(text("Found it."))
    row = measure(write(tmp_path, main)).row()
    assert row["source"] == INTERACTIVE
    assert row["api_calls"] == 2 + 2  # the main thread's and the sidechain's
    whole = measure(write(tmp_path, main))
    assert set(whole.ledger.threads) == {"main", "side"}


# --- discovery ------------------------------------------------------------------------------------------


def test_discovery_layouts_and_ids(tmp_path: Path):
    projects = tmp_path / "projects"
    files = {
        "-p/sess1.jsonl": ("sess1", INTERACTIVE, None),
        "-p/agent-a1b2c3d4.jsonl": ("agent-a1b2c3d4", SUBAGENT, None),  # 2.0.x, beside the sessions
        "-p/sess1/subagents/agent-a9f8e7d6c5b4a3f21.jsonl": ("sess1/agent-a9f8e7d6c5b4a3f21", SUBAGENT, "sess1"),
        "-p/sess1/subagents/agent-acompact-4f3e2d1c.jsonl": ("sess1/agent-acompact-4f3e2d1c", INTERNAL, "sess1"),
        "-p/sess1/subagents/agent-aside_question-77aa.jsonl": ("sess1/agent-aside_question-77aa", INTERNAL, "sess1"),
        "-p/sess1/subagents/agent-aprompt_suggestion-1.jsonl": ("sess1/agent-aprompt_suggestion-1", INTERNAL, "sess1"),
        "-p/sess1/subagents/workflows/run7/agent-a55.jsonl": ("sess1/agent-a55", SUBAGENT, "sess1"),
    }
    for name in [*files, "-p/sess1/subagents/workflows/run7/journal.jsonl", "-p/sess1/tool-results/x.jsonl",
                 "-p/sess1/subagents/agent-a9f8e7d6c5b4a3f21.meta.json", "stray.jsonl"]:
        (projects / name).parent.mkdir(parents=True, exist_ok=True)
        (projects / name).write_text("")
    found = {str(file.path.relative_to(projects)): (file.session_id, file.source, file.parent_id)
             for file in discover([projects])}
    assert found == files


def as_rglob_found(root: Path) -> list[Path]:
    """The transcripts under one root as discovery found them before it walked with os.scandir (the reference)."""
    taken = []
    for path in sorted(root.rglob("*.jsonl"), key=str):
        folders = path.relative_to(root).parts[:-1]
        if folders and not passed_over(folders, path.name) and path.is_file() and path not in taken:
            taken.append(path)
    return taken


def test_discovery_takes_what_rglob_took_and_no_more(tmp_path: Path):
    """Any entry named *.jsonl is looked at (a folder so named is refused and counted); a linked folder is not
    entered, a linked file is its target's session; tool-results/ holds no transcript."""
    projects = tmp_path / "projects"
    for name in ("-p/b.jsonl", "-p/a.jsonl", "-p/s1/subagents/agent-x.jsonl", "-p/s1/tool-results/t.jsonl"):
        (projects / name).parent.mkdir(parents=True, exist_ok=True)
        (projects / name).write_text("")
    (projects / "-p" / "odd.jsonl").mkdir()
    elsewhere = tmp_path / "elsewhere" / "-q"
    elsewhere.mkdir(parents=True)
    (elsewhere / "c.jsonl").write_text("")
    (projects / "-q").symlink_to(elsewhere, target_is_directory=True)
    (projects / "-p" / "linked.jsonl").symlink_to(elsewhere / "c.jsonl")
    skipped: Counter = Counter()
    found = discover([projects], skipped)
    assert [str(file.path.relative_to(projects)) for file in found] == [
        "-p/a.jsonl", "-p/b.jsonl", "-p/linked.jsonl", "-p/s1/subagents/agent-x.jsonl"]
    assert found[2].session_id == "c" and skipped == Counter({NOT_REGULAR: 1})
    assert [file.path for file in found] == as_rglob_found(projects)
    assert any_transcript([projects]) and not any_transcript([elsewhere.parent / "none"])
    (projects / "-p").rename(tmp_path / "moved")
    assert not any_transcript([projects])  # only the linked folder's, never entered


@needs_corpus
def test_discovery_of_every_corpus_root_matches_the_reference():
    roots = sorted(path for path in (CORPUS / "claude").glob("*/projects") if path.is_dir())
    assert roots
    for root in roots:
        assert [file.path for file in discover([root])] == as_rglob_found(root), root


def test_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path):
    config = tmp_path / "cfg"
    (config / "projects").mkdir(parents=True)
    assert resolve_root(config) == config / "projects"
    assert resolve_root(config / "projects") == config / "projects"
    assert default_roots() == [isolated_home / ".claude" / "projects",
                               isolated_home / ".config" / "claude" / "projects"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path / 'a'}, {tmp_path / 'b'}")
    assert default_roots() == [tmp_path / "a" / "projects", tmp_path / "b" / "projects"]


# --- bad input ------------------------------------------------------------------------------------------


def healthy(tmp_path: Path) -> tuple[Path, dict]:
    writer = session()
    writer.user("Look at main.")
    read = writer.use("Read", {"file_path": "/home/dev/app/main.py"})
    writer.read_result(read, "/home/dev/app/main.py", "def main():\n    pass\n")
    writer.call(text("Fine."))
    path = write(tmp_path, writer)
    return path, measure(path).row()


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (b'{"type": "user", "message": {"content": "unterminated\n', "malformed lines skipped"),
        (b"\xff\xfe not utf-8 at all\n", "malformed lines skipped"),
        (b'{"type": "user", "uuid": "u-bad", "message": {"content": "caf\xe9"}}\n',
         "lines with non-UTF-8 bytes (replaced)"),
        (b'{"type": "hologram", "uuid": "h1"}\n', "lines of an unknown type skipped"),
        (b"[1, 2, 3]\n", "lines that are not JSON objects skipped"),
        (b'{"type": "assistant", "uuid": "half", "message": {"content": [{"type": "te', "last lines incomplete"),
    ],
)
def test_bad_lines_are_skipped_counted_and_the_rest_measured(tmp_path: Path, damage: bytes, problem: str):
    path, clean = healthy(tmp_path)
    data = path.read_bytes()
    cut = data.index(b"\n") + 1
    damaged = data[:cut] + damage + data[cut:] if not damage.endswith(b'"te') else data + damage
    path.write_bytes(damaged)
    transcript = measure(path)
    assert [kind for kind in transcript.problems if kind.startswith(problem)]
    row = transcript.row()
    assert row["api_calls"] == clean["api_calls"]
    assert row["prompt_tokens_billed"] == clean["prompt_tokens_billed"]


def test_lone_surrogates_are_read_not_rejected(tmp_path: Path):
    path, clean = healthy(tmp_path)
    line = b'{"type": "user", "uuid": "u-sur", "message": {"content": "emoji half \\ud83d here"}}\n'
    path.write_bytes(path.read_bytes() + line)
    transcript = measure(path)
    assert not transcript.problems
    assert transcript.row()["first_time_tokens"]["conversation"] > clean["first_time_tokens"]["conversation"]


def test_a_lone_surrogate_in_a_tool_call_or_a_model_name_is_counted_not_fatal(tmp_path: Path):
    path, clean = healthy(tmp_path)
    call = (b'{"type": "assistant", "uuid": "a-sur", "requestId": "req-sur", "message": {"model": "m\\udc80", '
            b'"usage": {"input_tokens": 9000, "output_tokens": 5}, "content": [{"type": "tool_use", '
            b'"id": "toolu_sur", "name": "Bash", "input": {"command": "echo \\ud800 half"}}]}}\n')
    path.write_bytes(path.read_bytes() + call)
    transcript = measure(path)
    row = transcript.row()
    assert row["api_calls"] == clean["api_calls"] + 1 and not transcript.problems
    assert sum(row["first_time_tokens"].values()) > sum(clean["first_time_tokens"].values())
    from xshare.state.store import dumps, loads

    assert loads(dumps(row)) == {**row, "models": [m.replace("\udc80", "\ufffd") for m in row["models"]],
                                 "model": row["model"].replace("\udc80", "\ufffd"),
                                 "usage_by_model": {m.replace("\udc80", "\ufffd"): bands
                                                    for m, bands in row["usage_by_model"].items()}}


def test_empty_and_vanished_files(tmp_path: Path):
    empty = tmp_path / "projects" / "-p" / "empty.jsonl"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    transcript = measure(empty)
    assert transcript.row()["api_calls"] == 0 and not transcript.problems
    gone = ClaudeTranscript(describe(tmp_path / "projects" / "-p" / "gone.jsonl"), Counted(chars, "chars/4"))
    gone.catch_up()
    assert list(gone.problems) == ["transcripts that could not be read (FileNotFoundError)"]


def test_a_row_written_twice_counts_once(tmp_path: Path):
    path, clean = healthy(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines + lines[1:3]))
    assert measure(path).row() == clean


# --- one piece or many ----------------------------------------------------------------------------------


def demo_files(tmp_path: Path) -> list[Path]:
    return sorted(write_demo_corpus(tmp_path).rglob("*.jsonl"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_split_into_appended_chunks_gives_the_same_row(tmp_path: Path, seed: int):
    """Feed every demo transcript in random pieces (cut mid-line, some a byte long), saving and
    resuming the state between pieces as the live hook does: the row is identical, token for token."""
    rng = random.Random(seed)
    for path in demo_files(tmp_path):
        whole = measure(path)
        data = path.read_bytes()
        growing = tmp_path / "growing" / path.name
        growing.parent.mkdir(exist_ok=True)
        growing.write_bytes(b"")
        file = describe(path)
        state = None
        position = 0
        while position < len(data):
            step = rng.choice([1, 7, 64, 1000, 50_000])
            with growing.open("ab") as handle:
                handle.write(data[position:position + step])
            position += step
            transcript = ClaudeTranscript(file, Counted(chars, "chars/4"))
            if state is not None:
                transcript = ClaudeTranscript.from_state(json.loads(state), file, Counted(chars, "chars/4"))
            transcript.file = type(file)(growing, file.session_id, file.source, file.parent_id)
            transcript.catch_up()
            state = json.dumps(transcript.to_state())
        assert transcript.row() == whole.row(), path.name


def test_a_file_that_shrank_or_was_replaced_is_read_again(tmp_path: Path):
    path, clean = healthy(tmp_path)
    transcript = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    transcript.catch_up()
    path.write_bytes(path.read_bytes()[:10])
    transcript.catch_up()
    assert transcript.row()["api_calls"] == 0
    replacement = path.with_name("other.jsonl")
    replacement.write_bytes(healthy(tmp_path / "again")[0].read_bytes())
    replacement.replace(path)  # same name, new file
    transcript.catch_up()
    assert transcript.row()["api_calls"] == clean["api_calls"]


def test_detail_mode_marks_the_prompts_a_person_typed(tmp_path: Path):
    writer = session()
    writer.user("First question?")
    read = writer.use("Read", {"file_path": "/home/dev/app/a.py"})
    writer.read_result(read, "/home/dev/app/a.py", "a = 1\n")
    writer.call(text("Answer one."))
    writer.meta("Caveat: the messages below were generated by the user while running local commands.")
    writer.user("<command-name>/cost</command-name>")
    writer.user("Second question?")
    writer.call(text("Answer two."))
    transcript = ClaudeTranscript(describe(write(tmp_path, writer)), Counted(chars, "chars/4"), detail=True)
    transcript.catch_up()
    prompts = [marker["at"] for marker in transcript.ledger.markers if marker["kind"] == "prompt"]
    assert prompts == [0, 2]  # before the first call (index 0) and before the third (index 2)
