"""Invented Qwen Code chats in the shape Qwen Code 0.24.4 writes them (seen driving the real CLI offline,
tests/agents/qwen/test_realhost.py): `projects/<cwd with "-">/chats/<session id>.jsonl` and a subagent's
`subagents/<session id>/agent-<type>-<call id>.jsonl`. Every text, id and number here is made up."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "7d1e0a52-3b4c-4d5e-8f60-112233445566"
CWD = "/home/dev/shop-app"
FOLDER = "-home-dev-shop-app"


class Chat:
    """One chat's records, each linked to the one before it as the CLI links them."""

    def __init__(self, session_id: str = SESSION, agent_id: str | None = None) -> None:
        self.session_id, self.agent_id = session_id, agent_id
        self.records: list[dict] = []
        self.second = 0

    def _record(self, kind: str, **fields: object) -> dict:
        self.second += 1
        record: dict = {"uuid": f"00000000-0000-4000-8000-{len(self.records):012d}",
                        "parentUuid": self.records[-1]["uuid"] if self.records else None,
                        "sessionId": self.session_id, "timestamp": f"2026-11-20T09:00:{self.second:02d}.000Z",
                        "type": kind, "cwd": CWD, "version": "0.24.4"}
        if self.agent_id:
            record.update(agentId=self.agent_id, agentName="general-purpose", isSidechain=True)
        record.update(fields)
        self.records.append(record)
        return record

    def user(self, text: str) -> Chat:
        self._record("user", provenance="real_user", message={"role": "user", "parts": [{"text": text}]})
        return self

    def reply(self, prompt: int, cached: int, output: int, text: str = "", calls: tuple = (),
              thoughts: int = 0, total: int | None = None) -> Chat:
        """One API response. In a subagent's chat (as 0.24.4 writes it) a response with tool calls is two
        records: the bill with no parts, then the tool calls without `usageMetadata`."""
        parts: list[dict] = [{"text": text}] if text else []
        called = [{"functionCall": {"id": call_id, "name": name, "args": args}} for call_id, name, args in calls]
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": output, "thoughtsTokenCount": thoughts,
                 "totalTokenCount": prompt + output if total is None else total, "cachedContentTokenCount": cached}
        if self.agent_id:
            self._record("assistant", message={"role": "model", "parts": parts}, usageMetadata=usage)
            if called:
                self._record("assistant", message={"role": "model", "parts": called})
            return self
        self._record("system", subtype="ui_telemetry", systemPayload={"uiEvent": {
            "event.name": "qwen-code.api_response", "input_token_count": prompt, "output_token_count": output,
            "cached_content_token_count": cached}})  # the copy the reader must not count again
        self._record("assistant", model="qwen3-coder-plus", message={"role": "model", "parts": parts + called},
                     usageMetadata=usage)
        return self

    def result(self, call_id: str, name: str, output: str, error: bool = False) -> Chat:
        response = {"error": output} if error else {"output": output}
        self._record("tool_result", message={"role": "user", "parts": [
            {"functionResponse": {"id": call_id, "name": name, "response": response}}]},
            toolCallResult={"callId": call_id, "status": "error" if error else "success"})
        return self

    def system(self, subtype: str, payload: dict) -> Chat:
        self._record("system", subtype=subtype, systemPayload=payload)
        return self

    def write(self, home: Path, extra_lines: tuple[str, ...] = ()) -> Path:
        if self.agent_id:
            path = home / "projects" / FOLDER / "subagents" / self.session_id / f"agent-{self.agent_id}.jsonl"
        else:
            path = home / "projects" / FOLDER / "chats" / f"{self.session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(record) + "\n" for record in self.records)
                        + "".join(line + "\n" for line in extra_lines))
        return path


READ = "def total(cart):\n    return sum(item.price for item in cart)\n" * 20
MATCHES = "Found 2 matches for pattern \"discount\":\nFile: cart.py\nL4: discount = 0\nL9: apply(discount)\n"


def session(home: Path) -> tuple[Path, dict]:
    """A session that reads, searches, lists with a shell command, edits and answers; and what it billed."""
    chat = (Chat().user("Why is the cart total wrong?")
            .reply(12000, 0, 30, calls=(("call_1", "read_file", {"file_path": f"{CWD}/cart.py"}),))
            .result("call_1", "read_file", READ)
            .reply(12600, 6000, 25, calls=(("call_2", "grep_search", {"pattern": "discount"}),))
            .result("call_2", "grep_search", MATCHES)
            .reply(12700, 12600, 20, calls=(("call_3", "run_shell_command", {"command": "ls -la tests"}),))
            .result("call_3", "run_shell_command", "Command: ls -la tests\nOutput: test_cart.py\nExit Code: 0")
            .reply(12800, 12700, 60, calls=(("call_4", "edit", {"file_path": f"{CWD}/cart.py",
                                                               "old_string": "= 0", "new_string": "= 0.0"}),))
            .result("call_4", "edit", "The file was updated.")
            .reply(12900, 12800, 40, text="The discount was an integer; fixed."))
    want = {"calls": 5, "prompt": 12000 + 12600 + 12700 + 12800 + 12900,
            "cache_read": 6000 + 12600 + 12700 + 12800, "output": 30 + 25 + 20 + 60 + 40}
    return chat.write(home), want
