"""One session's HTML summary: header, composition chart, exploration, cache sections, subagents; one
file with inline CSS, SVG and script (html/cells.py: the template, the policy, escaping)."""

from __future__ import annotations

import math
from collections import Counter

from xshare import __version__
from xshare.html.analysis import (
    NARROW_TOKENS,
    SUMMARY_TOKENS,
    SessionData,
    exploration_costs,
    find_compactions,
    find_rebuilds,
)
from xshare.html.cache_sections import cache_sections
from xshare.html.cells import (
    ABOUT,
    AGENT_NAMES,
    LABELS,
    MAX_COLUMNS,
    SCRIPT,
    STACK,
    code_cell,
    datum,
    duration,
    esc,
    head,
    num,
    share_of,
    swatch,
    thousands,
    when,
)
from xshare.html.index_page import sessions_table
from xshare.measure.ledger import CATEGORIES
from xshare.measure.prices import PriceTable, row_cost
from xshare.measure.row import SessionRow
from xshare.printing import pct
from xshare.report.dollars import exploration_dollars, money
from xshare.report.render import READINGS
from xshare.report.words import unrecorded_source


def render_session(data: SessionData, stamp: str = "", prices: PriceTable | None = None) -> str:
    """The whole page for one session; with `prices`, its dollars at list price in the header."""
    row = data.row
    rebuilds = find_rebuilds(data)
    cards, skipped = find_compactions(data)
    parts = [head(f"xshare \u00b7 {row['id']}", stamp), "<body>\n<main>\n", _header(data, prices),
             _composition(data, rebuilds), _exploration(data), cache_sections(data, rebuilds, cards, skipped),
             _subagents(data, prices), _footer(data), "</main>\n"]
    if row["api_calls"] and row["usage"] and any(row["usage"].values()):
        parts.append(f"<script>{SCRIPT}</script>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def _band(value: float | None) -> str:
    items = []
    for index, (limit, name, words) in enumerate(READINGS):
        low = READINGS[index - 1][0] if index else 0.0
        on = value is not None and low <= value < limit
        items.append(f'<li class="{"on" if on else ""}">{esc(name)}: {esc(words)}</li>')
    return f'<ul class="band">{"".join(items)}</ul>'


def _dollars(row: SessionRow, prices: PriceTable) -> tuple[tuple[str, str, str], tuple[str, str]]:
    """The header's tile and fact on dollars (html/index_page.py's column says the same): the whole, the
    prompt and exploration's part at list price, with the table that priced them; unknown and why, never $0."""
    priced = row_cost(row, prices)
    table = f"xshare's {esc(prices.describe())}"
    if priced.dollars is None:
        return (("", datum("row-dollars", None, "unknown"), "dollars at list price"),
                ("Dollars", f"unknown: {esc(priced.reason or 'not priced')} ({table})"))
    explored = exploration_dollars(row, priced)
    left_out = (f"; {priced.unpriced_calls:,} call(s) not priced: {esc(priced.reason or 'no list price')}"
                if priced.unpriced_calls else "")
    return (("", datum("row-dollars", priced.dollars, esc(money(priced.dollars))), "dollars at list price"),
            ("Dollars", f"{esc(money(priced.dollars))} at {table}: the prompt {esc(money(priced.prompt_dollars))}, "
                        f"exploration {esc(money(explored)) if explored is not None else 'unknown'}{left_out}"))


def _header(data: SessionData, prices: PriceTable | None = None) -> str:
    row = data.row
    crumbs = []
    if data.index_href:
        crumbs.append(f'<a href="{esc(data.index_href)}">All sessions</a>')
    if data.parent:
        name = esc(data.parent.row["id"])
        link = f'<a href="{esc(data.parent.href)}">{name}</a>' if data.parent.href else f"<code>{name}</code>"
        crumbs.append(f"Subagent of {link}")
    agent = AGENT_NAMES.get(row["agent"], row["agent"])
    models = Counter(call.get("model") for call in data.calls if call.get("model"))
    model_text = ", ".join(f"<code>{esc(m)}</code> ({c:,} call{'s' * (c != 1)})" for m, c in models.most_common())
    if not model_text:
        model_text = ", ".join(f"<code>{esc(m)}</code>" for m in row.get("models") or []) or "not recorded"
    tokenizer = esc(row["tokenizer"]) + (f" \u2014 {esc(data.tokenizer_note)}" if data.tokenizer_note else "")
    problems = "; ".join(f"{esc(kind)}: {count:,}" for kind, count in sorted(data.problems.items()))
    share = row["exploration_share_of_context"]
    calibration = datum("row-recorded_over_billed", row["recorded_over_billed"], pct(row["recorded_over_billed"]))
    compactions = datum("row-compactions", row["compactions"], str(row["compactions"]))
    trims = datum("row-trimmed_messages", row["trimmed_messages"], str(row["trimmed_messages"]))
    facts = [
        ("Agent and source", f"{esc(agent)} \u00b7 {esc(row['source'])}"),
        ("Models", model_text),
        ("Started", f"{when(row['started_at'])}; last activity {when(row['last_activity'])}"),
        ("Tokenizer", tokenizer),
        ("Calibration", f"{calibration} of the billed prompt is accounted for by the modelled context (recorded "
                        "messages plus system overhead)" + (f"; {esc(row['unknown_because'])}, so the shares are "
                        "unknown" if row.get("unknown_because") else "")),
        ("Compactions and trims", f"{compactions} compaction(s); {trims} tool result(s) cleared by the agent"),
        ("Read from", f"<code>{esc(data.origin)}</code>" if data.origin else "not recorded"),
    ]
    if problems:
        facts.append(("Problems", problems))
    tiles = [
        ("main", datum("row-exploration_share_of_context", share, pct(share)), "exploration share of the context"),
        ("", datum("row-exploration_share_of_prompt", row["exploration_share_of_prompt"],
                   pct(row["exploration_share_of_prompt"])), "exploration share of the billed prompt"),
        ("", datum("row-reread_share_of_context", row.get("reread_share_of_context"),
                   pct(row.get("reread_share_of_context"))), "re-sent reads (after compactions), of the context"),
        ("", datum("row-api_calls", row["api_calls"], f"{row['api_calls']:,}"), "API calls"),
        ("", datum("row-prompt_tokens_billed", row["prompt_tokens_billed"], num(row["prompt_tokens_billed"])),
         "prompt tokens billed"),
        ("", datum("row-context_tokens", row["context_tokens"], num(row["context_tokens"])),
         "context tokens (modelled)"),
        ("", esc(duration(row["started_at"], row["last_activity"])), "duration"),
    ]
    if prices is not None:
        tile, fact = _dollars(row, prices)
        tiles.insert(2, tile)
        facts.insert(2, fact)
    dot = " \u00b7 "
    return "".join([
        f'<p class="crumbs">{dot.join(crumbs)}</p>\n' if crumbs else "",
        "<h1>Where this session\u2019s prompt tokens went</h1>\n",
        f'<p class="sub">Session <code>{esc(row["id"])}</code></p>\n',
        '<div class="tiles">', *(f'<div class="tile {k}"><b>{v}</b><span>{what}</span></div>' for k, v, what in tiles),
        "</div>\n",
        "<p>The spec\u2019s pre-registered reading of the exploration share of the context (fixed for pooled "
        "interactive sessions; one session is an anecdote, shown for orientation):</p>\n", _band(share),
        '<dl class="facts">', *(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts), "</dl>\n",
    ])


def _ticks(top: float) -> tuple[float, list[float]]:
    if top <= 0:
        return 1.0, [0.0, 1.0]
    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    count = math.ceil(top / step)
    return step * count, [step * i for i in range(count + 1)]


def _chart(data: SessionData, rebuilds: list) -> str:
    calls = data.calls
    total = len(calls)
    per = max(1, math.ceil(total / MAX_COLUMNS))
    columns = math.ceil(total / per)
    spread = data.row["billed_tokens"].get("overhead", 0) / total if data.overhead_spread else None
    stacks, billed = [], []
    for column in range(columns):
        chunk = calls[column * per:(column + 1) * per]
        sums = [0.0] * len(STACK)
        for call in chunk:
            present = call["present"]
            sums[0] += spread if spread is not None else call["overhead"]
            for j, category in enumerate(STACK[1:], 1):
                sums[j] += present.get(category, 0)
        stacks.append([value / len(chunk) for value in sums])
        billed.append(sum(call["prompt"] for call in chunk) / len(chunk))
    left, top, width, height = 58.0, 10.0, 930.0, 262.0
    ymax, ticks = _ticks(max(max(map(sum, stacks)), max(billed)) * 1.02)
    cw = width / columns
    bar = cw * 0.84 if cw >= 4 else cw

    def y(value: float) -> float:
        return top + height - value / ymax * height

    out = [f'<svg class="chart" viewBox="0 0 1000 310" role="img" aria-label="Context composition per API call, '
           f'{total:,} calls" data-columns="{columns}" data-per="{per}">']
    for tick in ticks:
        out.append(f'<line class="grid" x1="{left}" x2="{left + width}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>'
                   f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{thousands(tick)}</text>')
    for j, category in enumerate(STACK):
        path = []
        for column, values in enumerate(stacks):
            h = values[j] / ymax * height
            if h >= 0.05:
                x = left + column * cw + (cw - bar) / 2
                path.append(f"M{x:.1f} {y(sum(values[:j + 1])):.1f}h{bar:.2f}v{h:.2f}h-{bar:.2f}z")
        if path:
            out.append(f'<path class="c-{category}" d="{"".join(path)}"><title>{LABELS[category]}</title></path>')
    line = [f"M{left:.1f} {y(billed[0]):.1f}"] + [
        f"H{left + column * cw:.1f}V{y(value):.1f}" for column, value in enumerate(billed) if column
    ] + [f"H{left + width:.1f}"]
    out.append(f'<path class="billed" d="{"".join(line)}"><title>Prompt tokens billed</title></path>')
    for marker in data.markers:
        kind = {"compaction": "c", "trimmed": "t"}.get(marker["kind"])
        if kind is None or (kind == "t" and not marker["value"]):
            continue
        x = left + min(marker["at"] // per, columns) * cw
        what = "Compaction" if kind == "c" else f"Microcompaction: {marker['value']:,} tool result(s) cleared"
        out.append(f'<line class="mk-{kind}" x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + height}">'
                   f'<title>{what} before call {marker["at"] + 1:,}</title></line>')
    for rebuild in rebuilds:
        x = left + (rebuild.call // per + 0.5) * cw
        out.append(f'<path class="rb" d="M{x:.1f} {top + height + 3:.1f}l4 7h-8z"><title>Cache rebuild at call '
                   f'{rebuild.call + 1:,}: {esc(rebuild.cause)}, {rebuild.rewritten:,} tokens re-written'
                   '</title></path>')
    for column, values in enumerate(stacks):
        first, last = column * per + 1, min(total, (column + 1) * per)
        name = f"Call {first:,}" if first == last else f"Calls {first:,}\u2013{last:,} (mean)"
        parts = "; ".join(f"{LABELS[c]} {num(v)}" for c, v in zip(STACK, values, strict=True) if v >= 0.5)
        out.append(f'<rect class="hit" x="{left + column * cw:.1f}" y="{top}" width="{cw:.2f}" height="{height}">'
                   f'<title>{name}: billed {num(billed[column])}; {parts}</title></rect>')
    for index in sorted({0, columns // 4, columns // 2, 3 * columns // 4, columns - 1}):
        number = total if index == columns - 1 else index * per + 1  # the axis ends at the last call
        # the last call's number ends at the plot's edge, so that no part of it is cut off
        x, anchor = (left + width, "end") if index == columns - 1 else (left + (index + 0.5) * cw, "middle")
        out.append(f'<text x="{x:.1f}" y="302" text-anchor="{anchor}">{number:,}</text>')
    out.append("</svg>")
    return "".join(out)


def _composition(data: SessionData, rebuilds: list) -> str:
    row = data.row
    out = ['<section id="composition"><h2>Context composition, call by call</h2>\n']
    if not data.calls:
        out.append("<p>No API call recorded, so there is nothing to draw.</p>")
    else:
        per = max(1, math.ceil(len(data.calls) / MAX_COLUMNS))
        bucket = (f" Its {len(data.calls):,} calls are drawn in buckets of {per:,}: each bar is the mean of its "
                  "calls." if per > 1 else "")
        spread = (" System overhead is known only for the whole session here, so it is spread evenly over the "
                  "calls." if data.overhead_spread else "")
        unwritten = row.get("unrecorded_calls") or 0
        if unwritten:  # in the row's figures above, from the agent's own totals; no call of its own to draw
            source = unrecorded_source(row["agent"], row.get("unrecorded_tasks"))
            spread += (f" The session was also billed for {unwritten:,} call(s) its records do not hold "
                       f"({esc(source)}): they are in the figures above and in the composition below, not drawn "
                       "here.")
        legend = "".join(f"<li>{swatch(c)}{LABELS[c]}</li>" for c in STACK)
        out.append(
            "<p>Each bar is what one API call\u2019s context held, by category, as the ledger models it: a message "
            "rides along on every call after it until a compaction or a trim removes it, and the provider\u2019s "
            f"bill caps what a call can have carried. The line is the prompt the provider billed.{bucket}{spread}"
            " Dashed lines mark compactions, dotted lines trims (tool results the agent cleared), triangles "
            "cache rebuilds.</p>\n"
            f'<ul class="legend">{legend}<li><svg class="sw" viewBox="0 0 10 10" aria-hidden="true"><path '
            f'class="billed" d="M0 5H10"/></svg>Prompt billed</li></ul>\n'
            f'<div class="scroll">{_chart(data, rebuilds)}</div>\n')
    context = row["context_tokens"]
    lines = []
    for category in CATEGORIES:
        billed, first = row["billed_tokens"].get(category, 0), row["first_time_tokens"].get(category)
        first_cell = (datum(f"first-{category}", first, num(first or 0)) if category not in ("overhead", "inherited")
                      else "\u2014")  # neither is in the file: never read there for a first time
        lines.append(f'<tr><td class="nowrap">{swatch(category)}{LABELS[category]}</td>'
                     f'<td class="n">{datum(f"billed-{category}", billed, num(billed))}</td>'
                     f'<td class="n">{share_of(billed, context)}</td><td class="n hide-s">{first_cell}</td>'
                     f'<td class="note hide-s">{ABOUT[category]}</td></tr>')
    out.append(
        '<h3>Billed tokens by category</h3><div class="scroll"><table><thead><tr><th>Category</th>'
        '<th class="n">Billed tokens</th><th class="n">Share of context</th><th class="n hide-s">First time</th>'
        f'<th class="hide-s">What it holds</th></tr></thead><tbody>{"".join(lines)}'
        f'<tr class="total"><td>Context</td><td class="n">{num(context)}</td><td class="n">100%</td>'
        '<td class="hide-s"></td><td class="hide-s"></td></tr></tbody></table></div>\n<p class="note">Billed tokens '
        "of a category: the sum over API calls of its tokens present in that call\u2019s context. First time: the "
        "same content counted once.</p></section>\n")
    return "".join(out)


def _exploration(data: SessionData) -> str:
    row = data.row
    billed = row["billed_tokens"].get("exploration", 0)
    costs = exploration_costs(data)
    out = ['<section id="exploration"><h2>What exploration cost</h2>\n',
           f"<p>Billed exploration: <b>{num(billed)}</b> tokens, {pct(row['exploration_share_of_context'])} of the "
           "context. A tool result\u2019s billed tokens are its size times the number of calls that carried it: "
           "it is a subscription, re-sent on every later call until a compaction or a trim drops it, so a read "
           "early in a long session costs far more than the same read near its end.</p>\n"]
    if not costs["results"]:
        out.append("<p>No exploration tool result was recorded in this session.</p></section>\n")
        return "".join(out)
    lines = []
    for rank, result in enumerate(costs["top"], 1):
        # calls are numbered from 1 on the page; a result added at index a and removed at r rode a+1..r
        lines.append(f'<tr><td class="n hide-m">{rank}</td><td>{esc(result.tool, 60)}</td>'
                     f"<td>{code_cell(result.target) if result.target else ''}</td>"
                     f'<td class="n hide-s">{num(result.tokens)}</td><td class="n hide-s">{result.calls:,}</td>'
                     f'<td class="n">{num(result.billed)}</td><td class="n">{share_of(result.billed, billed)}</td>'
                     f'<td class="n hide-m">{result.added + 1:,}\u2013{result.removed:,}</td></tr>')
    out.append(
        f"<h3>The {len(costs['top'])} costliest of {costs['results']:,} exploration results</h3>"
        '<div class="scroll"><table><thead><tr><th class="n hide-m">#</th><th>Tool</th><th>Command or path</th>'
        '<th class="n hide-s">Size</th><th class="n hide-s">Calls carried</th><th class="n">Billed tokens</th>'
        '<th class="n">Of exploration</th><th class="n hide-m">On calls</th></tr></thead>'
        f'<tbody>{"".join(lines)}</tbody></table></div>\n')
    tools = "".join(f'<tr><td>{esc(tool, 60)}</td><td class="n">{count:,}</td><td class="n hide-s">{num(size)}</td>'
                    f'<td class="n">{num(cost)}</td><td class="n">{share_of(cost, billed)}</td></tr>'
                    for tool, (count, size, cost) in costs["by_tool"][:12])
    out.append('<h3>By tool</h3><div class="scroll"><table><thead><tr><th>Tool</th><th class="n">Results</th>'
               '<th class="n hide-s">Size</th><th class="n">Billed tokens</th><th class="n">Of exploration</th></tr>'
               f"</thead><tbody>{tools}</tbody></table></div>\n")
    rest = max(0, billed - costs["carried"])
    removed = [
        ("summary", "A summary after first use",
         f"each result rides along at full size on the first call that carries it, then as a summary of at most "
         f"{SUMMARY_TOKENS:,} tokens: removes the sum of max(0, size \u2212 {SUMMARY_TOKENS:,}) \u00d7 "
         "(calls carried \u2212 1)"),
        ("narrow", "A narrower read",
         f"each result is at most {NARROW_TOKENS:,} tokens from the start (a line range, a grep for the verdict "
         f"line): removes the sum of max(0, size \u2212 {NARROW_TOKENS:,}) \u00d7 calls carried"),
        ("both", "Both", f"at most {NARROW_TOKENS:,} tokens on the first call, at most {SUMMARY_TOKENS:,} after"),
    ]
    rows = "".join(f'<tr><td><b>{name}</b><br><span class="note">{how}</span></td>'
                   f'<td class="n">{datum(f"rm-{key}", costs[key], num(costs[key]))}</td><td class="n">'
                   f'{datum(f"rm-{key}-share", costs[key] / billed if billed else None, share_of(costs[key], billed))}'
                   "</td></tr>" for key, name, how in removed)
    out.append(
        "<h3>What a summary or a narrower read would have removed</h3>"
        f'<div class="scroll"><table><thead><tr><th>If the agent had used</th><th class="n">Tokens removed</th>'
        f'<th class="n">Share of billed exploration</th></tr></thead><tbody>{rows}</tbody></table></div>\n'
        "<p class=\"note\">Shares are of all billed exploration. They are upper bounds: they assume the agent "
        "needed nothing of a result beyond what the summary or the narrower read kept. The exploration results "
        f"above account for {num(costs['carried'])} billed tokens; the other {num(rest)} are the calls\u2019 own "
        "arguments (paths, patterns, commands) and results without a tool id, which neither habit changes."
        "</p></section>\n")
    return "".join(out)


def _subagents(data: SessionData, prices: PriceTable | None) -> str:
    if not data.subagents:
        return ('<section id="subagents"><h2>Subagents</h2>\n<p>No subagent transcript belongs to this session.</p>'
                "</section>\n")
    return ('<section id="subagents"><h2>Subagents</h2>\n<p>Each subagent starts with its own, empty context and is '
            "billed in its own file, so its tokens are not in this page\u2019s totals. Internal agents are Claude "
            "Code\u2019s own helpers (compaction, side questions) replaying this session\u2019s context.</p>"
            f"{sessions_table(data.subagents, 'Subagent', nested=False, prices=prices)}</section>\n")


def _footer(data: SessionData) -> str:
    return (f"<footer><p>Made by xshare {esc(__version__)} (method {esc(data.row.get('method', ''))}). One file: no "
            "script, style or image is loaded from anywhere, and nothing leaves this page. Figures are token counts"
            f" from the session\u2019s own records, equal to <code>xshare session {esc(data.row['id'])} --json</code>"
            ".</p></footer>\n")
