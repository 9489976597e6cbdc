"""Every file reader takes whatever a file holds (wrong types at every level) and still returns its row."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, codex_session, gemini_json, gemini_jsonl, openclaw_session

from xshare.agents.codex import reader as codex
from xshare.agents.gemini import reader as gemini
from xshare.agents.openclaw import reader as openclaw
from xshare.cli import main
from xshare.sessions.registry import owner

ODD = [None, True, 0, -5, 1.5e300, "", "x", [], [None], {}, {"": None}, "2026-13-45T99:99:99Z", 10 ** 30]


def _scramble(value: object, rng: random.Random) -> object:
    """The same structure with some values swapped for values of the wrong type."""
    if isinstance(value, dict):
        return {key: _scramble(item, rng) for key, item in value.items()}
    if isinstance(value, list):
        return [_scramble(item, rng) for item in value]
    return rng.choice(ODD) if rng.random() < 0.3 else value


@pytest.mark.parametrize(("module", "write"), [(codex, codex_session), (gemini, gemini_jsonl),
                                               (openclaw, openclaw_session)])
@pytest.mark.parametrize("seed", range(8))
def test_scrambled_files_never_raise(tmp_path: Path, module, write, seed: int):
    path, _ = write(tmp_path)
    rng = random.Random(seed)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(_scramble(line, rng)) + "\n" for line in lines))
    problems: Counter = Counter()
    rows = module.read(path, Counted(len, "chars"), problems)
    assert len(rows) == 1 and rows[0]["agent"] == module.AGENT
    assert rows[0]["api_calls"] >= 0 and rows[0]["prompt_tokens_billed"] >= 0


# --- valid JSON of another shape: no session, not a session with no calls --------------------------------

NO_CHAT = "Gemini CLI chat files that hold no record (not JSON, or JSON of another shape; not read)"


def _nested(value: object) -> object:
    """The same data with every object turned into the array of its values: only nested arrays are left."""
    if isinstance(value, dict):
        return [_nested(item) for item in value.values()]
    if isinstance(value, list):
        return [_nested(item) for item in value]
    return value


def _chat_of_another_shape(shape: str, document: dict) -> object:
    messages = document["messages"]
    return {
        "nested arrays": _nested(document),
        "array of numbers": [3, 1, 4, 1, 5],
        "messages alone": messages,  # an array of objects, as logs.json and checkpoints are
        "object without messages": {key: value for key, value in document.items() if key != "messages"},
        "messages an object": {**document, "messages": {message["id"]: message for message in messages}},
        "messages a string": {**document, "messages": json.dumps(messages)},
        "messages holding arrays": {**document, "messages": [_nested(message) for message in messages]},
    }[shape]


SHAPES = ["nested arrays", "array of numbers", "messages alone", "object without messages", "messages an object",
          "messages a string", "messages holding arrays"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_gemini_json_of_another_shape_is_no_session(tmp_path: Path, shape: str):
    path, _ = gemini_json(tmp_path)
    path.write_text(json.dumps(_chat_of_another_shape(shape, json.loads(path.read_text()))))
    problems: Counter = Counter()
    assert gemini.read(path, Counted(len, "chars"), problems) == []
    assert problems == {NO_CHAT: 1}


def test_a_gemini_chat_caught_mid_rewrite_or_not_yet_written(tmp_path: Path):
    path, _ = gemini_json(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])  # the CLI rewrites the .json whole: a reader may see half
    problems: Counter = Counter()
    assert gemini.read(path, Counted(len, "chars"), problems) == [] and problems == {NO_CHAT: 1}
    for empty in (path, path.with_suffix(".jsonl")):
        empty.write_bytes(b"")  # created, nothing written yet: no session, and nothing wrong
        problems = Counter()
        assert gemini.read(empty, Counted(len, "chars"), problems) == [] and not problems


@pytest.mark.parametrize(("module", "write", "what"), [
    (gemini, gemini_jsonl, "Gemini CLI chat"), (codex, codex_session, "Codex rollout"),
    (openclaw, openclaw_session, "OpenClaw transcript")])
@pytest.mark.parametrize("shape", ["nested arrays", "numbers"])
def test_json_lines_of_another_shape_are_no_session(tmp_path: Path, module, write, what: str, shape: str):
    path, _ = write(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    odd = [_nested(line) for line in lines] if shape == "nested arrays" else list(range(len(lines)))
    path.write_text("".join(json.dumps(line) + "\n" for line in odd))
    problems: Counter = Counter()
    assert module.read(path, Counted(len, "chars"), problems) == []
    assert problems == {f"{what} files that hold no record (not JSON, or JSON of another shape; not read)": 1,
                        f"{what} lines that are not JSON objects (skipped)": len(lines)}


def test_gemini_json_lines_of_objects_it_never_writes_are_no_session(tmp_path: Path):
    """(Any object may be a Codex item or an OpenClaw entry of a type to come; Gemini CLI's chat lines are a
    header, messages and `$set` updates.)"""
    path, _ = gemini_jsonl(tmp_path)
    path.write_text("".join(json.dumps({"line": number}) + "\n" for number in range(5)))
    problems: Counter = Counter()
    assert gemini.read(path, Counted(len, "chars"), problems) == [] and problems == {NO_CHAT: 1}


def test_a_codex_legacy_json_of_nested_arrays_is_no_session(tmp_path: Path):
    path = tmp_path / "sessions" / "rollout-2025-08-23-11111111-2222-4333-8444-555555555555.json"
    path.parent.mkdir()
    legacy = {"session": {"timestamp": "2025-08-23T11:00:00.000Z", "id": "11111111-2222-4333-8444-555555555555",
                          "instructions": "Be brief."},
              "items": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}
    path.write_text(json.dumps(_nested(legacy)))
    problems: Counter = Counter()
    assert codex.read(path, Counted(len, "chars"), problems) == []
    assert problems == {"Codex rollout files that hold no record (not JSON, or JSON of another shape; not read)": 1}
    path.write_text(json.dumps(legacy))  # the fork's real shape, with no usage: a session all the same
    (row,) = codex.read(path, Counted(len, "chars"), Counter())
    assert row["id"] == "11111111-2222-4333-8444-555555555555" and row["api_calls"] == 0


@pytest.mark.parametrize("write", [gemini_json, gemini_jsonl])
def test_a_gemini_chat_with_some_messages_as_arrays_keeps_the_rest(tmp_path: Path, write):
    path, want = write(tmp_path)
    stray = [["m9", "user", "an array, not a message"], [1, 2]]
    if path.suffix == ".json":
        document = json.loads(path.read_text())
        path.write_text(json.dumps({**document, "messages": document["messages"] + stray}))
    else:  # the A2A server's whole-list update, and lines of their own
        with path.open("a") as handle:
            handle.write(json.dumps({"$set": {"messages": stray}}) + "\n" + json.dumps(stray[0]) + "\n")
    problems: Counter = Counter()
    (row,) = gemini.read(path, Counted(len, "chars"), problems)
    assert row["api_calls"] == want["calls"] and row["prompt_tokens_billed"] == want["prompt"]
    expected = {"Gemini CLI chat messages that are not JSON objects (skipped)": 2}
    if path.suffix == ".jsonl":
        expected["Gemini CLI chat lines that are not JSON objects (skipped)"] = 1
    assert problems == expected


def test_no_view_counts_a_gemini_file_of_another_shape(isolated_home: Path, capsys: pytest.CaptureFixture):
    home = isolated_home / ".gemini"
    real, want = gemini_json(home)
    odd = real.with_name("session-2026-02-11T10-00-0badf00d.json")
    odd.write_text(json.dumps(_nested(json.loads(real.read_text()))))
    assert main(["report", "--all", "--json", "--gemini-home", str(home)]) == 0
    captured = capsys.readouterr()
    group = json.loads(captured.out)["groups"]["gemini/interactive"]
    assert group["sessions"] == 1 and group["api_calls"] == want["calls"]
    assert f"xshare: {NO_CHAT}: 1" in captured.err.splitlines()


def test_session_by_path_finds_no_session_in_a_file_of_another_shape(isolated_home: Path,
                                                                      capsys: pytest.CaptureFixture):
    """Gemini's by its keys, then no session (and why); an array is no one's, nor a .jsonl of arrays (it
    was taken for a Claude Code transcript of no calls)."""
    home = isolated_home / ".gemini"
    real, _ = gemini_json(home)
    chat = json.loads(real.read_text())
    nested = real.with_name("session-2026-02-11T10-00-0badf00d.json")
    nested.write_text(json.dumps(_nested(chat)))
    messages_an_object = real.with_name("session-2026-02-11T11-00-0badf00e.json")
    messages_an_object.write_text(json.dumps(_chat_of_another_shape("messages an object", chat)))
    arrays_jsonl = real.with_name("session-2026-02-11T12-00-0badf00f.jsonl")
    arrays_jsonl.write_text("".join(json.dumps(_nested(message)) + "\n" for message in chat["messages"]))
    assert owner(messages_an_object).agent == "gemini" and owner(nested) is None and owner(arrays_jsonl) is None
    for path, told in ((nested, False), (messages_an_object, True), (arrays_jsonl, False)):
        assert main(["session", str(path), "--json", "--gemini-home", str(home)]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "no session of" in captured.err
        assert (f"xshare: {NO_CHAT}: 1" in captured.err.splitlines()) == told


def test_a_codex_version_of_other_digits_is_no_version(tmp_path: Path):
    """'²' is a digit to str.isdigit but not to int(): the session is read, its version unknown (its meta line
    was once lost as "not JSON", the reader's ValueError caught with the parser's)."""
    path, want = codex_session(tmp_path, source="vscode")
    path.write_text(path.read_text().replace('"cli_version": "0.63.0"', '"cli_version": "0.1\\u00b271.0"'))
    problems: Counter = Counter()
    (row,) = codex.read(path, Counted(len, "chars"), problems)
    assert row["id"] == "0190aaaa-1111-7000-8000-000000000001" and row["api_calls"] == want["calls"]
    assert not problems and not row.get("unseen_calls")  # a version unknown is not one that titles threads
