"""The index page: every session, newest first, linked to its page, under the share-over-time chart; the
same sessions table lists a session's subagents on its own page."""

from __future__ import annotations

import re

from xshare import __version__
from xshare.html.analysis import (
    Linked,
)
from xshare.html.cells import AGENTS, duration, esc, head, num, when
from xshare.measure.tokens import TokenizerChoice
from xshare.text import pct

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SHOWN_ID = 16  # characters of a long session id a table shows (the whole id is its tooltip and its page)


def short_id(name: str) -> str:
    """A session id as a table shows it: a UUID by its first 8 characters, as git shows a commit (36
    characters wrap over six lines in a narrow column); another long id cut at SHOWN_ID with an ellipsis."""
    if _UUID.fullmatch(name):
        return name[:8]
    return name if len(name) <= SHOWN_ID else name[: SHOWN_ID - 1] + "\u2026"


def sessions_table(entries: list[Linked], first: str, nested: bool) -> str:
    """A table of sessions (the index; a page's subagents), each linked to its page. `nested`: a subagent
    follows its parent, indented; otherwise every row is a subagent, named by its agent file."""
    ids = {entry.row["id"] for entry in entries} if nested else set()
    children: dict[str, list[Linked]] = {}
    for entry in entries:
        if entry.row.get("parent") in ids:
            children.setdefault(entry.row["parent"], []).append(entry)

    def line(entry: Linked, child: bool) -> str:
        row = entry.row
        name = row["id"].rpartition("/")[2] if child else row["id"]
        short = short_id(name.removeprefix("agent-") if child else name)  # every subagent file is agent-*
        shown = f'<span title="{esc(name)}">{esc(short)}</span>' if short != name else esc(name)
        link = f'<a href="{esc(entry.href)}">{shown}</a>' if entry.href else shown
        return (f'<tr class="{"child" if child and nested else ""}" data-session="{esc(row["id"])}"><td class="nowrap">'
                f'<code>{link}</code></td><td class="src">{esc(AGENTS.get(row["agent"], row["agent"]))} \u00b7 '
                f'{esc(row["source"])}</td><td class="hide-s nowrap"><code>{esc(row.get("model") or "")}</code></td>'
                f'<td class="hide-s nowrap">{when(row.get("started_at"))}</td>'
                f'<td class="hide-s nowrap">{duration(row.get("started_at"), row.get("last_activity"))}</td>'
                f'<td class="n hide-s">{row["api_calls"]:,}</td><td class="n">{num(row["prompt_tokens_billed"])}</td>'
                f'<td class="n">{pct(row["exploration_share_of_context"])}</td>'
                f'<td class="n hide-s">{pct(row["exploration_share_of_prompt"])}</td></tr>')

    lines = []
    for entry in entries:
        if entry.row.get("parent") not in ids:
            lines.append(line(entry, not nested))
            lines.extend(line(child, True) for child in children.get(entry.row["id"], []))
    return (f'<div class="scroll"><table class="sessions"><thead><tr><th>{first}</th><th>Agent \u00b7 source</th>'
            '<th class="hide-s">Model</th><th class="hide-s">Started</th><th class="hide-s">Duration</th><th class="n '
            'hide-s">API calls</th><th class="n">Prompt billed</th><th class="n">Exploration of context</th><th '
            f'class="n hide-s">of billed prompt</th></tr></thead><tbody>{"".join(lines)}</tbody></table></div>\n')


def render_index(entries: list[Linked], tokenizer: TokenizerChoice, chart: str = "") -> str:
    """Every session with its share, size and date, each linked to its page; subagents under their parent."""
    ids = {entry.row["id"] for entry in entries}
    top = sum(1 for entry in entries if entry.row.get("parent") not in ids)
    note = f" ({esc(tokenizer.note)})" if tokenizer.note else ""
    return "".join([
        head("xshare \u00b7 sessions"), "<body>\n<main>\n<h1>Sessions: where the prompt tokens went</h1>\n",
        f'<p class="sub">{top:,} session(s) and {len(entries) - top:,} subagent transcript(s), newest first. '
        f"Tokenizer: {esc(tokenizer.name)}{note}.</p>\n", chart, sessions_table(entries, "Session", nested=True),
        f"<footer><p>Made by xshare {esc(__version__)}. Each page is one file; nothing is loaded from anywhere."
        "</p></footer>\n</main>\n</body>\n</html>\n",
    ])
