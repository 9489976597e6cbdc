"""What every xshare page is made of: the template's style and script with the Content-Security-Policy
that admits only them, the page head, the section names, and the escaping and number formats of its cells.

Nothing on a page loads from anywhere: the Content-Security-Policy forbids every fetch (default-src
'none') and allows exactly the page's own <style> and <script> by hash, so even a tag that escaping
missed could not run or load. Escaping is the first line anyway: every piece of transcript text goes
through `esc`, which also makes invisible or reordering characters (NUL, bidi overrides, lone
surrogates) visible as [U+XXXX], so a label cannot disguise itself.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib import resources

from xshare.agents.table import AGENTS
from xshare.printing import pct
from xshare.report.render import parse_time

MAX_COLUMNS = 300  # more calls than this are drawn as buckets (the mean of each), keeping pages small
MAX_REBUILD_ROWS = 200
MAX_TEXT = 160  # characters of a command or path shown in a cell; the title holds up to MAX_TITLE
MAX_TITLE = 2000
# stacking order, bottom up: the system prompt sits under everything, exploration right on top of it
STACK = ("overhead", "inherited", "exploration", "reread", "edit", "shell", "web", "other", "conversation",
         "injected", "neuralmind")
LABELS = {"overhead": "System overhead", "inherited": "Inherited context", "exploration": "Exploration",
          "reread": "Re-sent reads", "edit": "Edits", "shell": "Other shell", "web": "Web", "other": "Other tools",
          "conversation": "Conversation", "injected": "Injected context", "neuralmind": "NeuralMind block"}
ABOUT = {"overhead": "system prompt and tool schemas: what the bill exceeds the transcript by",
         "inherited": "context from before this file (a resumed conversation, a parent's context): billed, not held "
                      "in the file, never exploration",
         "exploration": "Read, Grep, Glob, LS and read-only shell: results and arguments",
         "reread": "files the agent re-sent after a compaction, line-numbered as sent (not in the exploration "
                   "share)",
         "edit": "Edit, Write, MultiEdit, NotebookEdit", "shell": "tests, builds, installs",
         "web": "WebFetch, WebSearch", "other": "MCP tools, Task/Agent, TodoWrite, ...",
         "conversation": "prompts, replies, compaction summaries",
         "injected": "hook output, CLAUDE.md, memory, system reminders", "neuralmind": "the NeuralMind block"}
KINDS = {"input": "Fresh input", "cache_read": "Cache read", "cache_write_5m": "Cache write (5-minute)",
         "cache_write_1h": "Cache write (1-hour)", "output": "Output"}
AGENT_NAMES = {line.agent: line.name for line in AGENTS}  # as the report names them (agents/table.py)


def _template_block(tag: str) -> str:
    """The body of the template's <style> or <script>: the page inlines it and allows it by its hash."""
    source = resources.files("xshare.html").joinpath("template.html").read_text(encoding="utf-8")
    start = source.index(f"<{tag}>") + len(tag) + 2
    return source[start:source.index(f"</{tag}>", start)]


CSS = _template_block("style")
SCRIPT = _template_block("script")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSP = (f"default-src 'none'; style-src {_hash(CSS)}; script-src {_hash(SCRIPT)}; img-src 'none'; "
       "base-uri 'none'; form-action 'none'")
# C0/C1 controls (not tab or newline), bidi embeddings, overrides and isolates, zero-width and
# invisible format characters, line/paragraph separators, noncharacters, and lone surrogates
_ODD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
                  "\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]")


def visible(text: str) -> str:
    return _ODD.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def esc(value: object, limit: int | None = None) -> str:
    """Transcript text as HTML text: odd characters made visible, then escaped (quotes too)."""
    text = visible(str(value))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return html.escape(text, quote=True)


def code_cell(value: object) -> str:
    """A long command or path: shortened in the cell, longer in its title (a tooltip)."""
    text = str(value)
    if len(text) <= MAX_TEXT:
        return f'<code>{esc(text)}</code>'
    return f'<code title="{esc(text, MAX_TITLE)}">{esc(text, MAX_TEXT)}</code>'


def num(value: float) -> str:
    return f"{round(value):,}"


def share_of(part: float, whole: float) -> str:
    return pct(part / whole if whole > 0 else None)


def datum(name: str, value: object, text: str) -> str:
    """A figure tests and scripts can read back exactly (floats keep their repr)."""
    return f'<data id="{name}" value="{"" if value is None else esc(repr(value))}">{text}</data>'


def thousands(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if value >= 1e3 else f"{value:g}"


def when(stamp: str | None) -> str:
    moment = parse_time(stamp)
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment else "unknown"


def duration(start: str | None, end: str | None) -> str:
    a, b = parse_time(start), parse_time(end)
    if not (a and b):
        return "unknown"
    minutes = int((b - a).total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def not_available(section: str, why: str) -> str:
    return f'<p class="na" data-na="{section}"><b>Not available for this agent\'s data.</b> {why}</p>'


def head(title: str, stamp: str = "") -> str:
    stamp_meta = f'<meta name="xshare-stamp" content="{esc(stamp)}">\n' if stamp else ""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n<meta name="referrer" content="no-referrer">\n'
            f'{stamp_meta}<title>{esc(title, 200)}</title>\n<style>{CSS}</style>\n</head>\n')


def swatch(category: str) -> str:
    return (f'<svg class="sw" viewBox="0 0 10 10" aria-hidden="true"><rect class="c-{category}" width="10" '
            'height="10"/></svg>')
