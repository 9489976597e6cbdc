"""Invented sessions in the shapes Codex CLI, Gemini CLI, OpenCode and OpenClaw write (docs: agents.md).
Every text, id and number here is made up; none comes from a real session."""

from __future__ import annotations

import json
from pathlib import Path


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
