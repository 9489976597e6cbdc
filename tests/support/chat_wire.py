"""The Hermes, OpenCode, OpenClaw, Qwen Code, pi, Copilot CLI and Kilo CLI wire check's instrument: what one Chat
Completions request carried, counted with o200k_base, judged from the request alone (independently of xshare's
readers).

The fake server (tests/support/fake_openai.py, `wire=`) bills every request exactly this count, so a category's
share of the bill is known exactly. A request is its tools array (compact JSON), each message's text, each
tool call as `name arguments` (the arguments as sent) and each tool result. Categories, by each agent's
own tool names (tests/support/wire.py's read-only rule for shell commands; Qwen Code's run_shell_command too):
  exploration  Hermes's read_file, search_files; OpenCode's and Kilo CLI's read, grep, glob, list; OpenClaw's
               read, ls; pi's read, grep, find, ls; Qwen Code's read_file, grep_search, glob, list_directory;
               Copilot CLI's view, grep, glob; a shell command (Hermes's terminal, OpenCode's and Kilo's bash,
               OpenClaw's exec, pi's and Copilot CLI's bash) that only reads
  edit         edit, write, write_file, patch, apply_patch, create
  shell        every other shell command
  rest         everything else: system prompt, tools, prompts, replies, tool_search, task, ...
OpenClaw's `tool_call {id, args}` is judged as the tool it names (`id` may be a catalog id such as
`openclaw:core:read`), as OpenClaw runs it.
"""

from __future__ import annotations

import json

from wire import bash_category, content_text

from xshare.measure.tokens import Counter, choose

CATEGORIES = ("exploration", "edit", "shell", "rest")
TOOLS = {
    "hermes": {"read_file": "exploration", "search_files": "exploration", "patch": "edit", "write_file": "edit",
               "terminal": "command"},
    "opencode": {"read": "exploration", "grep": "exploration", "glob": "exploration", "list": "exploration",
                 "edit": "edit", "write": "edit", "patch": "edit", "apply_patch": "edit", "bash": "command"},
    "openclaw": {"read": "exploration", "ls": "exploration", "edit": "edit", "write": "edit",
                 "apply_patch": "edit", "exec": "command"},
    "copilot": {"view": "exploration", "grep": "exploration", "glob": "exploration", "edit": "edit",
                "create": "edit", "bash": "command"},
    "qwen": {"read_file": "exploration", "grep_search": "exploration", "glob": "exploration",
             "list_directory": "exploration", "edit": "edit", "write_file": "edit", "run_shell_command": "command"},
    "pi": {"read": "exploration", "grep": "exploration", "find": "exploration", "ls": "exploration",
           "edit": "edit", "write": "edit", "bash": "command"},
    "kilo": {"read": "exploration", "grep": "exploration", "glob": "exploration", "list": "exploration",
             "edit": "edit", "write": "edit", "bash": "command"},
}


def tool_category(agent: str, name: str, arguments: object) -> str:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        args = None
    args = args if isinstance(args, dict) else {}
    if agent == "openclaw" and name == "tool_call":
        target = next((args[key] for key in ("id", "toolId", "name") if isinstance(args.get(key), str)), "")
        inner = args.get("args") if isinstance(args.get("args"), dict) else {}
        return tool_category(agent, target.split(":")[-1], inner) if target.split(":")[-1] != "tool_call" else "rest"
    kind = TOOLS[agent].get(name, "rest")
    if kind == "command":
        command = args.get("command")
        return bash_category(command) if isinstance(command, str) else "shell"
    return kind


class ChatWire:
    """Counts one agent's requests (callable: the fake server's `wire`)."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
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
                add(categories.get(message.get("tool_call_id"), "rest"), content_text(message.get("content")))
                continue
            add("rest", content_text(message.get("content")))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                name, arguments = function.get("name") or "", function.get("arguments") or ""
                category = categories[call.get("id")] = tool_category(self.agent, name, arguments)
                add(category, f"{name} {arguments}".strip())
        return tokens
