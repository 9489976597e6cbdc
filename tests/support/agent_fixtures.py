"""Invented sessions in the shapes Codex CLI, Gemini CLI, OpenCode and OpenClaw write (docs: agents.md).
Every text, id and number here is made up; none comes from a real session."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path


class Counted:
    """A reader's token counter from a plain function (agents/common/counting.py TokenCounter): its rows say
    `name`; nothing to remember."""

    def __init__(self, count: Callable[[str], int], name: str) -> None:
        self.count, self.name, self.fallbacks = count, name, 0

    def flush(self) -> None:
        pass


def _lines(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


# --- Codex CLI --------------------------------------------------------------------------------------


def codex_usage(prompt: int, cached: int, output: int) -> dict:
    return {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": output,
            "reasoning_output_tokens": 0, "total_tokens": prompt + output}


def codex_line(kind: str, payload: dict, second: int) -> dict:
    return {"timestamp": f"2026-03-02T10:{second // 60:02d}:{second % 60:02d}.000Z", "type": kind,
            "payload": payload}


def codex_token_count(total: dict | None, last: dict | None, second: int) -> dict:
    info = None if total is None else {"total_token_usage": total, "last_token_usage": last,
                                       "model_context_window": 272000}
    return codex_line("event_msg", {"type": "token_count", "info": info, "rate_limits": {}}, second)


def codex_session(home: Path, session_id: str = "0190aaaa-1111-7000-8000-000000000001", source: object = "cli",
                  tool: str = "exec_command", compact: bool = False) -> tuple[Path, dict]:
    """A wrapped rollout (0.36+ shape): two reads, a patch, repeated and reset token_count events.
    Returns the path and what an independent count expects."""
    shell = {"exec_command": {"cmd": "sed -n '1,40p' src/app.py", "workdir": "/w"},
             "shell_command": {"command": "nl -ba src/app.py | sed -n '1,40p'", "workdir": "/w"},
             "shell": {"command": ["bash", "-lc", "rg -n 'def main' src"], "workdir": "/w"}}[tool]
    u1, u2, u3 = codex_usage(5000, 0, 120), codex_usage(7400, 4800, 90), codex_usage(9100, 7000, 60)
    t1 = u1
    t2 = {key: t1[key] + u2[key] for key in t1}
    rows = [
        codex_line("session_meta", {"id": session_id, "timestamp": "2026-03-02T10:00:00.000Z", "cwd": "/w",
                                    "originator": "codex_cli_rs", "cli_version": "0.63.0", "source": source,
                                    "instructions": "Keep answers short."}, 0),
        codex_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>cwd /w</environment_context>"}]}, 1),
        codex_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Why does main() exit early?"}]}, 2),
        codex_line("turn_context", {"cwd": "/w", "model": "gpt-5-codex", "approval_policy": "on-request"}, 3),
        codex_token_count(None, None, 3),
        codex_line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                                                       "text": "Look at main first."}]}, 4),
        codex_line("response_item", {"type": "function_call", "name": tool, "arguments": json.dumps(shell),
                                     "call_id": "call_1"}, 5),
        codex_token_count(t1, u1, 6),
        codex_line("response_item", {"type": "function_call_output", "call_id": "call_1", "output": json.dumps(
            {"output": "def main():\n    return 0\n" * 40, "metadata": {"exit_code": 0}})}, 7),
        codex_token_count(t1, u1, 8),  # repeated: no new request
        codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_2",
                                     "input": "*** Begin Patch\n*** Update File: src/app.py\n-    return 0\n+"
                                              "    return run()\n*** End Patch"}, 9),
        codex_token_count(t2, u2, 10),
        codex_line("response_item", {"type": "custom_tool_call_output", "call_id": "call_2",
                                     "output": "Success. Updated src/app.py"}, 11),
    ]
    if compact:
        rows.append(codex_line("compacted", {"message": "Summary: main() now calls run()."}, 12))
    # a reset: the running total drops (resume), the call still counts with its own usage
    rows += [codex_token_count(u3, u3, 13),
             codex_line("response_item", {"type": "message", "role": "assistant", "content": [
                 {"type": "output_text", "text": "Fixed: main() returned before run()."}]}, 14)]
    path = _lines(home / "sessions/2026/03/02" / f"rollout-2026-03-02T10-00-00-{session_id}.jsonl", rows)
    return path, {"calls": 3, "prompt": 5000 + 7400 + 9100, "cache_read": 4800 + 7000,
                  "input": 5000 + 2600 + 2100}


def codex_legacy(home: Path) -> Path:
    """The August 2025 shape: a bare header, then Responses items, no usage anywhere."""
    return _lines(home / "sessions/2025/08/20/rollout-2025-08-20T09-00-00-5d3c2b1a-0000-4000-8000-00000000abcd.jsonl", [
        {"id": "5d3c2b1a-0000-4000-8000-00000000abcd", "timestamp": "2025-08-20T09:00:00.000Z",
         "instructions": "", "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]},
        {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["ls", "-la"]}),
         "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"output": "a.py\nb.py"})},
    ])


# --- Gemini CLI -------------------------------------------------------------------------------------


def gemini_tokens(prompt: int, cached: int, output: int, thoughts: int = 0) -> dict:
    return {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts, "tool": 0,
            "total": prompt + output + thoughts}


def gemini_messages() -> tuple[list[dict], dict]:
    """A chat: a question, a read and a grep, a replace, an answer, a notice and a cancelled request."""
    def call(call_id: str, name: str, args: dict, output: str) -> dict:
        return {"id": call_id, "name": name, "args": args, "status": "success",
                "timestamp": "2026-02-10T09:00:05.000Z",
                "result": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]}

    messages = [
        {"id": "m1", "timestamp": "2026-02-10T09:00:00.000Z", "type": "user", "content": "Where is the retry loop?"},
        {"id": "m2", "timestamp": "2026-02-10T09:00:05.000Z", "type": "gemini", "content": "Let me look.",
         "model": "gemini-2.5-pro", "thoughts": [{"subject": "Plan", "description": "search first"}],
         "tokens": gemini_tokens(6000, 0, 40, 200),
         "toolCalls": [call("c1", "read_file", {"file_path": "src/net.py"}, "def fetch():\n    pass\n" * 60),
                       call("c2", "grep_search", {"pattern": "retry"}, "src/net.py:12: retry = 3")]},
        {"id": "m3", "timestamp": "2026-02-10T09:00:09.000Z", "type": "gemini", "content": "",
         "model": "gemini-2.5-pro", "tokens": gemini_tokens(7500, 5900, 60),
         "toolCalls": [call("c3", "replace", {"file_path": "src/net.py", "old_string": "retry = 3",
                                                 "new_string": "retry = 5"}, "Replaced 1 occurrence.")]},
        {"id": "m4", "timestamp": "2026-02-10T09:00:12.000Z", "type": "info", "content": "Request cancelled."},
        {"id": "m5", "timestamp": "2026-02-10T09:00:13.000Z", "type": "gemini", "content": "Done: retries are 5.",
         "model": "gemini-2.5-flash", "tokens": gemini_tokens(7700, 7400, 20)},
        {"id": "m6", "timestamp": "2026-02-10T09:00:20.000Z", "type": "gemini", "content": "", "tokens": None},
    ]
    return messages, {"calls": 3, "prompt": 6000 + 7500 + 7700, "cache_read": 5900 + 7400,
                      "output": 240 + 60 + 20}


def gemini_json(home: Path, project: str = "5f" * 32, session_id: str = "3c2a1b0d-aaaa-4bbb-8ccc-000000000001",
                kind: str | None = None) -> tuple[Path, dict]:
    messages, want = gemini_messages()
    document = {"sessionId": session_id, "projectHash": project, "startTime": "2026-02-10T08:59:58.000Z",
                "lastUpdated": "2026-02-10T09:00:20.000Z", "messages": messages}
    if kind:
        document["kind"] = kind
    path = home / "tmp" / project / "chats" / f"session-2026-02-10T08-59-{session_id[:8]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path, want


def gemini_jsonl(home: Path, project: str = "my-app") -> tuple[Path, dict]:
    """The 2026 shape: each message appended again as it fills in (the tool results arrive later)."""
    messages, want = gemini_messages()
    rows: list = [{"sessionId": "7e6d5c4b-bbbb-4ccc-8ddd-000000000002", "projectHash": "ab" * 32,
                   "startTime": "2026-05-01T07:00:00.000Z", "lastUpdated": "2026-05-01T07:00:00.000Z",
                   "kind": "main"}]
    for message in messages:
        if message.get("toolCalls"):
            rows.append({**message, "toolCalls": [{k: v for k, v in c.items() if k != "result"}
                                                  for c in message["toolCalls"]]})
        rows.append(message)
        rows.append({"$set": {"lastUpdated": message["timestamp"]}})
    path = home / "tmp" / project / "chats" / "session-2026-05-01T07-00-7e6d5c4b.jsonl"
    return _lines(path, rows), want


# --- OpenCode -------------------------------------------------------------------------------------------

OPENCODE_SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT,
    version TEXT, time_created INTEGER, time_updated INTEGER, time_compacting INTEGER, cost REAL,
    tokens_input INTEGER, tokens_output INTEGER, tokens_cache_read INTEGER, tokens_cache_write INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,
    time_updated INTEGER, data TEXT);
CREATE TABLE credential (id TEXT PRIMARY KEY, secret TEXT);
"""


