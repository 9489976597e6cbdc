"""What the model saw of a transcript row's content, as text: tool results, tool arguments, payloads."""

from __future__ import annotations

from xshare.store import dumps

OPEN_REMINDER, _CLOSE = "<system-reminder>", "</system-reminder>"
_NOT_TYPED = ("<command-name>", "<local-command-stdout>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
              "<task-notification>", OPEN_REMINDER, "[Request interrupted by user")


def texts(value: object) -> list[str]:
    """Every string inside a JSON value (attachment payloads come in many shapes), in order; without
    recursion, as a line may nest a thousand levels deep."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
    return found


def json_text(value: object) -> str:
    """A tool call's arguments as the model saw them (JSON); nested too deep to write: their strings."""
    try:
        return dumps(value).decode()
    except (TypeError, ValueError, RecursionError):
        return " ".join(texts(value))


def trailing_reminders(text: str) -> int:
    """Where the <system-reminder> blocks appended to a tool result begin (len(text) if none)."""
    cut = len(text)
    while True:
        body = text[:cut].rstrip()
        if not body.endswith(_CLOSE):
            return cut
        start = body.rfind(OPEN_REMINDER)
        if start == -1:
            return cut
        cut = start


def result_text(content: object) -> str:
    """What the model saw of a tool result: its text blocks (images are not text)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif block.get("type") == "tool_reference" and isinstance(block.get("tool_name"), str):
                parts.append(block["tool_name"])
    return "\n".join(parts)


def is_prompt(content: object) -> bool:
    """A person typed this (not a tool result, a command's output or an interruption notice)."""
    if isinstance(content, list):
        if any(isinstance(block, dict) and block.get("type") == "tool_result" for block in content):
            return False
        content = next((block.get("text") for block in content if isinstance(block, dict)
                        and block.get("type") == "text"), "")
    if not isinstance(content, str):
        return False
    text = content.lstrip()
    return bool(text) and not text.startswith(_NOT_TYPED)
