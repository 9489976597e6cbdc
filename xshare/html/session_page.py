"""The HTML of the per-session summary and of the index: one file each, inline CSS, SVG and script.

Nothing on a page loads from anywhere: the Content-Security-Policy forbids every fetch (default-src
'none') and allows exactly the page's own <style> and <script> by hash, so even a tag that escaping
missed could not run or load. Escaping is the first line anyway: every piece of transcript text goes
through `_t`, which also makes invisible or reordering characters (NUL, bidi overrides, lone
surrogates) visible as [U+XXXX], so a label cannot disguise itself.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
from collections import Counter
from importlib import resources

from xshare import __version__
from xshare.html.analysis import (
    CAUSES,
    MIN_REBUILD,
    MIN_REBUILD_SHARE,
    NARROW_TOKENS,
    SUMMARY_TOKENS,
    WEIGHTS,
    Linked,
    SessionData,
    compaction_economics,
    compaction_now,
    exploration_costs,
    find_compactions,
    find_rebuilds,
    nudge_now,
    rebuild_weight,
)
from xshare.measure.ledger import CATEGORIES
from xshare.measure.tokens import TokenizerChoice
from xshare.report.render import READINGS, parse_time

MAX_COLUMNS = 300  # more calls than this are drawn as buckets (the mean of each), keeping pages small
MAX_REBUILD_ROWS = 200
MAX_TEXT = 160  # characters of a command or path shown in a cell; the title holds up to MAX_TITLE
MAX_TITLE = 2000
# stacking order, bottom up: the system prompt sits under everything, exploration right on top of it
STACK = ("overhead", "exploration", "reread", "edit", "shell", "web", "other", "conversation", "injected",
         "neuralmind")
LABELS = {"overhead": "System overhead", "exploration": "Exploration", "reread": "Re-sent reads", "edit": "Edits",
          "shell": "Other shell", "web": "Web", "other": "Other tools", "conversation": "Conversation",
          "injected": "Injected context", "neuralmind": "NeuralMind block"}
ABOUT = {"overhead": "system prompt and tool schemas: what the bill exceeds the transcript by",
         "exploration": "Read, Grep, Glob, LS and read-only shell: results and arguments",
         "reread": "files Claude Code re-sent after a compaction, line-numbered as sent (not in the exploration "
                   "share)",
         "edit": "Edit, Write, MultiEdit, NotebookEdit", "shell": "tests, builds, installs",
         "web": "WebFetch, WebSearch", "other": "MCP tools, Task/Agent, TodoWrite, ...",
         "conversation": "prompts, replies, compaction summaries",
         "injected": "hook output, CLAUDE.md, memory, system reminders", "neuralmind": "the NeuralMind block"}
KINDS = {"input": "Fresh input", "cache_read": "Cache read", "cache_write_5m": "Cache write (5-minute)",
         "cache_write_1h": "Cache write (1-hour)", "output": "Output"}
AGENTS = {"claude-code": "Claude Code", "hermes": "Hermes"}


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


def _visible(text: str) -> str:
    return _ODD.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def _t(value: object, limit: int | None = None) -> str:
    """Transcript text as HTML text: odd characters made visible, then escaped (quotes too)."""
    text = _visible(str(value))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return html.escape(text, quote=True)


def _cut(value: object) -> str:
    """A long command or path: shortened in the cell, longer in its title (a tooltip)."""
    text = str(value)
    if len(text) <= MAX_TEXT:
        return f'<code>{_t(text)}</code>'
    return f'<code title="{_t(text, MAX_TITLE)}">{_t(text, MAX_TEXT)}</code>'


def _n(value: float) -> str:
    return f"{round(value):,}"


def _pct(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1%}"


def _share(part: float, whole: float) -> str:
    return _pct(part / whole if whole > 0 else None)


def _data(name: str, value: object, text: str) -> str:
    """A figure tests and scripts can read back exactly (floats keep their repr)."""
    return f'<data id="{name}" value="{"" if value is None else _t(repr(value))}">{text}</data>'


def _k(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if value >= 1e3 else f"{value:g}"


def _when(stamp: str | None) -> str:
    moment = parse_time(stamp)
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment else "unknown"


def _span(start: str | None, end: str | None) -> str:
    a, b = parse_time(start), parse_time(end)
    if not (a and b):
        return "unknown"
    minutes = int((b - a).total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60:02d} min"


def _na(section: str, why: str) -> str:
    return f'<p class="na" data-na="{section}"><b>Not available for this agent\'s data.</b> {why}</p>'


def _head(title: str, stamp: str = "") -> str:
    stamp_meta = f'<meta name="xshare-stamp" content="{_t(stamp)}">\n' if stamp else ""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n<meta name="referrer" content="no-referrer">\n'
            f'{stamp_meta}<title>{_t(title, 200)}</title>\n<style>{CSS}</style>\n</head>\n')


def _swatch(category: str) -> str:
    return (f'<svg class="sw" viewBox="0 0 10 10" aria-hidden="true"><rect class="c-{category}" width="10" '
            'height="10"/></svg>')


# --- the session page ----------------------------------------------------------------------------


def render_session(data: SessionData, stamp: str = "") -> str:
    """The whole page for one session."""
    row = data.row
    rebuilds = find_rebuilds(data)
    cards, skipped = find_compactions(data)
    parts = [_head(f"xshare \u00b7 {row['id']}", stamp), "<body>\n<main>\n", _header(data),
             _composition(data, rebuilds), _exploration(data), _cache(data, rebuilds, cards, skipped),
             _subagents(data), _footer(data), "</main>\n"]
    if row["api_calls"] and row["usage"] and any(row["usage"].values()):
        parts.append(f"<script>{SCRIPT}</script>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def _band(value: float | None) -> str:
    items = []
    for index, (limit, name, words) in enumerate(READINGS):
        low = READINGS[index - 1][0] if index else 0.0
        on = value is not None and low <= value < limit
        items.append(f'<li class="{"on" if on else ""}">{_t(name)}: {_t(words)}</li>')
    return f'<ul class="band">{"".join(items)}</ul>'


def _header(data: SessionData) -> str:
    row = data.row
    crumbs = []
    if data.index_href:
        crumbs.append(f'<a href="{_t(data.index_href)}">All sessions</a>')
    if data.parent:
        name = _t(data.parent.row["id"])
        link = f'<a href="{_t(data.parent.href)}">{name}</a>' if data.parent.href else f"<code>{name}</code>"
        crumbs.append(f"Subagent of {link}")
    agent = AGENTS.get(row["agent"], row["agent"])
    models = Counter(call.get("model") for call in data.calls if call.get("model"))
    model_text = ", ".join(f"<code>{_t(m)}</code> ({c:,} call{'s' * (c != 1)})" for m, c in models.most_common())
    if not model_text:
        model_text = ", ".join(f"<code>{_t(m)}</code>" for m in row.get("models") or []) or "not recorded"
    tokenizer = _t(row["tokenizer"]) + (f" \u2014 {_t(data.tokenizer_note)}" if data.tokenizer_note else "")
    problems = "; ".join(f"{_t(kind)}: {count:,}" for kind, count in sorted(data.problems.items()))
    share = row["exploration_share_of_context"]
    calibration = _data("row-recorded_over_billed", row["recorded_over_billed"], _pct(row["recorded_over_billed"]))
    compactions = _data("row-compactions", row["compactions"], str(row["compactions"]))
    trims = _data("row-trimmed_messages", row["trimmed_messages"], str(row["trimmed_messages"]))
    facts = [
        ("Agent and source", f"{_t(agent)} \u00b7 {_t(row['source'])}"),
        ("Models", model_text),
        ("Started", f"{_when(row['started_at'])}; last activity {_when(row['last_activity'])}"),
        ("Tokenizer", tokenizer),
        ("Calibration", f"{calibration} of the billed prompt is accounted for by the modelled context (recorded "
                        "messages plus system overhead)"),
        ("Compactions and trims", f"{compactions} compaction(s); {trims} tool result(s) cleared by the agent"),
        ("Read from", f"<code>{_t(data.origin)}</code>" if data.origin else "not recorded"),
    ]
    if problems:
        facts.append(("Problems", problems))
    tiles = [
        ("main", _data("row-exploration_share_of_context", share, _pct(share)), "exploration share of the context"),
        ("", _data("row-exploration_share_of_prompt", row["exploration_share_of_prompt"],
                   _pct(row["exploration_share_of_prompt"])), "exploration share of the billed prompt"),
        ("", _data("row-reread_share_of_context", row.get("reread_share_of_context"),
                   _pct(row.get("reread_share_of_context"))), "re-sent reads (after compactions), of the context"),
        ("", _data("row-api_calls", row["api_calls"], f"{row['api_calls']:,}"), "API calls"),
        ("", _data("row-prompt_tokens_billed", row["prompt_tokens_billed"], _n(row["prompt_tokens_billed"])),
         "prompt tokens billed"),
        ("", _data("row-context_tokens", row["context_tokens"], _n(row["context_tokens"])),
         "context tokens (modelled)"),
        ("", _t(_span(row["started_at"], row["last_activity"])), "duration"),
    ]
    dot = " \u00b7 "
    return "".join([
        f'<p class="crumbs">{dot.join(crumbs)}</p>\n' if crumbs else "",
        "<h1>Where this session\u2019s prompt tokens went</h1>\n",
        f'<p class="sub">Session <code>{_t(row["id"])}</code></p>\n',
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
                   f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{_k(tick)}</text>')
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
                   f'{rebuild.call + 1:,}: {_t(rebuild.cause)}, {rebuild.rewritten:,} tokens re-written</title></path>')
    for column, values in enumerate(stacks):
        first, last = column * per + 1, min(total, (column + 1) * per)
        name = f"Call {first:,}" if first == last else f"Calls {first:,}\u2013{last:,} (mean)"
        parts = "; ".join(f"{LABELS[c]} {_n(v)}" for c, v in zip(STACK, values, strict=True) if v >= 0.5)
        out.append(f'<rect class="hit" x="{left + column * cw:.1f}" y="{top}" width="{cw:.2f}" height="{height}">'
                   f'<title>{name}: billed {_n(billed[column])}; {parts}</title></rect>')
    for index in sorted({0, columns // 4, columns // 2, 3 * columns // 4, columns - 1}):
        call = total if index == columns - 1 else index * per + 1  # the axis ends at the last call
        out.append(f'<text x="{left + (index + 0.5) * cw:.1f}" y="302" text-anchor="middle">{call:,}</text>')
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
        if unwritten:  # in the row's figures above, from Claude Code's own totals; no call of its own to draw
            spread += (f" The session was also billed for {unwritten:,} call(s) its transcript does not record "
                       "(compactions, from Claude Code’s own usage totals): they are in the figures above and "
                       "in the composition below, not drawn here.")
        legend = "".join(f"<li>{_swatch(c)}{LABELS[c]}</li>" for c in STACK)
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
        first_cell = _data(f"first-{category}", first, _n(first)) if category != "overhead" else "\u2014"
        lines.append(f'<tr><td class="nowrap">{_swatch(category)}{LABELS[category]}</td>'
                     f'<td class="n">{_data(f"billed-{category}", billed, _n(billed))}</td>'
                     f'<td class="n">{_share(billed, context)}</td><td class="n">{first_cell}</td>'
                     f'<td class="note hide-s">{ABOUT[category]}</td></tr>')
    out.append(
        '<h3>Billed tokens by category</h3><div class="scroll"><table><thead><tr><th>Category</th>'
        '<th class="n">Billed tokens</th><th class="n">Share of context</th><th class="n">First time</th>'
        f'<th class="hide-s">What it holds</th></tr></thead><tbody>{"".join(lines)}'
        f'<tr class="total"><td>Context</td><td class="n">{_n(context)}</td><td class="n">100%</td><td></td>'
        '<td class="hide-s"></td></tr></tbody></table></div>\n<p class="note">Billed tokens of a category: the '
        "sum over API calls of its tokens present in that call\u2019s context. First time: the same content "
        "counted once.</p></section>\n")
    return "".join(out)


def _exploration(data: SessionData) -> str:
    row = data.row
    billed = row["billed_tokens"].get("exploration", 0)
    costs = exploration_costs(data)
    out = ['<section id="exploration"><h2>What exploration cost</h2>\n',
           f"<p>Billed exploration: <b>{_n(billed)}</b> tokens, {_pct(row['exploration_share_of_context'])} of the "
           "context. A tool result\u2019s billed tokens are its size times the number of calls that carried it: "
           "it is a subscription, re-sent on every later call until a compaction or a trim drops it, so a read "
           "early in a long session costs far more than the same read near its end.</p>\n"]
    if not costs["results"]:
        out.append("<p>No exploration tool result was recorded in this session.</p></section>\n")
        return "".join(out)
    lines = []
    for rank, result in enumerate(costs["top"], 1):
        # calls are numbered from 1 on the page; a result added at index a and removed at r rode a+1..r
        lines.append(f'<tr><td class="n">{rank}</td><td>{_t(result.tool, 60)}</td>'
                     f"<td>{_cut(result.target) if result.target else ''}</td>"
                     f'<td class="n">{_n(result.tokens)}</td><td class="n">{result.calls:,}</td>'
                     f'<td class="n">{_n(result.billed)}</td><td class="n">{_share(result.billed, billed)}</td>'
                     f'<td class="n hide-s">{result.added + 1:,}\u2013{result.removed:,}</td></tr>')
    out.append(
        f"<h3>The {len(costs['top'])} costliest of {costs['results']:,} exploration results</h3>"
        '<div class="scroll"><table><thead><tr><th class="n">#</th><th>Tool</th><th>Command or path</th>'
        '<th class="n">Size</th><th class="n">Calls carried</th><th class="n">Billed tokens</th>'
        '<th class="n">Of exploration</th><th class="n hide-s">On calls</th></tr></thead>'
        f'<tbody>{"".join(lines)}</tbody></table></div>\n')
    tools = "".join(f'<tr><td>{_t(tool, 60)}</td><td class="n">{count:,}</td><td class="n">{_n(size)}</td>'
                    f'<td class="n">{_n(cost)}</td><td class="n">{_share(cost, billed)}</td></tr>'
                    for tool, (count, size, cost) in costs["by_tool"][:12])
    out.append('<h3>By tool</h3><div class="scroll"><table><thead><tr><th>Tool</th><th class="n">Results</th>'
               '<th class="n">Size</th><th class="n">Billed tokens</th><th class="n">Of exploration</th></tr>'
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
                   f'<td class="n">{_data(f"rm-{key}", costs[key], _n(costs[key]))}</td><td class="n">'
                   f'{_data(f"rm-{key}-share", costs[key] / billed if billed else None, _share(costs[key], billed))}'
                   "</td></tr>" for key, name, how in removed)
    out.append(
        "<h3>What a summary or a narrower read would have removed</h3>"
        f'<div class="scroll"><table><thead><tr><th>If the agent had used</th><th class="n">Tokens removed</th>'
        f'<th class="n">Share of billed exploration</th></tr></thead><tbody>{rows}</tbody></table></div>\n'
        "<p class=\"note\">Shares are of all billed exploration. They are upper bounds: they assume the agent "
        "needed nothing of a result beyond what the summary or the narrower read kept. The exploration results "
        f"above account for {_n(costs['carried'])} billed tokens; the other {_n(rest)} are the calls\u2019 own "
        "arguments (paths, patterns, commands) and results without a tool id, which neither habit changes."
        "</p></section>\n")
    return "".join(out)


def _weights_form() -> str:
    fields = "".join(f'<label>{KINDS[k]}<input type="number" id="w-{k}" value="{w:g}" min="0" step="0.05"></label>'
                     for k, w in WEIGHTS.items())
    return f'<div class="weights">{fields}<button type="button" id="w-reset">Reset</button></div>\n'


def _cache(data: SessionData, rebuilds: list, cards: list, skipped: int) -> str:
    usage = data.row.get("usage") or {}
    out = ['<section id="cache"><h2>Cache economics</h2>\n']
    if not data.calls:
        return out[0] + "<p>This session made no API call (say, it only ran a local command).</p></section>\n"
    if not any(usage.values()):
        out.append(_na("usage", "No token usage by kind was recorded for this session.") + "</section>\n")
        return "".join(out)
    volume = sum(usage.get(k, 0) for k in WEIGHTS)
    weight = sum(usage.get(k, 0) * w for k, w in WEIGHTS.items())
    out.append("<p>The provider reports four kinds of token; they are not remotely equal in weight. Weights are "
               "multiples of fresh input (the usual list-price ratios; token counts only, no prices). Change them "
               "and every weighted figure on this page follows.</p>\n" + _weights_form())
    lines = "".join(
        f'<tr data-kind="{k}" data-tokens="{usage.get(k, 0)}"><td>{KINDS[k]}</td>'
        f'<td class="n">{_data(f"usage-{k}", usage.get(k, 0), _n(usage.get(k, 0)))}</td>'
        f'<td class="n">{_share(usage.get(k, 0), volume)}</td><td class="n">{w:g}</td>'
        f'<td class="n wt">{_n(usage.get(k, 0) * w)}</td>'
        f'<td class="n ws">{_share(usage.get(k, 0) * w, weight)}</td></tr>'
        for k, w in WEIGHTS.items())
    out.append('<div class="scroll"><table><thead><tr><th>Kind</th><th class="n">Tokens</th><th class="n">By volume'
               '</th><th class="n">Default weight</th><th class="n">Weighted</th><th class="n">By weight</th></tr>'
               f'</thead><tbody>{lines}<tr class="total"><td>All</td><td class="n">{_n(volume)}</td>'
               f'<td class="n">100%</td><td></td><td class="n wtot">{_n(weight)}</td><td class="n">100%</td></tr>'
               "</tbody></table></div>\n")
    if not data.per_call_usage:
        why = "This agent records token counts per session, not per API call, so "
        out.append(_na("rebuilds", why + "cache rebuilds cannot be found and their causes cannot be named."))
        out.append(_na("compactions", why + "what each compaction cost and saved cannot be computed."))
        out.append(_na("compaction-now", why + "what a compaction now would save cannot be computed."))
        return "".join(out) + "</section>\n"
    out.append(_rebuilds(data, rebuilds, usage))
    out.append(_compactions(data, cards, skipped))
    return "".join(out) + "</section>\n"


def _rebuilds(data: SessionData, rebuilds: list, usage: dict) -> str:
    out = ["<h3>Cache rebuilds</h3>\n"]
    if not usage.get("cache_read") and not (usage.get("cache_write_5m") or usage.get("cache_write_1h")):
        return out[0] + ("<p>No cache read or write was recorded: this provider (or gateway) did not report prompt "
                         "caching, so there is no rebuild to find.</p>\n")
    out.append(
        "<p>A rebuild is found in the data: a call\u2019s cache read falls at least "
        f"{MIN_REBUILD:,} tokens and {MIN_REBUILD_SHARE:.0%} below what the previous call of the same conversation "
        f"left cached (that call\u2019s cache read plus its cache write) while it writes at least {MIN_REBUILD:,} "
        "tokens (a smaller drop is a call made in parallel with the previous one). Re-written: the smaller "
        "of its write and that drop, the tokens that were cached and had to be written again; its extra weight is "
        "what writing them cost beyond reading them. The cause is the first that applies: a compaction (or "
        "microcompaction) since the previous call; a model switch; a gap longer than the cache lifetime (5 minutes,"
        " or 1 hour when the session writes 1-hour entries); a prompt typed in between (a turn boundary: a change "
        "low in the stack); else other. A session\u2019s first call fills a cold cache and is not a rebuild.</p>\n")
    if not rebuilds:
        return "".join(out) + "<p>No rebuild found.</p>\n"
    summary = []
    for cause in (*CAUSES, "all"):
        group = [r for r in rebuilds if r.cause == cause or cause == "all"]
        if not group:
            continue
        five = sum(r.rewritten - r.rewritten_1h for r in group)
        hour = sum(r.rewritten_1h for r in group)
        extra = sum(rebuild_weight(r) for r in group)
        count = _data("rebuilds-" + cause.replace(" ", "-"), len(group), f"{len(group):,}")
        summary.append(f'<tr class="{"total" if cause == "all" else ""}" data-re5="{five}" data-re1h="{hour}">'
                       f'<td>{cause}</td><td class="n">{count}</td><td class="n">{_n(five + hour)}</td>'
                       f'<td class="n x">{_n(extra)}</td></tr>')
    out.append('<div class="scroll"><table><thead><tr><th>Cause</th><th class="n">Rebuilds</th><th class="n">'
               'Re-written tokens</th><th class="n">Extra weight</th></tr></thead>'
               f'<tbody>{"".join(summary)}</tbody></table></div>\n')
    shown = rebuilds
    if len(rebuilds) > MAX_REBUILD_ROWS:
        shown = sorted(sorted(rebuilds, key=lambda r: -r.rewritten)[:MAX_REBUILD_ROWS], key=lambda r: r.call)
        out.append(f'<p class="note">The {MAX_REBUILD_ROWS} largest of {len(rebuilds):,} rebuilds; the table above '
                   "counts them all.</p>")
    lines = "".join(
        f'<tr data-re5="{r.rewritten - r.rewritten_1h}" data-re1h="{r.rewritten_1h}"><td class="n">{r.call + 1:,}</td>'
        f'<td class="hide-s">{_when(r.time)}</td><td><b>{r.cause}</b>'
        f'{"<br><span class=note>also: " + ", ".join(r.also) + "</span>" if r.also else ""}</td>'
        f'<td>{_t(r.detail, 200)}</td><td class="n">{_n(r.expected)}</td><td class="n">{_n(r.read)}</td>'
        f'<td class="n">{_n(r.written)}</td><td class="n">{_n(r.rewritten)}</td><td class="n x">{_n(rebuild_weight(r))}'
        "</td></tr>" for r in shown)
    out.append('<div class="scroll"><table><thead><tr><th class="n">Call</th><th class="hide-s">Time</th><th>Cause'
               '</th><th>Detail</th><th class="n">Cached before</th><th class="n">Read (floor)</th><th class="n">'
               'Written</th><th class="n">Re-written</th><th class="n">Extra weight</th></tr></thead>'
               f"<tbody>{lines}</tbody></table></div>\n")
    return "".join(out)


def _card(title: str, attrs: str, rows: list[tuple[str, str]], note: str = "") -> str:
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    note = f'<p class="note">{note}</p>' if note else ""
    return f'<article class="card" {attrs}><h3>{title}</h3><dl>{body}</dl>{note}</article>'


def _compactions(data: SessionData, cards: list, skipped: int) -> str:
    out = ["<h3>Compactions</h3>\n"]
    if cards:
        out.append(
            "<p>A compaction is an investment with a payback period counted in calls. Write cost: what the first "
            "call after it wrote to the cache, weighted. Saving per later call: the drop in the billed prompt from "
            "the call before it to the call after it, read from the cache on every later call. Calls to break even:"
            " write cost \u00f7 saving, rounded up. It paid off when at least that many calls followed before the "
            "next compaction or the end. (The summarising call itself is billed in the compaction agent\u2019s own "
            "file, listed under subagents when it has one.)</p>\n")
    elif not skipped:
        out.append("<p>No compaction in this session.</p>\n")
    if skipped:
        out.append(f'<p class="note">{skipped} compaction(s) had no API call before or after them in this file, so '
                   "their cost and saving cannot be measured.</p>\n")
    html_cards = []
    for card in cards:
        money = compaction_economics(card)
        even = money["break_even"]
        paid = money["paid_off"]
        verdict = ("no saving", "") if paid is None else ("paid off", "good") if paid else ("not paid off", "bad")
        attrs = (f'data-w5="{card.write_5m}" data-w1h="{card.write_1h}" data-saved="{card.before - card.after}" '
                 f'data-followed="{card.followed}"')
        html_cards.append(_card(f"Compaction {card.number} <small>before call {card.at + 1:,}</small>", attrs, [
            ("Prompt before \u2192 after", f"{_n(card.before)} \u2192 {_n(card.after)}"),
            ("Tokens fewer per later call", _n(card.before - card.after)),
            ("Tokens written after it", _n(card.write_5m + card.write_1h)),
            ("Write cost (weighted)", f'<span class="cost">{_n(money["cost"])}</span>'),
            ("Saving per later call (weighted)", f'<span class="save">{_n(money["saving"])}</span>'),
            ("Calls to break even", f'<span class="be">{_n(even) if even is not None else "never"}</span>'),
            ("Calls that followed", _data(f"compaction-{card.number}-followed", card.followed, f"{card.followed:,}")),
            ("Verdict", f'<span class="paid {verdict[1]}">{verdict[0]}</span>'),
        ], _when(card.time)))
    now = compaction_now(data, cards)
    if now:
        card, basis = now
        basis = ("the first call after this session\u2019s latest compaction measured what one leaves (system "
                 "overhead and summary)" if basis == "measured" else
                 "this session had no compaction, so the summary is taken to be as large as the conversation "
                 "text present at the last call (what a summary condenses): the saving is a floor")
        money, fewer = compaction_economics(card), card.before - card.after
        even = money["break_even"]
        attrs = f'data-w5="{card.write_5m}" data-w1h="{card.write_1h}" data-saved="{fewer}" id="now"'
        html_cards.append(_card("A compaction now <small>after the last call</small>", attrs, [
            ("Prompt now \u2192 after", f"{_n(card.before)} \u2192 {_n(card.after)}"),
            ("Tokens fewer per remaining call", _data("now-saving", fewer, _n(fewer))),
            ("One-off write cost (weighted)", f'<span class="cost">{_n(money["cost"])}</span>'),
            ("Saving per remaining call (weighted)", f'<span class="save">{_n(money["saving"])}</span>'),
            ("Worth it after (calls)", f'<span class="be">{_n(even) if even is not None else "never"}</span>'),
            ("Suggested now", _suggested(nudge_now(data, cards, card), len(data.calls) - (cards[-1].at if cards
                                                                                        else 0))),
        ], "Basis: " + basis))
    if html_cards:
        out.append(f'<div class="cards">{"".join(html_cards)}</div>\n')
    return "".join(out)


def _suggested(nudge: dict | None, since: int) -> str:
    """The status line's /compact nudge, in words: the same rule (economics.compaction_nudge)."""
    if nudge is None:
        return f"no: it would not pay back within the ~{since:,} calls this session is likely to still make"
    return f"yes: pays back in {nudge['break_even']:,} of the ~{nudge['remaining']:,} calls likely left"


