"""Issue 9, the reader: hostile transcripts never crash, hang or silently move a number.

Every fixture here is written by hand: a tiny session with one exploration tool result, whose share is
known to be non-zero, plus the hostile row under test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted

from xshare.agents.claude_code import live_state
from xshare.agents.claude_code.lines import MAX_LINE, LineSplitter
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe, discover
from xshare.agents.protocol import Looking
from xshare.live import hook, session_state
from xshare.measure import tokens
from xshare.sessions.every_agent import measure
from xshare.state.paths import line_file, state_dir

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


@pytest.fixture
def deadline():
    """Turns a hang (a FIFO opened for reading blocks until a writer comes) into a failure."""

    def expire(_signal, _frame):
        raise TimeoutError("the reader hung")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def chars(text: str) -> int:
    return (len(text) + 3) // 4


# --- hand-written rows -----------------------------------------------------------------------------------


def _base(kind: str, uuid: str, minute: int) -> dict:
    return {"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "s1", "isSidechain": False,
            "timestamp": f"2026-11-03T09:{minute:02d}:00.000Z", "entrypoint": "cli", "cwd": "/home/dev/app"}


def prompt(uuid: str, text: str, minute: int = 0) -> dict:
    return {**_base("user", uuid, minute), "message": {"role": "user", "content": text}}


def usage(prompt_tokens: int, output: int = 20, read: int = 0) -> dict:
    return {"input_tokens": prompt_tokens - read, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": 0, "output_tokens": output}


def reply(uuid: str, request: str, used: object, blocks: list, minute: int = 1) -> dict:
    message = {"id": f"msg_{request}", "role": "assistant", "model": "claude-test", "content": blocks,
               "usage": used}
    return {**_base("assistant", uuid, minute), "requestId": request, "message": message}


def result(uuid: str, tool_id: str, text: str, minute: int = 2) -> dict:
    content = [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]
    return {**_base("user", uuid, minute), "message": {"role": "user", "content": content}}


READ = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/home/dev/app/config.py"}}
FILE_TEXT = "def load_config(path):\n    return parse(open(path).read())\n" * 40


def session_rows(middle: list[dict] | None = None) -> list[dict]:
    """A prompt, a call that reads a file, its result, (middle), then two more calls."""
    return [
        prompt("u1", "Where is the config loaded? " * 10),
        reply("a1", "req_1", usage(3000), [{"type": "text", "text": "Let me look."}, READ]),
        result("u2", "toolu_1", FILE_TEXT),
        *(middle or []),
        reply("a2", "req_2", usage(4000), [{"type": "text", "text": "It is loaded in config.py."}], minute=3),
        prompt("u3", "Thanks, and where is it saved?", minute=4),
        reply("a3", "req_3", usage(4100), [{"type": "text", "text": "Nowhere yet."}], minute=5),
    ]


def write_lines(path: Path, lines: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
    path.write_bytes(data)
    return path


def read(path: Path, count=chars) -> ClaudeTranscript:
    transcript = ClaudeTranscript(describe(path), Counted(count, "chars/4"))
    transcript.catch_up()
    return transcript


def measured(tmp_path: Path, lines: list, name: str = "s1") -> tuple[dict, Counter]:
    transcript = read(write_lines(tmp_path / "projects" / "-p" / f"{name}.jsonl", lines))
    return transcript.row(), transcript.problems


# --- crashes on one line -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        b"[" * 1100 + b"]" * 1100,
        b'{"type": "user", "x": ' + b"[" * 1100 + b"]" * 1100 + b"}",
        {"type": ["assistant"]},
        {"type": {"assistant": 1}},
        {"type": 7},
    ],
)
def test_a_hostile_line_is_skipped_and_counted_and_the_rest_measured(tmp_path: Path, hostile):
    row, problems = measured(tmp_path, session_rows([hostile]))
    clean, _ = measured(tmp_path, session_rows(), "clean")
    assert sum(problems.values()) == 1
    assert row["api_calls"] == clean["api_calls"] == 3
    assert row["billed_tokens"] == clean["billed_tokens"]


def test_an_attachment_nested_a_thousand_deep_is_read(tmp_path: Path):
    head = json.dumps({**_base("attachment", "u8", 2), "attachment": {"type": "x", "content": None}})
    deep = head.replace("null", "[" * 1000 + '"deep text"' + "]" * 1000).encode()
    row, problems = measured(tmp_path, session_rows([deep]))
    clean, _ = measured(tmp_path, session_rows(), "clean")
    assert not problems
    assert row["first_time_tokens"]["injected"] == clean["first_time_tokens"]["injected"] + chars("deep text")


def test_a_tool_call_whose_arguments_nest_a_thousand_deep_is_read(tmp_path: Path):
    deep_call = reply("a8", "req_8", usage(3500), [{"type": "tool_use", "id": "toolu_8", "name": "Bash",
                                                    "input": None}], minute=2)
    line = json.dumps(deep_call).replace('"input": null', '"input": ' + "[" * 1000 + '"ls"' + "]" * 1000)
    row, problems = measured(tmp_path, session_rows([line.encode()]))
    assert not problems and row["api_calls"] == 4


def test_a_tool_result_of_a_million_blanks_is_counted_without_a_panic(tmp_path: Path):
    counter = tokens.Counter(tokens.choose())
    assert counter.name == tokens.O200K
    blanks = " " * 1_000_000
    row, problems = measured(tmp_path, session_rows([result("u9", "toolu_1", blanks)]))
    assert not problems and row["api_calls"] == 3
    transcript = read(tmp_path / "projects" / "-p" / "s1.jsonl", counter.count)
    assert transcript.row()["api_calls"] == 3
    # 128 spaces are one o200k token: the count is the run's length over 128, give or take its ends
    assert abs(counter.count(blanks) - 1_000_000 / 128) <= 2
    assert counter.fallbacks == 0


def _exact(text: str) -> int:
    return len(tokens._load_o200k(tokens.PACKAGED_VOCAB).encode_ordinary(text))


@pytest.mark.parametrize(
    "text",
    [
        " " * 100_000,
        "hello" + " " * 700_000 + "world",
        "x.\n" + "\t" * 300_000 + "\n",
        "\u3000" * 70_000 + " \tend",
        "a" + " " * 90_000 + "\t" + " " * 90_000 + "b",
        "\xa0\xa0" + "\xa0" * 150_001 + "!",
    ],
)
def test_long_blank_runs_count_exactly_as_tiktoken_where_tiktoken_can(text: str):
    counter = tokens.Counter(tokens.choose())
    assert counter.count(text) == _exact(text)


@pytest.mark.parametrize("char", [" ", "\t", "\u3000"])
def test_a_blank_run_grows_by_whole_blocks(char: str):
    """What the exact count of runs past tiktoken's reach rests on: one block more is its tokens more."""
    counter = tokens.Counter(tokens.choose())
    chars_per_block, tokens_per_block = counter._period(char)
    base = counter._count("x" + char * 50_000 + "y")
    for blocks in (1, 7, 300):
        longer = counter._count("x" + char * (50_000 + blocks * chars_per_block) + "y")
        assert longer - base == blocks * tokens_per_block