def opencode_step(prompt: int, read: int, write: int, output: int) -> dict:
    return {"type": "step-finish", "reason": "tool-calls", "cost": 0.001,
            "tokens": {"total": prompt + read + write + output, "input": prompt, "output": output, "reasoning": 0,
                       "cache": {"read": read, "write": write}}}


def opencode_tool(call_id: str, tool: str, arguments: dict, output: str) -> dict:
    return {"type": "tool", "tool": tool, "callID": call_id,
            "state": {"status": "completed", "input": arguments, "output": output, "title": tool,
                      "time": {"start": 1781000001000, "end": 1781000002000}}}


def opencode_db(path: Path, compaction: bool = False) -> tuple[Path, dict]:
    """A session with a two-step assistant message (a read, then a bash run), a child session from the
    task tool, and optionally a compaction with its summary message."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(OPENCODE_SCHEMA)
    connection.execute("INSERT INTO credential VALUES ('c1', 'invented-not-a-secret')")
    sessions = [("ses_b001", None, 1781000000000, 1781000090000), ("ses_b002", "ses_b001", 1781000030000,
                                                                     1781000040000)]
    for sid, parent, created, updated in sessions:
        connection.execute("INSERT INTO session (id, parent_id, version, time_created, time_updated) VALUES "
                           "(?, ?, '1.17.3', ?, ?)", (sid, parent, created, updated))
    messages = [
        ("msg_a001", "ses_b001", {"role": "user", "time": {"created": 1781000000500}},
         [{"type": "text", "text": "Why is the build slow?"}]),
        ("msg_a002", "ses_b001", {"role": "assistant", "modelID": "kimi-k2", "providerID": "moonshot",
                                  "time": {"created": 1781000001000},
                                  "tokens": {"input": 1, "output": 1, "reasoning": 0,
                                             "cache": {"read": 0, "write": 0}}},  # the last step's: not used
         [{"type": "step-start"}, {"type": "reasoning", "text": "Read the config."},
          opencode_tool("t1", "read", {"filePath": "/w/build.js"}, "module.exports = {}\n" * 50),
          opencode_step(4000, 0, 3000, 50), {"type": "step-start"},
          opencode_tool("t2", "bash", {"command": "npm run build", "description": "build"}, "built in 9s"),
          opencode_step(200, 8200, 0, 40), {"type": "step-start"}, {"type": "text", "text": "It minifies twice."},
          opencode_step(300, 8400, 0, 30)]),
        ("msg_c001", "ses_b002", {"role": "user", "time": {"created": 1781000030000}},
         [{"type": "text", "text": "Find every webpack plugin."}]),
        ("msg_c002", "ses_b002", {"role": "assistant", "modelID": "kimi-k2", "time": {"created": 1781000031000}},
         [{"type": "step-start"}, opencode_tool("t3", "grep", {"pattern": "Plugin"}, "build.js:3"),
          opencode_step(2500, 0, 0, 20), {"type": "text", "text": "One plugin."}, opencode_step(100, 2500, 0, 5)]),
    ]
    want = {"ses_b001": {"calls": 3, "prompt": 7000 + 8400 + 8700, "cache_write": 3000, "cache_read": 16600},
            "ses_b002": {"calls": 2, "prompt": 5100, "cache_write": 0, "cache_read": 2500}}
    if compaction:
        messages += [
            ("msg_a003", "ses_b001", {"role": "user", "time": {"created": 1781000050000}},
             [{"type": "compaction", "auto": True}]),
            ("msg_a004", "ses_b001", {"role": "assistant", "summary": True, "modelID": "kimi-k2",
                                      "time": {"created": 1781000051000}},
             [{"type": "step-start"}, {"type": "text", "text": "Summary: build minifies twice."},
              opencode_step(500, 8800, 0, 60)]),
            ("msg_a005", "ses_b001", {"role": "user", "time": {"created": 1781000060000}},
             [{"type": "text", "text": "Fix it."}]),
            ("msg_a006", "ses_b001", {"role": "assistant", "modelID": "kimi-k2", "time": {"created": 1781000061000}},
             [{"type": "step-start"}, {"type": "text", "text": "Done."}, opencode_step(900, 6500, 0, 5)]),
        ]
        want["ses_b001"] = {"calls": 5, "prompt": 7000 + 8400 + 8700 + 9300 + 7400, "cache_write": 3000,
                            "cache_read": 16600 + 8800 + 6500}
    for number, (mid, sid, data, parts) in enumerate(messages):
        connection.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, number, number, json.dumps(data)))
        for index, part in enumerate(parts):
            connection.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                               (f"prt_{mid[4:]}_{index:03d}", mid, sid, number, number, json.dumps(part)))
    connection.commit()
    connection.close()
    return path, want


# --- OpenClaw -------------------------------------------------------------------------------------------


def openclaw_usage(prompt: int, read: int, write: int, output: int) -> dict:
    return {"input": prompt, "output": output, "cacheRead": read, "cacheWrite": write,
            "totalTokens": prompt + output + read + write, "cost": {"total": 0.001}}


def openclaw_session(home: Path, session_id: str = "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d", suffix: str = "",
                     compaction: bool = False) -> tuple[Path, dict]:
    """A chat: a read and a fetch, an errored request billed nothing, a write, an answer."""
    def entry(number: int, kind: str, **fields) -> dict:
        return {"type": kind, "id": f"e{number:03d}", "parentId": f"e{number - 1:03d}" if number else None,
                "timestamp": f"2026-04-01T12:00:{number:02d}.000Z", **fields}

    def assistant(content: list, usage: dict, stop: str = "toolUse") -> dict:
        return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "example",
                "model": "claw-model-1", "usage": usage, "stopReason": stop, "timestamp": 1775044800000}

    def result(call_id: str, tool: str, text: str) -> dict:
        return {"role": "toolResult", "toolCallId": call_id, "toolName": tool,
                "content": [{"type": "text", "text": text}], "isError": False}

    rows = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": "2026-04-01T12:00:00.000Z", "cwd": "/w"},
        entry(1, "model_change", provider="example", modelId="claw-model-1"),
        entry(2, "message", message={"role": "user", "content": [{"type": "text", "text": "What does cli.js do?"}]}),
        entry(3, "message", message=assistant([{"type": "thinking", "thinking": "Read it."},
                                               {"type": "toolCall", "id": "k1", "name": "read",
                                                "arguments": {"path": "/w/cli.js"}},
                                               {"type": "toolCall", "id": "k2", "name": "exec",
                                                "arguments": {"command": "grep -n main /w/cli.js"}}],
                                              openclaw_usage(300, 0, 5000, 80))),
        entry(4, "message", message=result("k1", "read", "#!/usr/bin/env node\n" * 80)),
        entry(5, "message", message=result("k2", "exec", "12: main()")),
        entry(6, "message", message={**assistant([], openclaw_usage(0, 0, 0, 0), "error"),
                                     "errorMessage": "overloaded"}),
        entry(7, "message", message=assistant([{"type": "toolCall", "id": "k3", "name": "write",
                                                "arguments": {"path": "/w/NOTES.md", "content": "cli.js parses"}}],
                                              openclaw_usage(1900, 5000, 0, 60))),
        entry(8, "message", message=result("k3", "write", "wrote 13 bytes")),
    ]
    if compaction:
        rows.append(entry(9, "compaction", summary="Read cli.js; wrote notes.", firstKeptEntryId="e007",
                          tokensBefore=7000))
    rows.append(entry(10, "message", message=assistant([{"type": "text", "text": "It parses flags."}],
                                                       openclaw_usage(200, 6900, 0, 20), "stop")))
    path = _lines(home / "agents" / "main" / "sessions" / f"{session_id}.jsonl{suffix}", rows)
    return path, {"calls": 3, "prompt": 5300 + 6900 + 7100, "cache_read": 11900, "cache_write": 5000}
