"""The index page: every session, newest first, linked to its page, under the share-over-time chart; the
same sessions table lists a session's subagents on its own page."""

from __future__ import annotations

import re
from collections import Counter

from xshare import __version__
from xshare.html.analysis import (
    Linked,
)
from xshare.html.cells import AGENT_NAMES, duration, esc, head, num, when
from xshare.html.habits import costliest_habit, pool
from xshare.measure.ids import short_ids
from xshare.measure.prices import PriceTable, row_cost
from xshare.measure.row import count_kinds, kinds_text
from xshare.measure.tokens import TokenizerChoice
from xshare.printing import pct
from xshare.report.session_dollars import cost_cell

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SHOWN_ID = 16  # characters of a long session id a table shows (the whole id is its tooltip and its page)
LONG_ID = 12  # characters of a shown id beyond which it may wrap (a short one never breaks: 'acompa/ct')


def short_id(name: str) -> str:
    """A session id as a table shows it: a UUID by its first 8 characters, as git shows a commit (36
    characters wrap over six lines in a narrow column); another long id cut at SHOWN_ID with an ellipsis."""
    if _UUID.fullmatch(name):
        return name[:8]
    return name if len(name) <= SHOWN_ID else name[: SHOWN_ID - 1] + "\u2026"


def _in_order(entries: list[Linked], nested: bool) -> list[tuple[Linked, bool]]:
    """The rows as the table shows them, each with whether it sits under another. `nested`: the sessions a
    session ran or that continue it (subagents, Hermes's rotations) follow it, however deep, each once; one
    whose parent is not listed, or is an id two sessions share, stands on its own."""
    if not nested:
        return [(entry, True) for entry in entries]
    counts = Counter(entry.row["id"] for entry in entries)

    def parent_of(entry: Linked) -> str | None:
        parent = entry.row.get("parent")
        return parent if parent is not None and parent != entry.row["id"] and counts.get(parent) == 1 else None

    children: dict[str, list[Linked]] = {}
    for entry in entries:
        if parent := parent_of(entry):
            children.setdefault(parent, []).append(entry)
    shown: list[tuple[Linked, bool]] = []
    placed: set[int] = set()
    roots = [entry for entry in entries if not parent_of(entry)]
    for root in roots + entries:  # then any left: parents that name each other (damaged records)
        stack = [(root, False)]
        while stack:
            entry, under = stack.pop()
            if id(entry) in placed:
                continue
            placed.add(id(entry))
            shown.append((entry, under))
            stack += [(child, True) for child in reversed(children.get(entry.row["id"], []))]
    return shown


def _shown_id(row_id: str, short: dict[str, str], agent_short: dict[str, str], under: bool) -> str:
    """A session's id as the table shows it: `sessions`'s short id (measure/ids.py); a subagent by the short
    id of its agent file, after its session's id when it is not listed under it."""
    session, _, agent_file = row_id.partition("/")
    if not agent_file:
        return short.get(row_id, row_id)
    name = agent_short.get(_agent_name(row_id), agent_file)
    return name if under else f"{short_id(session)}/{name}"


def _agent_name(row_id: str) -> str:
    """A subagent's agent file without its `agent-` (every subagent file is agent-*)."""
    return row_id.partition("/")[2].removeprefix("agent-")


def sessions_table(entries: list[Linked], first: str, nested: bool,
                   costliest: dict[str, tuple[str, float] | None] | None = None,
                   prices: PriceTable | None = None) -> str:
    """A table of sessions (the index; a page's subagents), each linked to its page. `nested`: a session's
    subagents and continuations follow it, indented; otherwise every row is a subagent, named by its agent
    file. `costliest`: each session's costliest habit (the index's last column); `prices`: each session's
    dollars at list price (`unknown`, never $0.00, where it has no price)."""
    ids = [entry.row["id"] for entry in entries]
    # sessions among sessions, as `sessions` shortens them; agent files among the table's agent files
    short, agent_short = short_ids(ids), short_ids(_agent_name(row_id) for row_id in ids if "/" in row_id)

    def line(entry: Linked, child: bool) -> str:
        row = entry.row
        name = row["id"].rpartition("/")[2] if child and "/" in row["id"] else row["id"]
        shown = _shown_id(row["id"], short, agent_short, child)
        # an id that stays long once shortened (a subagent after its session's, a non-UUID) may wrap anywhere
        long_id = ' class="long-id"' if len(shown) > LONG_ID else ""
        shown = f'<span title="{esc(name)}">{esc(shown)}</span>' if shown != name else esc(name)
        link = f'<a href="{esc(entry.href)}">{shown}</a>' if entry.href else shown
        # on a phone the agent and source stand under the id, their column hidden (template.html)
        agent = f'{esc(AGENT_NAMES.get(row["agent"], row["agent"]))} \u00b7 {esc(row["source"])}'
        return (f'<tr class="{"child" if child and nested else ""}" data-session="{esc(row["id"])}"><td>'
                f'<code{long_id}>{link}</code><span class="show-s note">{agent}</span></td>'
                f'<td class="hide-s wide-nowrap">{agent}</td>'
                f'<td class="hide-m">{_model_cell(row.get("model") or "")}</td>'
                f'<td class="hide-s wide-nowrap">{when(row.get("started_at")).removesuffix(" UTC")}</td>'
                f'<td class="hide-m">{duration(row.get("started_at"), row.get("last_activity"))}</td>'
                f'<td class="n hide-m">{row["api_calls"]:,}</td><td class="n">{num(row["prompt_tokens_billed"])}</td>'
                f'<td class="n">{pct(row["exploration_share_of_context"])}</td>'
                f'<td class="n hide-m">{pct(row["exploration_share_of_prompt"])}</td>'
                + (f'<td class="n">{esc(cost_cell(row_cost(row, prices)))}</td>' if prices is not None else "")
                + (f'<td class="hide-s">{_habit_cell(costliest.get(row["id"]), entry.href, row["id"] in costliest)}'
                   "</td>" if costliest is not None else "")
                + "</tr>")

    habit_head = '<th class="hide-s">Costliest habit</th>' if costliest is not None else ""
    dollars_head = '<th class="n" title="at list price">$</th>' if prices is not None else ""
    lines = [line(entry, under) for entry, under in _in_order(entries, nested)]
    return (f'<div class="scroll"><table class="sessions"><thead><tr><th>{first}</th><th class="hide-s">Agent \u00b7 '
            'source</th><th class="hide-m">Model</th><th class="hide-s">Started (UTC)</th>'
            '<th class="hide-m">Duration</th><th class="n hide-m">API calls</th><th class="n">Prompt billed</th>'
            '<th class="n">Exploration of context</th><th class="n hide-m">of billed prompt</th>'
            f'{dollars_head}{habit_head}</tr></thead>'
            f'<tbody>{"".join(lines)}</tbody></table></div>\n')


