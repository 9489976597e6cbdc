"""Kilo CLI's kilo.db, invented, in the shape the real Kilo CLI 7.7.7 wrote (tests/agents/kilo/test_realhost.py):
OpenCode's session/message/part tables with Kilo's session columns and its own tables beside them, step-finish
parts with `total` and `metrics`, tool parts with `status`, `metadata` and `time`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

KILO_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, workspace_id TEXT, parent_id TEXT, slug TEXT,
    directory TEXT, path TEXT, title TEXT, version TEXT, cost REAL, tokens_input INTEGER, tokens_output INTEGER,
    tokens_reasoning INTEGER, tokens_cache_read INTEGER, tokens_cache_write INTEGER, agent TEXT, model TEXT,
    time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,
    time_updated INTEGER, data TEXT);
CREATE TABLE kilo_board (id TEXT PRIMARY KEY, data TEXT);
CREATE TABLE session_context_epoch (id TEXT PRIMARY KEY, session_id TEXT);
CREATE TABLE credential (id TEXT PRIMARY KEY, secret TEXT);
"""
DEFAULT_TITLE = "New session - 2026-07-01T09:00:00.000Z"


def kilo_step(fresh: int, read: int, output: int, reason: str = "tool-calls") -> dict:
    """A step-finish part: `input` without the cache reads, as 7.7.7 stores it."""
    return {"reason": reason, "type": "step-finish", "time": {"start": 1782896401000, "end": 1782896402000,
                                                              "elapsed": 1000},
            "metrics": {"generation": 30.5, "source": "computed"}, "cost": 0,
            "tokens": {"total": fresh + read + output, "input": fresh, "output": output, "reasoning": 0,
                       "cache": {"write": 0, "read": read}}}


def kilo_tool(call_id: str, tool: str, arguments: dict, output: str) -> dict:
    return {"type": "tool", "tool": tool, "callID": call_id,
            "state": {"status": "completed", "input": arguments, "output": output, "title": tool,
                      "metadata": {"truncated": False}, "time": {"start": 1782896401200, "end": 1782896401300}}}


def _assistant(created: int) -> dict:
    return {"role": "assistant", "mode": "code", "agent": "code", "path": {"cwd": "/w/shop", "root": "/"},
            "cost": 0, "modelID": "glm-4.5", "providerID": "zai", "time": {"created": created}, "finish": "stop"}


def kilo_db(path: Path, title: str = "Tidy the checkout module", child: bool = False) -> tuple[Path, dict]:
    """A session reading, grepping through bash and editing over four steps; with `child`, a task subagent's
    child session of two steps. Returns the file and each session's calls, prompt billed and cache reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(KILO_SCHEMA)
    connection.execute("INSERT INTO credential VALUES ('c1', 'invented-not-a-secret')")
    connection.execute("INSERT INTO kilo_board VALUES ('b1', '{}')")
    sessions = [("ses_k001", None, title, 1782896400000, 1782896460000)]
    messages = [
        ("msg_k001", "ses_k001", {"role": "user", "time": {"created": 1782896400500}, "agent": "code",
                                  "model": {"providerID": "zai", "modelID": "glm-4.5"}},
         [{"type": "text", "text": "Tidy checkout.py"}]),
        ("msg_k002", "ses_k001", _assistant(1782896401000),
         [{"type": "step-start"},
          kilo_tool("call_1", "read", {"filePath": "checkout.py"}, "def pay():\n    ...\n" * 60),
          kilo_step(9000, 0, 10)]),
        ("msg_k003", "ses_k001", _assistant(1782896403000),
         [{"type": "step-start"}, kilo_tool("call_2", "bash", {"command": "grep -rn pay src", "description": "find"},
                                            "src/a.py:3: pay()\n" * 20), kilo_step(600, 9000, 12)]),
        ("msg_k004", "ses_k001", _assistant(1782896405000),
         [{"type": "step-start"}, kilo_tool("call_3", "edit", {"filePath": "checkout.py", "oldString": "...",
                                                              "newString": "return 1"}, "Edit applied successfully."),
          kilo_step(400, 9600, 20)]),
        ("msg_k005", "ses_k001", _assistant(1782896407000),
         [{"type": "step-start"}, {"type": "text", "text": "Done."}, kilo_step(100, 10000, 3, "stop")]),
    ]
    want = {"ses_k001": {"calls": 4, "prompt": 9000 + 9600 + 10000 + 10100, "cache_read": 28600}}
    if child:
        sessions.append(("ses_k002", "ses_k001", "Read the notes (@general subagent)", 1782896420000,
                         1782896430000))
        messages += [
            ("msg_k101", "ses_k002", {"role": "user", "time": {"created": 1782896420100}},
             [{"type": "text", "text": "Read notes.txt"}]),
            ("msg_k102", "ses_k002", _assistant(1782896421000),
             [{"type": "step-start"}, kilo_tool("call_9", "glob", {"pattern": "*.txt"}, "notes.txt"),
              kilo_step(3000, 0, 8)]),
            ("msg_k103", "ses_k002", _assistant(1782896422000),
             [{"type": "step-start"}, {"type": "text", "text": "One file."}, kilo_step(50, 3000, 4, "stop")]),
        ]
        want["ses_k002"] = {"calls": 2, "prompt": 6050, "cache_read": 3000}
    for sid, parent, named, created, updated in sessions:
        connection.execute("INSERT INTO session (id, parent_id, title, version, directory, time_created, time_updated)"
                           " VALUES (?, ?, ?, '7.7.7', '/w/shop', ?, ?)", (sid, parent, named, created, updated))
    for number, (mid, sid, data, parts) in enumerate(messages):
        connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, number, number, json.dumps(data)))
        for index, part in enumerate(parts):
            connection.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                               (f"prt_{mid[4:]}_{index:03d}", mid, sid, number, number, json.dumps(part)))
    connection.commit()
    connection.close()
    return path, want
