"""The Claude Code reader's maps of rows and calls held as 64-bit digests (xshare/measure/digests.py, issue 29):
the same figures as ids held as text (duplicate rows, one call's rows far apart, a reused request id, a result
long after its call, a compaction keeping rows with results, copies across files), whether the transcript
comes in one piece, in many, or through a saved state, even an older one; and a few dozen bytes a call."""

from __future__ import annotations

import json
import random
import sys
from array import array
from pathlib import Path

import pytest
from agent_fixtures import Counted

from xshare.agents.claude_code import many as claude_code
from xshare.agents.claude_code import saved
from xshare.agents.claude_code.transcript import REUSED_ID, ClaudeTranscript, describe
from xshare.agents.common import counting as counter
from xshare.measure import digests, tokens
from xshare.measure.digests import DigestMap, KeptKeys, KeyMap, digest

SESSION = "5e551011-0000-4000-8000-000000000777"


def words(text: str) -> int:
    """A token count the test can add up by hand: a word a token."""
    return len(text.split())


def head(kind: str, uuid: str, second: int, **more) -> dict:
    return {"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": SESSION, "isSidechain": False,
            "timestamp": f"2026-11-03T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z",
            "entrypoint": "cli", **more}


def call(uuid: str, second: int, request: str, message: str, prompt: int, output: int, content: list) -> dict:
    usage = {"input_tokens": 2, "cache_read_input_tokens": prompt - 2, "cache_creation_input_tokens": 0,
             "output_tokens": output}
    return head("assistant", uuid, second, requestId=request,
                message={"id": message, "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
                         "usage": usage})


def user(uuid: str, second: int, content, **more) -> dict:
    return head("user", uuid, second, message={"role": "user", "content": content}, **more)