def _model_cell(model: str) -> str:
    """A model's name on at most two lines (a provider's long names would make the row a tall gap); the
    whole name is its tooltip, and the session's page shows it."""
    return f'<code class="two-lines" title="{esc(model)}">{esc(model)}</code>' if model else ""


def _costliest(summaries: list[dict]) -> dict[str, tuple[str, float] | None]:
    """Each session's costliest habit and its weight (html/habits.py's rule)."""
    return {summary["id"]: costliest_habit(summary) for summary in summaries}


def _habit_cell(found: tuple[str, float] | None, href: str | None, known: bool) -> str:
    """The index's cell: the habit and its weight, linked to the page's section that shows it."""
    if not known:
        return "unknown"
    if found is None:
        return "none"
    text = f'<span class="nowrap">{esc(found[0])}</span> ({num(found[1])})'  # at most two lines: name, weight
    section = "exploration" if found[0] == "exploration" else "cache"
    return f'<a href="{esc(href)}#{section}">{text}</a>' if href else text


def habits_table(summaries: list[dict]) -> str:
    """What each habit cost over every session (html/habits.py `pool`, as `xshare advice` prints it)."""
    pooled = pool(summaries)
    lines = []
    for line in pooled["habits"] + pooled["cost_nothing"]:
        unknown = sum(sum(agents.values()) for agents in line["sessions_unknown"].values())
        note = f' <span class="note">(unknown for {unknown:,} session(s))</span>' if unknown else ""
        # the place for a dollar column: the price table fills a cell here, beside the weight; on a phone the
        # habit, its share of the bill and the saving (the habit's words need the width)
        lines.append(f'<tr><td>{esc(line["what"])}{note}</td><td class="n hide-s">{line["events"]:,}</td>'
                     f'<td class="n hide-s">{num(line["cost_weight"])}</td>'
                     f'<td class="n">{pct(line["share_of_weighted_bill"])}</td>'
                     f'<td class="n">{num(line["saving_weight"])}</td>'
                     f'<td class="hide-m">{esc(line["change"])}, assuming {esc(line["assumption"])}</td></tr>')
    return ("<h2>Habits: what each cost, and what changing it would have saved</h2>\n"
            f'<p class="sub">Weighted bill of these sessions: {num(pooled["weighted_bill"])} (fresh input 1, cache read'
            " 0.1, cache write 1.25 or 2, output 5). Savings overlap; do not add them up. `xshare advice` says the "
            "same in text.</p>\n"
            '<div class="scroll"><table class="habits"><thead><tr><th>Habit</th><th class="n hide-s">Events</th>'
            '<th class="n hide-s">Cost (weighted)</th><th class="n">Of the bill</th><th class="n">Saving</th>'
            f'<th class="hide-m">Change and assumption</th></tr></thead><tbody>{"".join(lines)}</tbody></table>'
            '</div>\n')


def render_index(entries: list[Linked], tokenizer: TokenizerChoice, chart: str = "",
                 habits: list[dict] | None = None, prices: PriceTable | None = None) -> str:
    """Every session with its share, size and date, each linked to its page, counted by kind; the sessions
    a session ran or that continue it under it; with `habits` (the sessions' habits summaries), the habits
    table and each session's costliest habit; with `prices`, each session's dollars and the table's date."""
    note = f" ({esc(tokenizer.note)})" if tokenizer.note else ""
    dollars = f" $: xshare's {esc(prices.describe())}." if prices is not None else ""
    sessions = f"{len(entries):,} session{'s' if len(entries) != 1 else ''}"
    return "".join([
        head("xshare \u00b7 sessions"),  # main.index: wider than a session page's, for the table
        '<body>\n<main class="index">\n<h1>Sessions: where the prompt tokens went</h1>\n',
        f'<p class="sub">{sessions} ({esc(kinds_text(count_kinds(entry.row for entry in entries)))}), newest first; '
        "a session's subagents and continuations under it. "
        f"Tokenizer: {esc(tokenizer.name)}{note}.{dollars}</p>\n", chart, habits_table(habits) if habits else "",
        sessions_table(entries, "Session", True, _costliest(habits) if habits is not None else None, prices),
        f"<footer><p>Made by xshare {esc(__version__)}. Each page is one file; nothing is loaded from anywhere."
        "</p></footer>\n</main>\n</body>\n</html>\n",
    ])
