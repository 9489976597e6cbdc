"""`xshare advice`: over the window, one line per habit of the cache-rebuild essay with what it cost by weight,
its share of the weighted bill, and what the change would have saved, on the assumption the line states.

Each cache rebuild counts once, in the line of its likely cause (html/habits.py CAUSE_RULE, printed in the notes:
a compaction of its own thread, a model switch, a gap over an hour or over 5 minutes, a prompt, else none).

The figures need each session's calls, which the report's rows do not keep: html/habit_store.py reads the
window's sessions again in detail (a summary of each cached). Stdout carries aggregates and tool names only;
the costliest results name the session they are in (a short id, as `xshare sessions` shows), never a path.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from xshare.commands.common import looking, price_table, print_json, say
from xshare.printing import output_width, pct, printable_lines, table, wrap


def cmd_advice(args: argparse.Namespace) -> int:
    from xshare.commands.report import sessions_in_window
    from xshare.html.habit_store import habit_summaries
    from xshare.html.habits import pool
    from xshare.measure.ids import short_ids
    from xshare.measure.prices import PriceError

    try:  # a bad --prices file is refused before anything is read
        per_weight, price, price_table = _dollars(args)
    except PriceError as error:
        say(str(error))
        return 2
    found = sessions_in_window(args, "advice")
    if found is None:
        return 2
    window, measured, rows = found
    # the same files the report pass just read, by the same reader: their problems were said already
    again = looking(args, measured.tokenizer, window.since, warn=False)
    summaries = habit_summaries(again, {row["id"] for row in rows}, Counter())
    missing = len(rows) - len(summaries)
    if missing:
        say(f"{missing:,} session(s) in the window could not be read again in detail; advice leaves them out")
    pooled = pool(summaries, per_weight, price)
    if price_table is not None:
        pooled["dollars"] = {"prices": price_table.to_json(), "described": price_table.describe(),
                             "assumption": DOLLARS_RULE}
    short = short_ids(summary["id"] for summary in summaries)
    for entry in pooled["costliest_results"]:
        entry["session"] = short.get(entry["session"], entry["session"])
    for line in pooled["habits"] + pooled["cost_nothing"]:
        line["sessions_behind"] = [short.get(session, session) for session in line["sessions_behind"]]
    pooled["window"] = window.describe()
    if args.json:
        print_json(pooled)
    else:
        sys.stdout.write(advice_text(pooled, output_width()))
    return 0


# --- text ------------------------------------------------------------------------------------------


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def _weight(value: float) -> str:
    return f"{value:,.0f}"


DOLLARS_RULE = ("a rebuild's tokens at the list prices of the model of the call that rebuilt (what it paid again, "
                "less the cache read it would otherwise have been); another habit's weighted tokens at the list "
                "price of fresh input for the session's model (the weights are Anthropic's ratios of its cache and "
                "output prices to fresh input's)")


def _dollars(args: argparse.Namespace):
    """A session's dollars per weighted token, a usage's dollars at a model, and the price table; all None
    with dollars off."""
    from xshare.measure import prices

    table = price_table(args)
    if table is None:
        return None, None, None

    def per_weight(summary: dict) -> float | None:
        rates = table.rates(summary.get("model"))
        return rates["input"] * prices.PER_TOKEN if rates else None

    def price(model: str | None, usage: dict) -> float | None:
        return prices.price_usage(model, usage, table)

    return per_weight, price, table


def money_cell(line: dict) -> str | None:
    """The dollars beside a habit's weight, where the price table knows the models."""
    if "cost_dollars" not in line:
        return None
    text = f"${line['cost_dollars']:,.2f} at list price"
    for key, noun in (("sessions_unpriced", "session(s)"), ("events_unpriced", line["events_are"])):
        if line.get(key):
            text += f", {line[key]:,} {noun} not priced (a model with no list price)"
    return text