def test_a_tokenizer_panic_never_escapes_the_counter():
    counter = tokens.Counter(tokens.choose())

    class Panic(BaseException):
        pass

    def explode(_text):
        raise Panic("Rust panicked")

    counter._encode = explode
    assert counter.count("some text") == chars("some text")
    assert counter.fallbacks == 1
    counter._encode = lambda _text: (_ for _ in ()).throw(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        counter.count("other text")


# --- wrong numbers, silently -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [{"input_tokens": "3000"}, {"input_tokens": -3000}, {"input_tokens": float("nan")},
     {"input_tokens": float("inf")}, {"input_tokens": 1e30}, {}, {"input_tokens": 3000, "output_tokens": {}}],
)
def test_a_call_with_unusable_usage_is_reported_and_caps_nothing(tmp_path: Path, bad: dict):
    row, problems = measured(tmp_path, session_rows([reply("a9", "req_9", bad, [], minute=2)]))
    clean, _ = measured(tmp_path, session_rows(), "clean")
    assert clean["exploration_share_of_prompt"] > 0.05
    assert problems == {"calls with unusable usage (not counted, no cap applied)": 1}
    assert row["api_calls"] == clean["api_calls"]
    assert row["exploration_share_of_prompt"] == clean["exploration_share_of_prompt"]
    assert row["billed_tokens"] == clean["billed_tokens"]


