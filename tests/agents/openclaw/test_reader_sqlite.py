"""OpenClaw 2026.9: transcripts in SQLite (some rows zstd-compressed), cold archives, .zst rotated copies,
tools behind tool_search / tool_call, entry shapes it does not know; and the zstd decoder itself."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, openclaw_session
from openclaw_fixtures import add_cold_archive, as_version_4, compress, jsonl_entries, openclaw_database

from xshare.agents.common import unzstd
from xshare.agents.openclaw import db as openclaw_db
from xshare.agents.openclaw import reader as openclaw
from xshare.agents.openclaw.tools import TOOLS
from xshare.cli import main
from xshare.measure.tool_tables import explain_tool, wrapped_call

CAN_COMPRESS = compress(b"x" * 2000) is not None
needs_zstd = pytest.mark.skipif(not CAN_COMPRESS, reason="no zstd compressor on this machine (libzstd)")
FIGURES = ("api_calls", "prompt_tokens_billed", "context_tokens", "billed_tokens", "first_time_tokens", "usage",
           "model", "compactions")


def _session(tmp_path: Path, **options) -> list[dict]:
    path, _ = openclaw_session(tmp_path / "jsonl", **options)
    return as_version_4(jsonl_entries(path))


def _rows(path: Path) -> tuple[dict[str, dict], Counter]:
    problems: Counter = Counter()
    return {row["id"]: row for row in openclaw.read(path, Counted(len, "chars"), problems)}, problems


def _one(path: Path) -> tuple[dict, Counter]:
    rows, problems = _rows(path)
    assert len(rows) == 1, (rows, problems)
    return next(iter(rows.values())), problems


@needs_zstd
@pytest.mark.parametrize("compaction", [False, True])
def test_the_database_reads_as_the_same_session_exported_to_a_file(tmp_path: Path, compaction: bool):
    entries = _session(tmp_path, compaction=compaction)
    database, packed = openclaw_database(tmp_path / "state", {entries[0]["id"]: ("agent:main:main", entries)})
    assert packed >= 1  # the 80-line read result is over 1 KiB: stored compressed, as OpenClaw does
    exported = tmp_path / "export" / "agents" / "main" / "sessions" / f"{entries[0]['id']}.jsonl"
    exported.parent.mkdir(parents=True)
    exported.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    from_db, problems = _one(database)
    from_file, _ = _one(exported)
    assert not problems and from_db["agent"] == "openclaw" and from_db["source"] == "interactive"
    assert {name: from_db[name] for name in FIGURES} == {name: from_file[name] for name in FIGURES}
    assert from_db["api_calls"] == 3 and from_db["billed_tokens"]["exploration"] > 0


@needs_zstd
def test_without_a_zstd_decoder_a_session_with_compressed_rows_is_skipped_and_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    big = _session(tmp_path)
    small = [entry for entry in _session(tmp_path / "b") if entry.get("id") != "e004"]  # no row over 1 KiB
    small[0] = {**small[0], "id": "small-session"}
    database, _ = openclaw_database(tmp_path / "state", {big[0]["id"]: ("agent:main:main", big),
                                                          "small-session": ("agent:main:cron:nightly", small)})
    monkeypatch.setattr(unzstd, "decompress", lambda data, size=None: None)
    rows, problems = _rows(database)
    assert list(rows) == ["small-session"] and rows["small-session"]["api_calls"] == 3  # never read as zero
    assert problems == {openclaw_db.COMPRESSED_UNREADABLE: 1}
    assert main(["report", "--all", "--json", "--no-cache", "--openclaw-home", str(tmp_path / "state")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["groups"]["openclaw/automated"]["api_calls"] == 3
    assert f"{openclaw_db.COMPRESSED_UNREADABLE}: 1" in captured.err


def test_found_by_default_grouped_by_key_and_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture):
    home = tmp_path / "state"
    main_entries, child = _session(tmp_path), _session(tmp_path / "c")
    child[0] = {**child[0], "id": "child-session"}
    database, _ = openclaw_database(home, {main_entries[0]["id"]: ("agent:main:main", main_entries),
                                          "child-session": ("agent:main:subagent:4f2a", child)}, squeeze=False)
    before = database.read_bytes()
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(home))
    assert openclaw.discover(openclaw.default_homes()) == [database]
    assert main(["report", "--all", "--json", "--no-cache"]) == 0
    groups = json.loads(capsys.readouterr().out)["groups"]
    assert groups["openclaw/interactive"]["api_calls"] == 3 and groups["openclaw/subagent"]["api_calls"] == 3
    assert database.read_bytes() == before and sorted(p.name for p in database.parent.iterdir()) == [database.name]


@needs_zstd
@pytest.mark.parametrize("in_file", [False, True])
def test_a_session_in_cold_storage_is_read_from_its_archive(tmp_path: Path, in_file: bool):
    entries = _session(tmp_path)
    database, _ = openclaw_database(tmp_path / "state", {})
    assert add_cold_archive(database, entries[0]["id"], "agent:main:main", entries, in_file=in_file)
    rows, problems = _rows(database)
    assert not problems and rows[entries[0]["id"]]["api_calls"] == 3


def test_a_cold_archive_that_is_missing_is_counted(tmp_path: Path):
    database, _ = openclaw_database(tmp_path / "state", {})
    connection = sqlite3.connect(database)
    connection.execute("INSERT INTO session_windows VALUES ('gone', 'agent:main:main', NULL, NULL, 0, 0, NULL, NULL)")
    connection.execute("INSERT INTO session_transcript_cold_archives VALUES ('gone', 'g1', 'a.jsonl.zst', ?, 1, 10, "
                       "10, 0, 0, 'file', NULL)", ("0" * 64,))
    connection.commit()
    connection.close()
    rows, problems = _rows(database)
    assert rows == {} and problems == {openclaw_db.COLD_MISSING: 1}


@needs_zstd
def test_a_compressed_rotated_copy_is_read(tmp_path: Path):
    path, want = openclaw_session(tmp_path)
    archived = path.with_name(path.name + ".deleted.2026-12-01T10-00-00.000Z.zst")
    archived.write_bytes(compress(path.read_bytes()))
    path.unlink()
    assert openclaw.discover([tmp_path]) == [archived]
    row, problems = _one(archived)
    assert not problems and row["api_calls"] == want["calls"] and row["prompt_tokens_billed"] == want["prompt"]
    archived.write_bytes(b"\x28\xb5\x2f\xfd damaged")
    rows, problems = _rows(archived)
    assert rows == {} and problems == {openclaw_db.COMPRESSED_UNREADABLE: 1}


def test_not_a_database_or_not_openclaws(tmp_path: Path):
    junk = tmp_path / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    junk.parent.mkdir(parents=True)
    junk.write_bytes(b"not a database")
    rows, problems = _rows(junk)
    assert rows == {} and any("not an SQLite database" in kind for kind in problems)
    junk.unlink()
    sqlite3.connect(junk).execute("CREATE TABLE t (x)").connection.close()
    rows, problems = _rows(junk)
    assert rows == {} and problems == {openclaw_db.NOT_OPENCLAW: 1}


def test_a_locked_database_is_tried_again_then_reported(tmp_path: Path):
    entries = _session(tmp_path)
    database, _ = openclaw_database(tmp_path / "state", {entries[0]["id"]: ("agent:main:main", entries)},
                                    squeeze=False)
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        rows, problems = _rows(database)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows == {} and len(problems) == 1 and "could not be read (database is locked)" in next(iter(problems))
    rows, problems = _rows(database)
    assert len(rows) == 1 and not problems


def _with_tool_search(tmp_path: Path) -> list[dict]:
    """The fixture session with its read and exec made through tool_call, as OpenClaw 2026.9 hides tools."""
    entries = _session(tmp_path)
    for entry in entries:
        for part in (entry.get("message") or {}).get("content") or []:
            if isinstance(part, dict) and part.get("name") == "read":
                part.update(name="tool_call", arguments={"id": "read", "args": part["arguments"]})
            elif isinstance(part, dict) and part.get("name") == "exec":
                part.update(name="tool_call", arguments={"id": "openclaw:core:exec", "args": part["arguments"]})
        message = entry.get("message") or {}
        if message.get("role") == "toolResult" and message.get("toolName") in ("read", "exec"):
            message["toolName"] = "tool_call"
    return entries


def test_a_read_through_tool_call_is_a_read(tmp_path: Path):
    plain = _session(tmp_path / "plain")
    hidden = _with_tool_search(tmp_path / "hidden")
    hidden[0] = {**hidden[0], "id": "hidden-session"}
    database, _ = openclaw_database(tmp_path / "state", {plain[0]["id"]: ("agent:main:main", plain),
                                                          "hidden-session": ("agent:main:main", hidden)},
                                    squeeze=False)
    rows, problems = _rows(database)
    assert not problems
    direct, wrapped = rows[plain[0]["id"]], rows["hidden-session"]
    assert wrapped["billed_tokens"]["exploration"] > 0 and wrapped["billed_tokens"]["other"] == 0
    assert wrapped["first_time_tokens"]["exploration"] >= direct["first_time_tokens"]["exploration"]


@pytest.mark.parametrize(("arguments", "want"), [
    ({"id": "read", "args": {"path": "a.py"}}, ("read", {"path": "a.py"})),
    ({"id": "openclaw:core:exec", "args": {"command": "ls"}}, ("exec", {"command": "ls"})),
    ('{"name": "web_fetch", "url": "https://example.com"}', ("web_fetch", {"url": "https://example.com"})),
    ({"toolId": "mcp:files:read", "input": {"path": "b"}}, ("read", {"path": "b"})),
    ({"args": {"path": "x"}}, None), ("not json", None), (None, None),
])
def test_wrapped_call(arguments: object, want: tuple | None):
    assert wrapped_call(arguments) == want


@pytest.mark.parametrize(("name", "args", "want"), [
    ("tool_call", {"id": "read", "args": {"path": "a.py"}}, "exploration"),
    ("tool_call", {"id": "openclaw:core:exec", "args": {"command": "grep -rn main src"}}, "exploration"),
    ("tool_call", {"id": "exec", "args": {"command": "touch a"}}, "shell"),
    ("tool_call", {"id": "edit", "args": {"path": "a", "edits": []}}, "edit"),
    ("tool_call", {"id": "web_search", "args": {"query": "x"}}, "web"),
    ("tool_call", {"id": "tool_call", "args": {"id": "tool_call"}}, "other"),
    ("tool_call", {"id": "memory_search", "args": {"query": "x"}}, "other"),
    ("tool_search", {"query": "read file"}, "other"),
    ("ls", {"path": "."}, "exploration"),
    ("dir_list", {"path": "/srv"}, "exploration"),
])
def test_openclaw_tool_search_tools(name: str, args: dict, want: str):
    assert explain_tool(TOOLS, name, args).category == want


def test_unknown_shapes_are_counted_and_excluded_messages_are_not_sent(tmp_path: Path):
    entries = _session(tmp_path)
    last = entries[-1]["id"]
    entries[-1:-1] = [
        {"type": "label", "id": "x1", "parentId": None, "targetId": "e002", "label": "start"},
        {"type": "hologram", "id": "x2", "parentId": None},
        {"type": "message", "id": "x3", "parentId": None, "message": {"role": "oracle", "content": "?"}},
        {"type": "message", "id": "x4", "parentId": None,
         "message": {"role": "custom", "customType": "tool_search", "excludeFromContext": True, "content": "z" * 4000}},
        {"type": "message", "id": "x5", "parentId": None,
         "message": {"role": "bashExecution", "command": "cat /w/README.md", "output": "readme text " * 50}},
        {"type": "message", "id": "x6", "parentId": None,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "no usage"}]}},
    ]
    database, _ = openclaw_database(tmp_path / "state", {entries[0]["id"]: ("agent:main:main", entries)},
                                    squeeze=False)
    row, problems = _one(database)
    assert problems == {openclaw.UNKNOWN_ENTRY: 1, openclaw.UNKNOWN_ROLE: 1, openclaw.NO_USAGE: 1}
    assert row["api_calls"] == 3 and entries[-1]["id"] == last
    baseline, _ = openclaw_database(tmp_path / "base", {entries[0]["id"]: ("agent:main:main", _session(tmp_path))},
                                    squeeze=False)
    plain, _ = _one(baseline)
    # the person's `cat` reached the model before the last call as exploration; the excluded 4,000 did not
    added = row["first_time_tokens"]["exploration"] - plain["first_time_tokens"]["exploration"]
    assert added == len(("cat /w/README.md\n" + "readme text " * 50).strip())
    assert row["first_time_tokens"]["injected"] == plain["first_time_tokens"]["injected"]


def test_unzstd_round_trip_and_damage():
    if not unzstd.available():
        pytest.skip("no zstd decoder on this machine")
    data = json.dumps({"role": "toolResult", "content": "x" * 5000}).encode()
    packed = compress(data)
    if packed is None:
        pytest.skip("no zstd compressor on this machine")
    assert unzstd.decompress(packed) == data and unzstd.decompress(packed, len(data)) == data
    assert unzstd.decompress(packed, len(data) + 1) is None  # the recorded size must match
    assert unzstd.decompress(packed[:-9]) is None and unzstd.decompress(b"") is None
    assert unzstd.decompress(b"\x00" * 40) is None and unzstd.decompress("text") is None  # type: ignore[arg-type]


def test_unzstd_without_any_decoder(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(unzstd, "_module", False)  # no compression.zstd (Python before 3.14)
    monkeypatch.setattr(unzstd, "_library", False)  # and no libzstd on this machine
    assert not unzstd.available() and unzstd.decompress(b"\x28\xb5\x2f\xfd" + b"\x00" * 20) is None