def tool_use(tool_id: str, name: str, path: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": path, "pattern": path}}


def result(tool_id: str, text: str) -> list:
    return [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]


def session_rows() -> list[dict]:
    """One session holding every case the maps decide; the figures each gives are asserted below."""
    return [
        user("u-01", 1, "read the two files please"),  # 5
        call("a-01", 2, "req_1", "msg_1", 1000, 5, [{"type": "text", "text": "reading"}]),  # 1
        call("a-02", 3, "req_1", "msg_1", 1000, 9, [tool_use("toolu_1", "Read", "a.py")]),  # one call, 2 rows
        user("u-02", 4, result("toolu_1", "alpha beta gamma delta")),  # 4 exploration
        user("u-02", 4, result("toolu_1", "alpha beta gamma delta")),  # the same row written twice
        call("a-03", 5, "req_2", "msg_2", 1100, 7, [tool_use("toolu_2", "Grep", "needle")]),
        user("u-03", 6, "and now a long wait"),  # 5
        call("a-04", 7, "req_3", "msg_3", 1200, 3, [{"type": "text", "text": "still waiting"}]),  # 2
        call("a-05", 8, "req_1", "msg_1", 1000, 12, [{"type": "text", "text": "late"}]),  # req_1's last row
        call("a-06", 9, "req_2", "msg_6", 1300, 4, [{"type": "text", "text": "a proxy's constant id"}]),
        user("u-04", 10, result("toolu_2", "one two three four five six")),  # 6: long after its call
        call("a-07", 11, "req_7", "msg_7", 1400, 2, [tool_use("toolu_7", "Read", "kept.py")]),
        user("u-05", 12, result("toolu_7", "kept result of nine words in the preserved row")),
        head("system", "s-01", 13, subtype="compact_boundary",
             compactMetadata={"preservedMessages": {"uuids": ["u-05"]}}),
        user("u-06", 14, "the summary of it all", isCompactSummary=True),
        call("a-08", 15, "req_8", "msg_8", 1500, 1, [{"type": "text", "text": "done"}]),
    ]


def transcript_at(tmp_path: Path, rows: list[dict], name: str = SESSION) -> Path:
    path = tmp_path / "projects" / "-home-dev-app" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_whole(path: Path, copied=()) -> ClaudeTranscript:
    reader = ClaudeTranscript(describe(path), Counted(words, "words"), copied=copied)
    reader.catch_up()
    return reader


def read_in_pieces(path: Path, cuts: int) -> ClaudeTranscript:
    """The bytes in `cuts` pieces, the reader saved as JSON and resumed between any two, as the hook does."""
    data = path.read_bytes()
    reader, position = ClaudeTranscript(describe(path), Counted(words, "words")), 0
    for number, at in enumerate(sorted(random.Random(cuts).sample(range(1, len(data)), cuts - 1)) + [len(data)]):
        reader.feed(data[position:at])
        position = at
        if number % 2:  # resumed from its last complete line, as the hook reads from the offset saved
            reader = ClaudeTranscript.from_state(json.loads(json.dumps(reader.to_state())), describe(path),
                                                 Counted(words, "words"))
            position = reader.offset
    reader.finish()
    return reader


@pytest.fixture(params=["text", "digests"])
def held_as(request, monkeypatch) -> str:
    """The maps hold ids as text (an ordinary session), or as digests past two ids, in buckets of two keys on
    average: a short session's maps then split as a huge one's do."""
    if request.param == "digests":
        monkeypatch.setattr(digests, "PLAIN_KEYS", 2)
        monkeypatch.setattr(digests, "_PER_BUCKET", 2)
    return request.param


def test_the_maps_give_every_figure_of_the_ids(tmp_path: Path, held_as):
    reader = read_whole(transcript_at(tmp_path, session_rows()))
    row = reader.row()
    # req_1's two rows are one call, its late third row revises its output (12); req_2 reused: its own call
    assert row["api_calls"] == 6
    assert row["prompt_tokens_billed"] == 1000 + 1100 + 1200 + 1300 + 1400 + 1500
    assert row["usage"]["output"] == 12 + 7 + 3 + 4 + 2 + 1
    assert reader.problems[REUSED_ID] == 1
    # the Read's result once (the repeated row skipped), the Grep's result long after its call: both explore
    assert row["first_time_tokens"]["exploration"] == 4 + 6 + 9 + 3 * 2  # and the three calls' arguments, 2 each
    # each call carries what came before it (a call's arguments join after it): req_2 the Read (2 + 4), req_3
    # and the reused id's call the Grep's arguments too, the next the Grep's result; the compaction keeps only
    # the preserved row's result (9), not its call's arguments, for the last call
    assert reader.ledger.billed["exploration"] == (2 + 4) + (2 + 4 + 2) * 2 + (2 + 4 + 2 + 6) + 9


def test_one_piece_many_pieces_and_saved_states_agree(tmp_path: Path, held_as):
    path = transcript_at(tmp_path, session_rows())
    whole = read_whole(path)
    for cuts in (2, 7, 40):
        pieces = read_in_pieces(path, cuts)
        assert pieces.row() == whole.row()
        fed, caught_up = pieces.to_state(), whole.to_state()
        for state in (fed, caught_up):  # the file's identity, known to catch_up only
            del state["identity"], state["fingerprint"]
        assert json.dumps(fed, sort_keys=True) == json.dumps(caught_up, sort_keys=True)
        assert isinstance(fed["seen_rows"], str if held_as == "digests" else list)


def test_a_state_saved_before_digests_still_loads(tmp_path: Path):
    """A state of the older shape (ids as text, no request ids saved) resumes to the same figures."""
    rows = session_rows()
    path = transcript_at(tmp_path, rows)
    data = path.read_bytes()
    half = data.index(b'"u-04"')
    half = data.rindex(b"\n", 0, half) + 1
    reader = ClaudeTranscript(describe(path), Counted(words, "words"))
    reader.feed(data[:half])
    state = reader.to_state()
    state.update(
        seen_rows=["u-01", "a-01", "a-02", "u-02", "a-03", "u-03", "a-04", "a-05", "a-06"],
        tool_categories={"toolu_1": "exploration", "toolu_2": "exploration"},
        calls={f"req_{n}\x1fmsg_{n}\x1f{prompt}": snapshot for n, prompt, snapshot in [
            (1, 1000, [1000, 2, 998, 0, 0, 12]), (2, 1100, [1100, 2, 1098, 0, 0, 7]),
            (3, 1200, [1200, 2, 1198, 0, 0, 3])]},  # the reused id's call is still open: not among them
        result_rows={"u-02": ["toolu_1"]},
        copies={"copied": [], "times": {f"req_{n}\x1fmsg_{m}\x1f{prompt}": f"2026-11-03T00:00:0{second}.000Z"
                                        for n, m, prompt, second in [(1, 1, 1000, 2), (2, 2, 1100, 5),
                                                                     (3, 3, 1200, 7), (2, 6, 1300, 9)]}},
    )
    del state["requests"]
    resumed = ClaudeTranscript.from_state(json.loads(json.dumps(state)), describe(path), Counted(words, "words"))
    assert [dict(resumed.copies.times.items())[digest("req_2\x1fmsg_6\x1f1300")]] == ["2026-11-03T00:00:09.000Z"]
    resumed.feed(data[half:])
    resumed.finish()
    whole = read_whole(path)
    assert resumed.row() == whole.row()
    reused = ClaudeTranscript.from_state(json.loads(json.dumps(state)), describe(path), Counted(words, "words"))
    reused.feed(b'{"type":"assistant","uuid":"a-99","requestId":"req_3","message":{"id":"msg_99","model":"m",'
                b'"content":[],"usage":{"input_tokens":5}}}\n')
    assert reused.problems[REUSED_ID] == 1  # req_3 again: the request ids rebuilt from the calls


def test_copies_across_two_files_are_billed_once(tmp_path: Path, held_as, monkeypatch):
    """A backup holding the session's calls beside it: each call billed by the file that made it first."""
    rows = session_rows()
    path = transcript_at(tmp_path, rows)
    backup = transcript_at(tmp_path, [*rows[:8], call("b-01", 30, "req_b", "msg_b", 1250, 5, [])],
                           "5e551011-0000-4000-8000-000000000778")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    estimate = counter.LazyCounter(tokens.choose(estimate=True))
    measured = claude_code.measure_claude([describe(path), describe(backup)], estimate, use_cache=False, workers=1)
    lost = measured.copied[claude_code.path_key(backup)]
    assert lost == {digest(f"req_{n}\x1fmsg_{n}\x1f{prompt}") for n, prompt in [(1, 1000), (2, 1100), (3, 1200)]}
    rows_by_id = {row["id"]: row for row in measured.rows}
    assert rows_by_id[backup.stem]["api_calls"] == 1 and rows_by_id[backup.stem]["prompt_tokens_billed"] == 1250
    assert claude_code.copied_here(describe(backup), read_whole(backup).copies.times, estimate.made()) == lost


def deep_size(value, seen: set) -> int:
    """Bytes a value holds, its parts counted once."""
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(deep_size(key, seen) + deep_size(item, seen) for key, item in value.items())
    elif isinstance(value, (list, tuple, set, frozenset)):
        size += sum(deep_size(item, seen) for item in value)
    elif hasattr(value, "__dict__") and not isinstance(value, (str, array)):
        size += deep_size(vars(value), seen)
    return size


def test_the_maps_cost_a_few_dozen_bytes_a_call(tmp_path: Path, monkeypatch):
    """20,000 calls, each a Read and its result: the maps of rows and calls (and their saved state) hold
    under 130 bytes a call once they hold digests; the row uuids, tool ids and call keys as text took 1,000."""
    monkeypatch.setattr(digests, "PLAIN_KEYS", 1000)
    count = 20_000
    rows = []
    for number in range(count):
        rows.append(call(f"a-{number:08d}", number, f"req_{number:08d}", f"msg_{number:08d}", 3000 + number, 5,
                         [tool_use(f"toolu_{number:08d}", "Read", f"src/f{number % 50}.py")]))
        rows.append(user(f"u-{number:08d}", number, result(f"toolu_{number:08d}", f"line {number % 7}")))
    reader = read_whole(transcript_at(tmp_path, rows))
    assert reader.row()["api_calls"] == count
    seen: set = {id(reader.copies.path)}
    held = sum(deep_size(getattr(reader, name), seen) for name in saved.MAPS) + deep_size(reader.copies, seen)
    assert held / count < 130
    state = reader.to_state()
    assert sum(len(json.dumps(state[name])) for name in [*saved.MAPS, "copies"]) / count < 180


def test_a_digest_map_holds_what_a_dict_would(held_as):
    rng = random.Random(29)
    held, expected = DigestMap(2, "q"), {}
    for number in range(3000):
        key = rng.choice(list(expected)) if expected and rng.random() < 0.3 else rng.getrandbits(64)
        expected[key] = [rng.randrange(-1 << 40, 1 << 40), number]
        held.put(key, expected[key])
    assert len(held) == len(expected) and dict(held.items()) == expected and list(held) == sorted(expected)
    again = DigestMap.from_text(held.text(), 2, "q")
    assert all(again.get(key) == values for key, values in expected.items()) and len(again) == len(expected)
    assert again.get(rng.getrandbits(64)) is None
    several = DigestMap(1, "Q")
    for number in range(500):
        several.add(number % 7 << 60, (number,))
    assert several.values_of(3 << 60) == [[number] for number in range(3, 500, 7)]
    with pytest.raises(ValueError):
        DigestMap.from_text(held.text()[:-4], 2, "q")


def test_a_key_map_answers_alike_before_and_after_it_holds_digests(monkeypatch):
    """Past PLAIN_KEYS a KeyMap turns its ids into digests; every answer stays the same, saved or not."""
    monkeypatch.setattr(digests, "PLAIN_KEYS", 40)
    rng = random.Random(30)
    usage, rows, expected, results = KeyMap(2, "i"), KeyMap(multi=True), {}, {}
    for number in range(200):
        key = f"req_{rng.randrange(120)}"
        assert usage.put(key, [number, -number]) == (key not in expected)
        expected[key] = [number, -number]
        rows.add(f"u-{number % 60}", f"toolu_{number}")
        results.setdefault(f"u-{number % 60}", []).append(f"toolu_{number}")
        if number in (10, 100):  # through JSON, held as text, then as digests
            for held in (usage, rows):
                again = KeyMap(held.width, held.typecode, held.multi)
                again.restore(json.loads(json.dumps(held.saved())))
                assert again.saved() == held.saved()
    assert usage.plain is None and isinstance(usage.saved(), str)
    assert all(usage.get(key) == values for key, values in expected.items()) and usage.get("req_x") is None
    kept = rows.only(["u-3", "u-7", "u-3", "u-99"])
    assert sorted(kept.values()) == sorted(digest(tool) for tool in results["u-3"] + results["u-7"])
    keys = KeptKeys(["u-3"], kept.values())
    assert "u-3" in keys and results["u-7"][0] in keys and results["u-8"][0] not in keys and None not in keys