def test_the_order_of_a_calls_rows_does_not_change_the_share(tmp_path: Path):
    """Two rows of one request (the same prompt, as every row of one response has): the one with the larger
    output is kept, whichever comes first."""
    small = reply("a2a", "req_2", usage(4000, output=5), [{"type": "text", "text": "It is"}], minute=3)
    large = reply("a2b", "req_2", usage(4000, output=30), [{"type": "text", "text": "in config.py."}], minute=3)
    base = session_rows()[:3]
    first, _ = measured(tmp_path, [*base, small, large], "first")
    second, _ = measured(tmp_path, [*base, large, small], "second")
    assert first["exploration_share_of_prompt"] == second["exploration_share_of_prompt"] > 0.05
    assert first["billed_tokens"] == second["billed_tokens"]
    assert first["prompt_tokens_billed"] == second["prompt_tokens_billed"] == 3000 + 4000
    assert first["usage"]["output"] == second["usage"]["output"] == 20 + 30


def test_among_rows_of_equal_output_the_last_is_kept(tmp_path: Path):
    early = reply("a2a", "req_2", usage(4000, output=30), [{"type": "text", "text": "It is"}], minute=3)
    final = reply("a2b", "req_2", usage(4000, output=30, read=3900), [{"type": "text", "text": "there."}], minute=3)
    row, _ = measured(tmp_path, [*session_rows()[:3], early, final])
    assert row["usage"]["cache_read"] == 3900 and row["usage"]["input"] == 3000 + 100


def test_a_call_left_open_at_any_line_resumes_to_the_same_numbers(tmp_path: Path):
    """The live hook saves its state between any two lines, also between two rows of one call."""
    rows = session_rows()
    rows[3:3] = [reply("a2a", "req_2", usage(4000, output=5), [{"type": "text", "text": "It is"}], minute=3)]
    path = write_lines(tmp_path / "projects" / "-p" / "whole.jsonl", rows)
    whole = read(path).row()
    for cut in range(1, len(rows)):
        part = write_lines(tmp_path / "projects" / "-p" / f"part{cut}.jsonl", rows[:cut])
        state = json.loads(json.dumps(read(part).to_state()))
        write_lines(part, rows)
        resumed = ClaudeTranscript.from_state(state, describe(part), Counted(chars, "chars/4"))
        resumed.catch_up()
        assert {**resumed.row(), "id": "whole"} == whole, cut


def test_a_transcript_overwritten_in_place_is_read_again(tmp_path: Path):
    path = write_lines(tmp_path / "projects" / "-p" / "s1.jsonl", session_rows()[:3])
    inode = path.stat().st_ino
    state = read(path).to_state()
    other = [prompt("v1", "A different session altogether " * 5),
             *[reply(f"b{i}", f"req_b{i}", usage(1000 + i), [{"type": "text", "text": "ok " * i}]) for i in range(9)]]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in other)
    with open(path, "r+b") as handle:  # `cp other this`: same inode, new bytes, longer
        handle.write(data)
    assert path.stat().st_ino == inode and path.stat().st_size == len(data)
    resumed = ClaudeTranscript.from_state(state, describe(path), Counted(chars, "chars/4"))
    resumed.catch_up()
    assert resumed.row() == read(path).row()
    assert resumed.row()["api_calls"] == 9


def test_the_hook_notices_a_transcript_overwritten_in_place(tmp_path: Path):
    path = write_lines(tmp_path / "projects" / "-p" / "s1.jsonl", session_rows())
    session_state.update(path)
    other = [prompt("v1", "Another session " * 5),
             *[reply(f"b{i}", f"req_b{i}", usage(1000 + i), [{"type": "text", "text": "ok"}]) for i in range(12)]]
    with open(path, "r+b") as handle:
        handle.write(b"".join(json.dumps(line).encode() + b"\n" for line in other))
    assert session_state.update(path)["api_calls"] == 12


def test_the_hook_notices_a_transcript_overwritten_in_place_with_as_many_bytes(tmp_path: Path):
    path = write_lines(tmp_path / "projects" / "-p" / "s1.jsonl", session_rows())
    before = session_state.update(path)
    assert session_state.update(path) is None  # nothing new: the idle call
    data = path.read_bytes().replace(b"Where is the config loaded?", b"WHERE IS THE CONFIG LOADED?")
    with open(path, "r+b") as handle:
        handle.write(data)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a coarse clock may not tick
    after = session_state.update(path)
    assert after is not None and after != before
    assert after == read(path, tokens.Counter(tokens.choose()).count).row() | {"tokenizer": after["tokenizer"]}


