"""The session page's cache sections: the bill by kind with its weights, the cache rebuilds and their
causes, and the compactions with what each saved (and whether one now would pay)."""

from __future__ import annotations

from xshare.html.analysis import (
    CAUSES,
    MIN_REBUILD,
    MIN_REBUILD_SHARE,
    WEIGHTS,
    SessionData,
    compaction_economics,
    compaction_now,
    nudge_now,
    rebuild_weight,
)
from xshare.html.cells import KINDS, MAX_REBUILD_ROWS, datum, esc, not_available, num, share_of, when


def _weights_form() -> str:
    fields = "".join(f'<label>{KINDS[k]}<input type="number" id="w-{k}" value="{w:g}" min="0" step="0.05"></label>'
                     for k, w in WEIGHTS.items())
    return f'<div class="weights">{fields}<button type="button" id="w-reset">Reset</button></div>\n'


def cache_sections(data: SessionData, rebuilds: list, cards: list, skipped: int) -> str:
    usage = data.row.get("usage") or {}
    out = ['<section id="cache"><h2>Cache economics</h2>\n']
    if not data.calls:
        return out[0] + "<p>This session made no API call (say, it only ran a local command).</p></section>\n"
    if not any(usage.values()):
        out.append(not_available("usage", "No token usage by kind was recorded for this session.") + "</section>\n")
        return "".join(out)
    volume = sum(usage.get(k, 0) for k in WEIGHTS)
    weight = sum(usage.get(k, 0) * w for k, w in WEIGHTS.items())
    out.append("<p>The provider reports four kinds of token; they are not remotely equal in weight. Weights are "
               "multiples of fresh input (the usual list-price ratios: weighted tokens, not dollars). Change them "
               "and every weighted figure on this page follows.</p>\n" + _weights_form())
    lines = "".join(
        f'<tr data-kind="{k}" data-tokens="{usage.get(k, 0)}"><td>{KINDS[k]}</td>'
        f'<td class="n">{datum(f"usage-{k}", usage.get(k, 0), num(usage.get(k, 0)))}</td>'
        f'<td class="n hide-s">{share_of(usage.get(k, 0), volume)}</td><td class="n hide-s">{w:g}</td>'
        f'<td class="n wt">{num(usage.get(k, 0) * w)}</td>'
        f'<td class="n ws">{share_of(usage.get(k, 0) * w, weight)}</td></tr>'
        for k, w in WEIGHTS.items())
    # on a phone the volume share and the default weight (the form above says it) are left out
    out.append('<div class="scroll"><table><thead><tr><th>Kind</th><th class="n">Tokens</th><th class="n hide-s">By '
               'volume</th><th class="n hide-s">Default weight</th><th class="n">Weighted</th><th class="n">By '
               f'weight</th></tr></thead><tbody>{lines}<tr class="total"><td>All</td><td class="n">{num(volume)}</td>'
               f'<td class="n hide-s">100%</td><td class="hide-s"></td><td class="n wtot">{num(weight)}</td>'
               '<td class="n">100%</td></tr></tbody></table></div>\n')
    if not data.per_call_usage:
        why = "This agent records token counts per session, not per API call, so "
        out.append(not_available("rebuilds", why + "cache rebuilds cannot be found and their causes cannot be named."))
        out.append(not_available("compactions", why + "what each compaction cost and saved cannot be computed."))
        out.append(not_available("compaction-now", why + "what a compaction now would save cannot be computed."))
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
        "what writing them cost beyond reading them. Where the agent records no cache write (the provider caches "
        "a prompt by itself), what a call left cached is its whole prompt, and the tokens that fell out are "
        "re-sent as fresh input: their extra weight is fresh input\u2019s beyond a cache read. Each rebuild has "
        "one cause, the first that applies: a compaction (or microcompaction) since the previous call of its own "
        "conversation (an inline subagent\u2019s calls are theirs); a model switch; a gap over 5 minutes (idle, "
        "even where the session writes 1-hour entries: a rebuild after such a gap shows what it re-wrote had "
        "expired; `xshare advice` counts a gap over an hour as a long break); a prompt typed in between (a turn "
        "boundary: a change low in the stack); else other. A session\u2019s first call fills a cold cache and is "
        "not a rebuild.</p>\n")
    if not rebuilds:
        return "".join(out) + "<p>No rebuild found.</p>\n"
    summary = []
    for cause in (*CAUSES, "all"):
        group = [r for r in rebuilds if r.cause == cause or cause == "all"]
        if not group:
            continue
        five, hour, resent = _rewritten(group)
        extra = sum(rebuild_weight(r) for r in group)
        count = datum("rebuilds-" + cause.replace(" ", "-"), len(group), f"{len(group):,}")
        summary.append(f'<tr class="{"total" if cause == "all" else ""}" data-re5="{five}" data-re1h="{hour}" '
                       f'data-resent="{resent}"><td>{cause}</td><td class="n">{count}</td>'
                       f'<td class="n">{num(five + hour + resent)}</td><td class="n x">{num(extra)}</td></tr>')
    out.append('<div class="scroll"><table><thead><tr><th>Cause</th><th class="n">Rebuilds</th><th class="n">'
               'Re-written tokens</th><th class="n">Extra weight</th></tr></thead>'
               f'<tbody>{"".join(summary)}</tbody></table></div>\n')
    shown = rebuilds
    if len(rebuilds) > MAX_REBUILD_ROWS:
        shown = sorted(sorted(rebuilds, key=lambda r: -r.rewritten)[:MAX_REBUILD_ROWS], key=lambda r: r.call)
        out.append(f'<p class="note">The {MAX_REBUILD_ROWS} largest of {len(rebuilds):,} rebuilds; the table above '
                   "counts them all.</p>")
    lines = "".join(
        f'<tr data-re5="{_rewritten([r])[0]}" data-re1h="{r.rewritten_1h}" data-resent="{_rewritten([r])[2]}">'
        f'<td class="n">{r.call + 1:,}</td>'
        f'<td class="hide-m">{when(r.time)}</td><td><b>{r.cause}</b>'
        f'{"<br><span class=note>also: " + ", ".join(r.also) + "</span>" if r.also else ""}</td>'
        f'<td>{esc(r.detail, 200)}</td><td class="n hide-m">{num(r.expected)}</td>'
        f'<td class="n hide-m">{num(r.read)}</td><td class="n hide-s">{num(r.written)}</td>'
        f'<td class="n hide-s">{num(r.rewritten)}</td>'
        f'<td class="n x">{num(rebuild_weight(r))}</td></tr>' for r in shown)
    # on a phone: the call, its cause and what it cost (the table above sums the tokens by cause)
    out.append('<div class="scroll"><table><thead><tr><th class="n">Call</th><th class="hide-m">Time</th><th>Cause'
               '</th><th>Detail</th><th class="n hide-m">Cached before</th><th class="n hide-m">Read (floor)</th>'
               '<th class="n hide-s">Written</th><th class="n hide-s">Re-written</th><th class="n">Extra weight</th>'
               '</tr></thead>'
               f"<tbody>{lines}</tbody></table></div>\n")
    return "".join(out)