def _sessions(entries: list[Linked], first: str, nested: bool) -> str:
    """A table of sessions (the index; a page's subagents), each linked to its page. `nested`: a subagent
    follows its parent, indented; otherwise every row is a subagent, named by its agent file."""
    ids = {entry.row["id"] for entry in entries} if nested else set()
    children: dict[str, list[Linked]] = {}
    for entry in entries:
        if entry.row.get("parent") in ids:
            children.setdefault(entry.row["parent"], []).append(entry)

    def line(entry: Linked, child: bool) -> str:
        row = entry.row
        name = _t(row["id"].rpartition("/")[2] if child else row["id"])
        link = f'<a href="{_t(entry.href)}">{name}</a>' if entry.href else name
        return (f'<tr class="{"child" if child and nested else ""}" data-session="{_t(row["id"])}"><td><code>'
                f'{link}</code></td><td class="nowrap">{_t(AGENTS.get(row["agent"], row["agent"]))} \u00b7 '
                f'{_t(row["source"])}</td><td class="hide-s"><code>{_t(row.get("model") or "")}</code></td>'
                f'<td class="hide-s nowrap">{_when(row.get("started_at"))}</td>'
                f'<td class="hide-s">{_span(row.get("started_at"), row.get("last_activity"))}</td>'
                f'<td class="n">{row["api_calls"]:,}</td><td class="n">{_n(row["prompt_tokens_billed"])}</td>'
                f'<td class="n">{_pct(row["exploration_share_of_context"])}</td>'
                f'<td class="n">{_pct(row["exploration_share_of_prompt"])}</td></tr>')

    lines = []
    for entry in entries:
        if entry.row.get("parent") not in ids:
            lines.append(line(entry, not nested))
            lines.extend(line(child, True) for child in children.get(entry.row["id"], []))
    return (f'<div class="scroll"><table><thead><tr><th>{first}</th><th>Agent \u00b7 source</th><th class="hide-s">'
            'Model</th><th class="hide-s">Started</th><th class="hide-s">Duration</th><th class="n">API calls</th>'
            '<th class="n">Prompt billed</th><th class="n">Exploration of context</th><th class="n">of billed prompt'
            f'</th></tr></thead><tbody>{"".join(lines)}</tbody></table></div>\n')


