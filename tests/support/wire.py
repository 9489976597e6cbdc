"""The wire check's instrument: what one Messages API request carried, counted with o200k_base.

The fake server (tests/support/fake_anthropic.py) counts every request it receives with xshare's own tokenizer
(so both sides count alike) and bills exactly that count. A request is a list of blocks: the tools array
(as JSON), each system text, and each message content block (text; a tool_use's name and input; a
tool_result's text; an image; a PDF). Thinking is not counted. Images and PDFs are billed by Anthropic's
published rules, decoded here on their own (so xshare, which applies the same rules, agrees by definition,
not by sharing code): an image is scaled down until its long edge is at most 1568 px and it costs at most
about 1,600 tokens, then costs width x height / 750 tokens; a PDF page costs 2,250 tokens (the middle of
the published 1,500-3,000). Each block gets a category, judged from the request alone, independently of
xshare's reader (an image or a PDF in a tool result takes the tool's category):
  exploration  Read/Grep/Glob/LS calls and their results; Bash calls whose command only reads (READ_ONLY)
  edit         Edit/Write/MultiEdit/NotebookEdit calls and their results
  shell        every other Bash call and its result
  reread       the file contents Claude Code re-sends itself in Read form (after a compaction)
  rest         everything else: system prompt, tools, prompts, replies, reminders, other tools (MCP, Agent)
The bill: cache read = the blocks this request shares, from the start, with the lane's previous request;
a few fresh input tokens; cache write = the rest. So the bill is the count, and every category's share of
the bill is known exactly.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from dataclasses import dataclass, field

from xshare.measure.tokens import Counter, choose

CATEGORIES = ("exploration", "edit", "shell", "reread", "rest")
EXPLORATION_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
READ_ONLY = frozenset({"cat", "head", "tail", "ls", "grep", "rg", "find", "wc", "pwd", "stat", "file", "tree", "cd"})
REREAD_OPENINGS = ("<system-reminder>\nCalled the Read tool with the following input:",
                   "<system-reminder>\nResult of calling the Read tool:")
FRESH_INPUT = 3  # tokens billed as plain input on every request
_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"
_STAGES = re.compile(r"\|\||&&|[|;\n]")
PDF_PAGE_TOKENS = 2250


def picture_tokens(width: int, height: int) -> int:
    """The published rule: scale down to a long edge of 1568 px and about 1,600 tokens, then w x h / 750."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1600 * 750 / (width * height)))
    return math.ceil(max(1, int(width * scale)) * max(1, int(height * scale)) / 750)


def picture_size(raw: bytes) -> tuple[int, int]:
    """Width and height of a PNG, GIF or JPEG (what Claude Code sends), read the plain way."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", raw[16:24])
    if raw[:3] == b"GIF":
        return struct.unpack("<HH", raw[6:10])
    at = 2  # JPEG: walk the segments to the frame header
    while raw[at] == 0xFF:
        marker, length = raw[at + 1], struct.unpack(">H", raw[at + 2:at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[at + 5:at + 9])
            return width, height
        at += 2 + length
    raise ValueError("not a PNG, GIF or JPEG")


def media_cost(block: dict) -> int:
    source = block.get("source") or {}
    raw = base64.b64decode(source.get("data") or "")
    if block.get("type") == "document":
        return PDF_PAGE_TOKENS * max(1, len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", raw)))
    return picture_tokens(*picture_size(raw))


def bash_category(command: str) -> str:
    """The wire's own read-only rule: every stage starts with a reading command (`sed` only with -n),
    and nothing is redirected into a file."""
    if ">" in command or "$(" in command or "`" in command:
        return "shell"
    for stage in _STAGES.split(command):
        words = stage.split()
        if not words:
            continue
        if words[0] == "sed" and "-n" in words[1:]:
            continue
        if words[0] not in READ_ONLY:
            return "shell"
    return "exploration"


def content_text(content: object) -> str:
    """A Chat Completions or Responses message's text: a string, or its parts' texts, a line each."""
    if isinstance(content, str):
        return content
    parts = [part.get("text") or "" for part in content if isinstance(part, dict)] if isinstance(content, list) else []
    return "\n".join(part for part in parts if part)


def tool_category(name: str, tool_input: object) -> str:
    if name in EXPLORATION_TOOLS:
        return "exploration"
    if name in EDIT_TOOLS:
        return "edit"
    if name == "Bash" and isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        return bash_category(tool_input["command"])
    return "rest"


@dataclass(frozen=True)
class Block:
    """One counted piece of a request; `text` is what was counted (it identifies the block for caching)."""

    category: str
    text: str
    tokens: int


@dataclass
class WireCount:
    """One request on the wire: its blocks, their tokens by category, and the Bash commands it carried."""

    blocks: list[Block]
    tokens: dict[str, int]
    commands: list[tuple[str, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.tokens.values())


def _split_reminders(text: str) -> tuple[str, str]:
    """A tool result's own text, and the <system-reminder> blocks Claude Code appended to it."""
    cut = len(text)
    while text[:cut].rstrip().endswith(_CLOSE):
        start = text[:cut].rfind(_OPEN)
        if start == -1:
            break
        cut = start
    return text[:cut], text[cut:]