def _rewritten(rebuilds: list) -> tuple[int, int, int]:
    """Re-written tokens at the 5-minute and 1-hour write rates, and those re-sent as fresh input."""
    resent = sum(r.rewritten for r in rebuilds if r.resent)
    hour = sum(r.rewritten_1h for r in rebuilds)
    return sum(r.rewritten for r in rebuilds) - resent - hour, hour, resent


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
            ("Prompt before \u2192 after", f"{num(card.before)} \u2192 {num(card.after)}"),
            ("Tokens fewer per later call", num(card.before - card.after)),
            ("Tokens written after it", num(card.write_5m + card.write_1h)),
            ("Write cost (weighted)", f'<span class="cost">{num(money["cost"])}</span>'),
            ("Saving per later call (weighted)", f'<span class="save">{num(money["saving"])}</span>'),
            ("Calls to break even", f'<span class="be">{num(even) if even is not None else "never"}</span>'),
            ("Calls that followed", datum(f"compaction-{card.number}-followed", card.followed, f"{card.followed:,}")),
            ("Verdict", f'<span class="paid {verdict[1]}">{verdict[0]}</span>'),
        ], when(card.time)))
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
            ("Prompt now \u2192 after", f"{num(card.before)} \u2192 {num(card.after)}"),
            ("Tokens fewer per remaining call", datum("now-saving", fewer, num(fewer))),
            ("One-off write cost (weighted)", f'<span class="cost">{num(money["cost"])}</span>'),
            ("Saving per remaining call (weighted)", f'<span class="save">{num(money["saving"])}</span>'),
            ("Worth it after (calls)", f'<span class="be">{num(even) if even is not None else "never"}</span>'),
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
