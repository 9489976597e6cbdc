"""Invented pi sessions in the shape pi 1.6.0 writes (its header, a `system` message, assistant `usage` with
input outside the cache, tool results; its own `usage`, compaction `usage` and `context_edit` entries from
its docs/session-format.md). Every text, id and number here is made up."""

from __future__ import annotations

import json
from pathlib import Path

PI_ID = "01a2b3c4-d5e6-7f80-9a1b-2c3d4e5f6a7b"
SOURCE = "".join(f"def parse_{index}(line):\n    return [int(part) * {index} for part in line.split(',')]\n"
                 for index in range(12))


def _usage(fresh: int, read: int, write: int, output: int) -> dict:
    return {"input": fresh, "output": output, "cacheRead": read, "cacheWrite": write, "reasoning": 0,
            "totalTokens": fresh + read + write + output,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


class PiSession:
    """Entries appended one by one, each with an id and its parent; `calls` keeps what was billed."""

    def __init__(self, session_id: str = PI_ID, cwd: str = "/home/dev/app") -> None:
        self.session_id = session_id
        self.entries: list[dict | str] = [{"type": "session", "version": 3, "id": session_id,
                                           "timestamp": "2026-11-30T09:00:00.000Z", "cwd": cwd}]
        self.billed: list[tuple[int, int, int, int]] = []  # (prompt, cache read, cache write, output)

    def add(self, entry_type: str, **fields: object) -> str:
        number = len(self.entries)
        key = f"e{number:07x}"
        parent = self.entries[-1]["id"] if number > 1 and isinstance(self.entries[-1], dict) else None
        self.entries.append({"type": entry_type, "id": key, "parentId": parent,
                             "timestamp": f"2026-11-30T09:{number // 60:02d}:{number % 60:02d}.000Z", **fields})
        return key

    def message(self, role: str, **fields: object) -> str:
        return self.add("message", message={"role": role, "timestamp": 1796000000000, **fields})

    def assistant(self, parts: list[dict], fresh: int, read: int = 0, write: int = 0, output: int = 10) -> str:
        self.billed.append((fresh + read + write, read, write, output))
        return self.message("assistant", content=parts, api="openai-completions", provider="local",
                            model="pi-model-1", usage=_usage(fresh, read, write, output), stopReason="toolUse")

    def tool(self, call_id: str, name: str, arguments: dict, result: str, fresh: int, read: int = 0) -> str:
        self.assistant([{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}], fresh, read)
        return self.message("toolResult", toolCallId=call_id, toolName=name,
                            content=[{"type": "text", "text": result}], isError=False)

    def write(self, folder: Path) -> Path:
        """The file where pi keeps it: <folder>/--<cwd>--/<time>_<id>.jsonl."""
        path = folder / "--home-dev-app--" / f"2026-11-30T09-00-00-000Z_{self.session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in self.entries))
        return path


def pi_session(session_id: str = PI_ID) -> PiSession:
    """A turn as the real pi 1.6.0 records it: the system message, a read, a grep, a read-only bash, an edit,
    an answer; then a cache-warming usage entry."""
    session = PiSession(session_id)
    session.add("model_change", provider="local", modelId="pi-model-1")
    session.add("thinking_level_change", thinkingLevel="off")
    session.message("system", content="", sections={"preamble": "You are a coding assistant.",
                                                    "tools": "<tools>\n- read: Read file contents\n</tools>"})
    session.message("user", content=[{"type": "text", "text": "Look around, then make parse strict."}])
    session.tool("call_1", "read", {"path": "parse.py"}, SOURCE, fresh=300)
    session.tool("call_2", "grep", {"pattern": "parse", "path": "."}, "parse.py:1:def parse(line):", 450, 450)
    session.tool("call_3", "bash", {"command": "wc -l parse.py"}, "24 parse.py\n", fresh=500, read=700)
    session.tool("call_4", "edit", {"path": "parse.py", "edits": [{"oldText": "int(part)", "newText": "int(p)"}]},
                 "Successfully replaced 1 block(s) in parse.py.", fresh=300, read=1100)
    session.assistant([{"type": "text", "text": "Made parse strict."}], fresh=60, read=1400, write=40)
    session.add("usage", kind="cache_warm", provider="local", model="pi-model-1", usage=_usage(0, 1500, 0, 0))
    session.billed.append((1500, 1500, 0, 0))
    return session