def advice_text(pooled: dict, width: int | None) -> str:
    dollars = pooled.get("dollars")
    out = wrap(f"Habits over {pooled['sessions']:,} session(s) ({_lower(pooled['window'])}): weighted bill "
               f"{_weight(pooled['weighted_bill'])} weighted tokens (tokens weighed as fresh input 1, cache read 0.1, "
               "cache write 1.25 (5 min) or 2 (1 h), output 5). Savings overlap (exploration and subagent count the "
               "same reads); do not add them up."
               + (f" Dollars: {dollars['described']}, {dollars['assumption']}." if dollars else ""), width) + [""]
    out += wrap(_rebuilds_text(pooled["rebuilds"]), width) + [""]
    for number, line in enumerate(pooled["habits"], 1):
        money = money_cell(line)
        head = (f"{number}. {line['what']}: {line['events']:,} {line['events_are']} over {line['sessions_measured']:,} "
                f"session(s) measured, cost {_weight(line['cost_weight'])} weighted tokens "
                f"({pct(line['share_of_weighted_bill'])} of the weighted bill{', ' + money if money else ''}). "
                f"{line['change'][0].upper() + line['change'][1:]} would have saved {_weight(line['saving_weight'])} "
                f"({pct(line['saving_share_of_weighted_bill'])}{_saved_dollars(line)}), assuming {line['assumption']}."
                + _instead(line) + _behind(line))
        out += wrap(head, width, "   ")
        out += [*_unknown(line, width)]
    if pooled["costliest_results"]:
        out += ["", "The costliest exploration results (size x calls that carried them):"]
        rows = [(entry["tool"], f"{entry['tokens']:,}", f"{entry['calls_carried']:,}",
                 f"{entry['carried_tokens']:,}", entry["session"]) for entry in pooled["costliest_results"]]
        out += table(("tool", "tokens", "calls carried", "tokens carried", "session"), rows, width)
    out += _nothing_and_unknown(pooled["cost_nothing"], width)
    return printable_lines("\n".join(out)) + "\n"


def _nothing_and_unknown(lines: list[dict], width: int | None) -> list[str]:
    """The habits that cost nothing, and those that cost nothing where measured but are unknown elsewhere or
    everywhere: a habit some sessions cannot show is not said to cost nothing."""
    nothing = [line["habit"] for line in lines if line["sessions_measured"] and not _unknown_count(line)]
    unknown = [f"{line['habit']} (unknown for {_unknown_count(line):,} session(s), nothing where measured)"
               for line in lines if line["sessions_measured"] and _unknown_count(line)]
    unknown += [f"{line['habit']} (no session's records can show it)" for line in lines
                if not line["sessions_measured"]]
    out = [""] + wrap("Cost nothing in the window: " + ", ".join(nothing) + ".", width, "   ") if nothing else []
    if unknown:
        out += ([] if nothing else [""]) + wrap("Unknown (not 0): " + "; ".join(unknown) + ".", width, "   ")
    return out


def _rebuilds_text(rebuilds: dict) -> str:
    """How many rebuilds, by the line (or cause) each is counted in once, and the rule that decides it."""
    named = {"compaction": "after a compaction (the compaction lines count its cost)",
             "other": "with no cause the records show"}
    parts = [f"{named.get(cause, cause)} {count:,}" for cause, count in sorted(rebuilds["by_cause"].items(),
                                                                               key=lambda item: -item[1])]
    return (f"Cache rebuilds: {rebuilds['total']:,}" + (": " + ", ".join(parts) if parts else "") + f". Note: "
            f"{rebuilds['rule']}.")


def _saved_dollars(line: dict) -> str:
    return f", ${line['saving_dollars']:,.2f}" if "saving_dollars" in line else ""


def _instead(line: dict) -> str:
    if "fresh_weight" not in line:
        return ""
    return (f" Re-writing the context cost {_weight(line['rewrite_weight'])} weighted tokens; a fresh session would "
            f"have written {_weight(line['fresh_weight'])}.")


def _behind(line: dict) -> str:
    if not line["sessions_behind"]:
        return ""
    return " Costliest in session(s) " + ", ".join(line["sessions_behind"]) + " (xshare html ID opens one)."


def _unknown_count(line: dict) -> int:
    return sum(sum(agents.values()) for agents in line["sessions_unknown"].values())


def _unknown(line: dict, width: int | None) -> list[str]:
    if not line["sessions_unknown"]:
        return []
    parts = [f"{sum(agents.values()):,} session(s) whose records {why} ("
             + ", ".join(f"{agent} {count:,}" for agent, count in sorted(agents.items())) + ")"
             for why, agents in sorted(line["sessions_unknown"].items())]
    return wrap("   unknown (not 0) for " + "; ".join(parts), width, "   ")
