"""The Hermes wire check's instrument: what one chat-completions request carried, counted with o200k_base.

The fake server (tests/fake_openai.py, `wire=`) counts every request Hermes sends with xshare's own tokenizer
and bills exactly that count, so a category's share of the bill is known exactly. A request is a list of
pieces: the tools array (as compact JSON), each message's text (a string, or a list's text parts), each
tool call as `name arguments` (its arguments as sent) and each tool result. Categories are judged from the
request alone, independently of xshare's reader (tests/wire.py's read-only rule for shell commands):
  exploration  read_file and search_files calls and results; terminal calls whose command only reads
  edit         patch and write_file calls and results
  shell        every other terminal call and its result
  rest         everything else: the system prompt, tools, prompts, replies, other tools
"""

from __future__ import annotations

import json

from wire import bash_category

from xshare.measure.tokens import Counter, choose

CATEGORIES = ("exploration", "edit", "shell", "rest")
READ_TOOLS = frozenset({"read_file", "search_files"})
EDIT_TOOLS = frozenset({"patch", "write_file"})


def tool_category(name: str, arguments: str) -> str:
    if name in READ_TOOLS:
        return "exploration"
    if name in EDIT_TOOLS:
        return "edit"
    if name == "terminal":
        try:
            command = json.loads(arguments).get("command")
        except (ValueError, AttributeError):
            return "shell"
        return bash_category(command) if isinstance(command, str) else "shell"
    return "rest"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = [part.get("text") or "" for part in content if isinstance(part, dict)] if isinstance(content, list) else []
    return "\n".join(part for part in parts if part)


class HermesWire:
    """Counts requests (callable: the fake server's `wire`); one instance per server."""

    def __init__(self) -> None:
        self.counter = Counter(choose())

    def __call__(self, body: dict) -> dict[str, int]:
        tokens = dict.fromkeys(CATEGORIES, 0)

        def add(category: str, text: str) -> None:
            if text:
                tokens[category] += self.counter.count(text)

        if body.get("tools"):
            add("rest", json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False))
        categories: dict[str, str] = {}
        for message in body.get("messages") or []:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "tool":
                add(categories.get(message.get("tool_call_id"), "rest"), _text(message.get("content")))
                continue
            add("rest", _text(message.get("content")))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name, arguments = function.get("name") or "", function.get("arguments") or ""
                category = categories[call.get("id")] = tool_category(name, arguments)
                add(category, f"{name} {arguments}".strip())
        return tokens