# --- the fuzzer --------------------------------------------------------------------------------------------

ROW_KINDS = [
    prompt("f1", "hello"),
    reply("f2", "req_f", usage(500), [{"type": "text", "text": "hi"}, READ,
                                      {"type": "server_tool_use", "input": {"query": "q"}}]),
    result("f3", "toolu_1", FILE_TEXT[:200]),
    {**_base("user", "f4", 3), "isCompactSummary": True, "message": {"content": [{"type": "text", "text": "sum"}]}},
    {**_base("user", "f5", 3), "isSidechain": True, "message": {"content": "side task"}},
    {**_base("attachment", "f6", 3), "attachment": {"type": "file", "content": {"file": {"content": "x = 1"}}}},
    {**_base("system", "f7", 3), "subtype": "microcompact_boundary",
     "microcompactMetadata": {"compactedToolIds": ["toolu_1"], "clearedAttachmentUUIDs": ["f6"]}},
    {**_base("system", "f8", 3), "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
    {"type": "summary", "summary": "a title", "leafUuid": "f2"},
    {"type": "cost-state", "modelUsage": {"claude-test": {"inputTokens": 5, "outputTokens": 9,
                                                          "cacheCreationInputTokens": 3}}},
    {"type": "api-request", "id": "req_f", "querySource": "repl", "params": {"model": "m"}, "tail": ["h1"]},
    {"type": "progress", "data": {"type": "hook_progress"}, "toolUseID": "toolu_1"},
    {**_base("user", "f9", 3), "toolUseResult": {"stdout": "x"}, "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "t"}]}]}},
]
WEIRD = [None, True, False, 0, -1, 1.5, 1e30, 10**30, float("nan"), float("inf"), "", "text", "<synthetic>",
         [], [1, [2, [3]]], {}, {"a": {"b": []}}, [{"type": "text", "text": 5}], {"type": "tool_use"},
         "[Request interrupted by user", [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


def _replaced(value: object, path: tuple, new: object) -> object:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(copy[path[0]], path[1:], new)
    return copy


def test_fuzz_every_field_of_every_row_kind(tmp_path: Path):
    """Each field of each kind of row, in turn, set to a value of the wrong type: the reader skips or
    ignores it, never raises, and never needs its last-resort guard (which would hide a missing check)."""
    import random

    rng = random.Random(9)
    lines = []
    for base in ROW_KINDS:
        for path in _paths(base):
            for new in rng.sample(WEIRD, 6):
                unique = {**base, **{key: f"{base[key]}-{len(lines)}" for key in ("uuid", "requestId") if key in base}}
                lines.append(_replaced(unique, path, new))  # a row of its own, not a copy of another
    rng.shuffle(lines)
    encoded = [json.dumps(line).encode() for line in lines]  # NaN and Infinity too, as json writes them
    path = write_lines(tmp_path / "projects" / "-p" / "fuzz.jsonl", encoded)
    started = time.monotonic()
    transcript = read(path)
    row = transcript.row()
    assert time.monotonic() - started < 10
    assert not [kind for kind in transcript.problems if kind.startswith("lines that could not be read")]
    assert row["api_calls"] >= 1 and transcript.offset == path.stat().st_size
    json.dumps(transcript.to_state())


# --- transcripts it cannot find, and files it must not open ----------------------------------------------


def test_transcripts_in_other_folder_shapes_are_found(tmp_path: Path):
    projects = tmp_path / "projects"
    kept = write_lines(projects / "-p" / "sessions" / "0b7e9d8c-1111-4222-8333-444455556666.jsonl", session_rows())
    agent = write_lines(projects / "-p" / "sessions" / "0b7e9d8c-1111-4222-8333-444455556666" / "subagents"
                        / "agent-a1.jsonl", session_rows())
    found = {file.path: file for file in discover([projects])}
    assert set(found) == {kept, agent}
    assert found[agent].parent_id == "0b7e9d8c-1111-4222-8333-444455556666"
    done = _cli("session", "0b7e9d8c-1111-4222-8333-444455556666", "--json", "--estimate",
                "--claude-root", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["api_calls"] == 3


@needs_fifo
def test_fifos_and_devices_are_skipped_and_counted(tmp_path: Path, deadline):
    projects = tmp_path / "projects"
    write_lines(projects / "-p" / "s1.jsonl", session_rows())
    os.mkfifo(projects / "-p" / "x.jsonl")
    (projects / "-p" / "zero.jsonl").symlink_to("/dev/zero")
    (projects / "-p" / "folder.jsonl").mkdir()
    skipped: Counter = Counter()
    assert [file.session_id for file in discover([projects], skipped)] == ["s1"]
    assert sum(skipped.values()) == 3 and all("not a regular file" in kind for kind in skipped)
    fifo = ClaudeTranscript(describe(projects / "-p" / "x.jsonl"), Counted(chars, "chars/4"))
    assert fifo.catch_up() == 0 and fifo.unreadable == "not a regular file"


def _cli(*argv: str, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess:
    """xshare as installed, in a process of its own: a hang fails the test instead of stalling the suite."""
    return subprocess.run([sys.executable, "-m", "xshare", *argv], input=stdin, capture_output=True,
                          timeout=timeout, cwd=state_dir().parent)


@needs_fifo
def test_report_over_a_fifo_and_dev_zero_ends_and_says_so(tmp_path: Path):
    projects = tmp_path / "claude" / "projects"
    write_lines(projects / "-p" / "s1.jsonl", session_rows())
    os.mkfifo(projects / "-p" / "x.jsonl")
    (projects / "-p" / "zero.jsonl").symlink_to("/dev/zero")
    done = _cli("report", "--claude-root", str(tmp_path / "claude"), "--hermes-db", str(tmp_path / "none.db"),
                "--all")
    assert done.returncode == 0, done.stderr
    assert "not a regular file (FIFO, device, folder, broken link): 2" in done.stderr.decode()


@pytest.mark.parametrize("kind", ["fifo", "missing", "folder"])
@needs_fifo
def test_the_hook_logs_a_transcript_it_cannot_read_and_writes_no_ledger(tmp_path: Path, kind: str):
    path = tmp_path / "projects" / "-p" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    payload = {"session_id": "s1", "transcript_path": str(path), "hook_event_name": "Stop"}
    done = _cli("hook", stdin=json.dumps(payload).encode(), timeout=30)
    assert done.returncode == 0 and done.stdout == b""
    assert not line_file("s1").exists() and not live_state.state_file("s1").exists()
    log = (state_dir() / "logs" / "hook.log").read_text()
    assert log.count("could not be read") == 1


@needs_fifo
def test_a_fifo_is_reported_by_the_measurer(tmp_path: Path, deadline):
    projects = tmp_path / "projects"
    write_lines(projects / "-p" / "s1.jsonl", session_rows())
    os.mkfifo(projects / "-p" / "x.jsonl")
    result = measure(Looking({"claude-code": [str(projects)], "hermes": []}, tokens.choose(estimate=True),
                             use_cache=False))
    assert [row["api_calls"] for row in result.rows] == [3]
    assert sum(count for kind, count in result.problems.items() if "not a regular file" in kind) == 1


# --- long lines: linear time, bounded memory ---------------------------------------------------------------


def test_a_line_longer_than_the_limit_is_skipped_and_the_next_read(tmp_path: Path):
    path = tmp_path / "projects" / "-p" / "s1.jsonl"
    rows = session_rows()
    write_lines(path, rows[:3])
    with open(path, "ab") as handle:
        handle.write(b'{"type": "progress", "data": "' + b"x" * (MAX_LINE + 10) + b'"}\n')
    with open(path, "ab") as handle:
        handle.write(b"".join(json.dumps(row).encode() + b"\n" for row in rows[3:]))
    transcript = read(path)
    assert transcript.problems == {"lines longer than 64 MB skipped": 1}
    assert transcript.row()["api_calls"] == 3 and transcript.offset == path.stat().st_size


def test_a_long_line_without_a_newline_takes_linear_time(tmp_path: Path):
    """256 MB without a newline, in the reader's 4 MB chunks: the old reader re-joined the line for every
    chunk (9 s and 1.3 GB here); it is now streamed past, held nowhere, and reported once it ends."""
    transcript = ClaudeTranscript(describe(tmp_path / "s1.jsonl"), Counted(chars, "chars/4"))
    chunk = b"y" * (4 << 20)
    started = time.monotonic()
    transcript.feed(b'{"type": "progress", "data": "')
    for _ in range(64):
        transcript.feed(chunk)
    transcript.feed(b'"}\n' + json.dumps(prompt("u1", "still here")).encode() + b"\n")
    assert time.monotonic() - started < 3
    assert transcript.problems == {"lines longer than 64 MB skipped": 1}
    assert transcript.ledger.first_time["conversation"] == chars("still here")


def test_a_long_line_in_many_chunks_is_joined_once():
    splitter = LineSplitter(max_line=1 << 30)
    chunk = b"y" * (1 << 20)
    for _ in range(64):
        assert list(splitter.split(chunk)) == []
    assert len(splitter._parts) == 64  # pieces, not a growing copy
    assert splitter.held == 64 * (1 << 20)
    lines = list(splitter.split(b"z\nnext"))
    assert [len(line) for line in lines] == [64 * (1 << 20) + 1]
    assert splitter.held == 4  # the line took 64 MB + 2 bytes of the 64 MB + 6 fed
    assert splitter.rest() == (b"next", 4)


def test_a_line_past_the_limit_is_not_held_while_streamed_past():
    splitter = LineSplitter(max_line=100)
    assert list(splitter.split(b"a" * 60)) == [] and list(splitter.split(b"b" * 60)) == []
    assert splitter._parts == [] and splitter.held == 120  # dropped as soon as it outgrew the limit
    assert list(splitter.split(b"c" * 1000 + b"\nok\n")) == [None, b"ok"]
    assert splitter.held == 0


def test_a_session_start_before_the_transcript_exists_is_no_problem(tmp_path: Path):
    """Claude Code writes the transcript at the first message, after SessionStart."""
    path = tmp_path / "projects" / "-p" / "s1.jsonl"
    hook.run_hook(json.dumps({"session_id": "s1", "transcript_path": str(path),
                              "hook_event_name": "SessionStart", "source": "startup"}).encode())
    log = state_dir() / "logs" / "hook.log"
    assert not log.exists() or "could not be read" not in log.read_text()
    assert not live_state.state_file("s1").exists()


def split_everywhere(data: bytes, rng, max_line: int, views: bool) -> tuple[list, int, int]:
    """The lines a splitter gives for `data` fed in random pieces, the bytes they took, and what it holds."""
    splitter, found, taken, position = LineSplitter(max_line=max_line, views=views), [], 0, 0
    while position < len(data):
        piece = data[position:position + rng.choice([1, 2, 5, 13, 100, 4096])]
        held = splitter.held
        found += [None if line is None else bytes(line) for line in splitter.split(piece)]
        taken += held + len(piece) - splitter.held
        position += len(piece)
    return found, taken, splitter.held


@pytest.mark.parametrize("views", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_the_splitter_gives_the_same_lines_and_offsets_for_any_pieces(seed: int, views: bool):
    import random

    rng = random.Random(seed)
    lines = [b"", b"{}", b" ", b"x" * 40, b"y" * 41, b'{"a": "\\n"}\r', b"z" * 300, b"ok"]
    data = b"\n".join(rng.choice(lines) for _ in range(200)) + b"\nunfinished"
    expected = [line if len(line) <= 40 else None for line in data.split(b"\n")[:-1]]
    found, taken, held = split_everywhere(data, rng, 40, views)
    assert found == expected
    assert held == len(b"unfinished") and taken == len(data) - held


def test_blank_odd_and_broken_lines_count_the_same_fed_whole_or_byte_by_byte(tmp_path: Path):
    """The reader parses a line straight away and looks closer only when orjson refuses it: blank and
    whitespace lines stay silent, the rest is counted as before, in one piece or in many."""
    odd = [b"", b"   ", b"\t\x0c", b"null", b"[1, 2]", b'"text"', b"{broken", b'{"type": "user", "x": "\xff"}',
           b'{"type": "user", "message": {"content": "\\ud800 lone"}}']
    path = write_lines(tmp_path / "projects" / "-p" / "s1.jsonl", session_rows(odd))
    whole = read(path)
    pieces = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    data = path.read_bytes()
    for position in range(len(data)):
        pieces.feed(data[position:position + 1])
    pieces.finish()
    assert whole.problems == pieces.problems == {
        "lines that are not JSON objects skipped": 3, "malformed lines skipped": 1,
        "lines with non-UTF-8 bytes (replaced)": 1}
    assert whole.offset == pieces.offset == len(data)
    assert whole.row() == pieces.row()
    assert whole.row()["api_calls"] == 3