def _subagents(data: SessionData) -> str:
    if not data.subagents:
        return ('<section id="subagents"><h2>Subagents</h2>\n<p>No subagent transcript belongs to this session.</p>'
                "</section>\n")
    return ('<section id="subagents"><h2>Subagents</h2>\n<p>Each subagent starts with its own, empty context and is '
            "billed in its own file, so its tokens are not in this page\u2019s totals. Internal agents are Claude "
            "Code\u2019s own helpers (compaction, side questions) replaying this session\u2019s context.</p>"
            f"{_sessions(data.subagents, 'Subagent', nested=False)}</section>\n")


def _footer(data: SessionData) -> str:
    return (f"<footer><p>Made by xshare {_t(__version__)} (method {_t(data.row.get('method', ''))}). One file: no "
            "script, style or image is loaded from anywhere, and nothing leaves this page. Figures are token counts"
            f" from the session\u2019s own records, equal to <code>xshare session {_t(data.row['id'])} --json</code>"
            ".</p></footer>\n")


# --- the index -----------------------------------------------------------------------------------


def render_index(entries: list[Linked], tokenizer: TokenizerChoice, chart: str = "") -> str:
    """Every session with its share, size and date, each linked to its page; subagents under their parent."""
    ids = {entry.row["id"] for entry in entries}
    top = sum(1 for entry in entries if entry.row.get("parent") not in ids)
    note = f" ({_t(tokenizer.note)})" if tokenizer.note else ""
    return "".join([
        _head("xshare \u00b7 sessions"), "<body>\n<main>\n<h1>Sessions: where the prompt tokens went</h1>\n",
        f'<p class="sub">{top:,} session(s) and {len(entries) - top:,} subagent transcript(s), newest first. '
        f"Tokenizer: {_t(tokenizer.name)}{note}.</p>\n", chart, _sessions(entries, "Session", nested=True),
        f"<footer><p>Made by xshare {_t(__version__)}. Each page is one file; nothing is loaded from anywhere."
        "</p></footer>\n</main>\n</body>\n</html>\n",
    ])