def _result_text(content: object) -> str:
    """A tool result's text as the model reads it (images and documents are counted apart)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(block.get("text") or "")
        elif isinstance(block, dict) and block.get("type") == "tool_reference":
            parts.append(block.get("tool_name") or "")
    return "\n".join(parts)


class Wire:
    """Counts requests; one instance per server (the tokenizer is loaded once)."""

    def __init__(self) -> None:
        self.counter = Counter(choose())

    def _block(self, category: str, text: str) -> Block | None:
        return Block(category, text, self.counter.count(text)) if text else None

    @staticmethod
    def _media(category: str, content: object) -> list[Block | None]:
        """The images and PDFs of a message or a tool result; a block's data identifies it for caching."""
        return [Block(category, json.dumps(block["source"], sort_keys=True), media_cost(block))
                for block in content if isinstance(block, dict) and block.get("type") in ("image", "document")
                ] if isinstance(content, list) else []

    def count(self, body: dict) -> WireCount:
        pieces: list[Block | None] = []
        commands: list[tuple[str, str]] = []
        if body.get("tools"):
            pieces.append(self._block("rest", json.dumps(body["tools"], separators=(",", ":"), ensure_ascii=False)))
        system = body.get("system")
        if isinstance(system, str):
            pieces.append(self._block("rest", system))
        for block in system if isinstance(system, list) else ():
            if isinstance(block, dict):
                pieces.append(self._block("rest", block.get("text") or ""))
        tool_categories: dict[str, str] = {}
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                pieces.append(self._text(content))
                continue
            for block in content if isinstance(content, list) else ():
                pieces += self._content_block(block, tool_categories, commands)
            pieces += self._media("rest", content)
        blocks = [piece for piece in pieces if piece is not None]
        tokens = dict.fromkeys(CATEGORIES, 0)
        for block in blocks:
            tokens[block.category] += block.tokens
        return WireCount(blocks, tokens, commands)

    def _text(self, text: str) -> Block | None:
        category = "reread" if text.startswith(REREAD_OPENINGS) else "rest"
        return self._block(category, text)

    def _content_block(self, block: object, tool_categories: dict, commands: list) -> list[Block | None]:
        if not isinstance(block, dict):
            return []
        kind = block.get("type")
        if kind == "text":
            return [self._text(block.get("text") or "")]
        if kind == "tool_use":
            name, tool_input = block.get("name") or "", block.get("input")
            category = tool_category(name, tool_input)
            tool_categories[block.get("id")] = category
            if name == "Bash" and isinstance(tool_input, dict):
                commands.append((str(tool_input.get("command")), category))
            arguments = json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)
            return [self._block(category, f"{name} {arguments}")]
        if kind == "tool_result":
            own, reminders = _split_reminders(_result_text(block.get("content")))
            category = tool_categories.get(block.get("tool_use_id"), "rest")
            media = self._media(category, block.get("content"))
            return [self._block(category, own), self._block("rest", reminders), *media]
        return []  # thinking, redacted_thinking: not counted; image, document: see _media


def common_prefix_tokens(blocks: list[Block], previous: list[Block]) -> int:
    """Tokens of the leading whole blocks this request shares with the previous one of its lane."""
    shared = 0
    for mine, theirs in zip(blocks, previous, strict=False):
        if mine.text != theirs.text:
            break
        shared += mine.tokens
    return shared


def usage_of(counted: WireCount, previous: list[Block]) -> dict:
    """The bill: exactly the tokens counted, split into cache read, fresh input and cache write."""
    total = counted.total
    read = common_prefix_tokens(counted.blocks, previous)
    fresh = min(FRESH_INPUT, total - read)
    return {"input_tokens": fresh, "cache_creation_input_tokens": total - read - fresh,
            "cache_read_input_tokens": read, "output_tokens": 7}


def wire_shares(requests: list) -> dict[str, float]:
    """Each category's share of the bill over these requests (the wire's context is its bill)."""
    billed = sum(request.prompt_tokens for request in requests)
    return {category: sum(request.wire[category] for request in requests) / billed for category in CATEGORIES}
