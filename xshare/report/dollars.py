"""The report's dollars: each session's recorded usage at its model's list price, and the exploration
share of that bill in dollars. Sums only, as rows come, so stdout stays aggregate.

A session's exploration dollars are its exploration tokens of the billed prompt priced at the mix of fresh
input, cache reads and cache writes its own usage shows (the prompt side's dollars times exploration's share
of the billed prompt). A session whose records name several models is priced at the first: its usage is one
sum the records do not split by model.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from xshare.measure.ledger import bill_short
from xshare.measure.prices import PROMPT_KEYS, PriceTable, cost
from xshare.text import printable, wrap

ASSUMPTION = ("exploration's dollars are its share of each session's billed prompt, priced at the mix of fresh "
              "input, cache reads and cache writes that session was billed; output is not exploration")
UNKNOWN_MODEL = "no model recorded"
NANO = 1_000_000_000


def money(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else "under $0.01"


class DollarSums:
    """Dollars per model and agent, the exploration part, and the sessions left unpriced and why."""

    def __init__(self, table: PriceTable) -> None:
        self.table = table
        # whole nano-dollars: integer sums come out the same in any order rows arrive (cached or read fresh)
        self.total = self.prompt = self.exploration = self.covered_prompt = 0
        self.priced = self.several_models = self.exploration_unknown = self.no_usage = self.no_calls = 0
        self.by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # sessions, dollars
        self.by_agent: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # sessions, dollars, exploration
        self.unpriced: Counter = Counter()  # model as recorded -> sessions

    def add(self, row: dict) -> None:
        usage = row.get("usage")
        recorded = isinstance(usage, dict) and any(usage.values())
        if not row.get("usage_unknown") and not row.get("api_calls") and not recorded:
            self.no_calls += 1  # a session that made no call cost nothing: nothing to price, nothing unknown
            return
        if row.get("usage_unknown") or not recorded:
            self.no_usage += 1
            return
        name = self.table.name_for(row.get("model"))
        if name is None:
            self.unpriced[row.get("model") or UNKNOWN_MODEL] += 1
            return
        rates = self.table.models[name]
        dollars, prompt = _nano(cost(rates, usage)), _nano(cost(rates, usage, PROMPT_KEYS))
        self.priced += 1
        self.total += dollars
        self.prompt += prompt
        self.several_models += len(set(row.get("models") or ())) > 1
        self.by_model[name][0] += 1
        self.by_model[name][1] += dollars
        agent = self.by_agent[row.get("agent") or "unknown"]
        agent[0] += 1
        agent[1] += dollars
        billed = row.get("prompt_tokens_billed") or 0
        if not billed or bill_short(row.get("context_tokens") or 0, billed):
            self.exploration_unknown += 1  # its share of the bill is unknown, so its dollars are too
            return
        share = min(1.0, row["billed_tokens"]["exploration"] / billed)
        exploration = _nano(prompt * share / NANO)
        self.covered_prompt += prompt
        self.exploration += exploration
        agent[2] += exploration

    @property
    def sessions(self) -> int:
        return self.priced + sum(self.unpriced.values()) + self.no_usage + self.no_calls

    def to_json(self) -> dict:
        share = self.exploration / self.covered_prompt if self.covered_prompt else None
        return {
            "currency": "USD",
            "prices": self.table.to_json(),
            "assumption": ASSUMPTION,
            "sessions_priced": self.priced,
            "sessions_unpriced": sum(self.unpriced.values()),
            "sessions_without_usage": self.no_usage,
            "sessions_without_calls": self.no_calls,
            "sessions_priced_at_first_of_several_models": self.several_models,
            "sessions_exploration_unknown": self.exploration_unknown,
            "dollars": _dollars(self.total),
            "prompt_dollars": _dollars(self.prompt),
            "exploration_dollars": _dollars(self.exploration),
            "exploration_share_of_prompt_dollars": share,
            "by_model": {name: {"sessions": s, "dollars": _dollars(d)}
                         for name, (s, d) in sorted(self.by_model.items(), key=lambda item: -item[1][1])},
            "by_agent": {name: {"sessions": s, "dollars": _dollars(d), "exploration_dollars": _dollars(e)}
                         for name, (s, d, e) in sorted(self.by_agent.items())},
            "models_unpriced": dict(self.unpriced.most_common()),
        }

    def lines(self, width: int | None) -> list[str]:
        """The header's words on dollars: what was priced, the exploration part, what was not and why."""
        if not self.priced:
            lines = [f"In dollars ({self.table.describe()}): unknown, no session's model has a list price."]
        else:
            share = self.exploration / self.covered_prompt if self.covered_prompt else None
            part = (f"of which exploration {money(self.exploration / NANO)} ({share:.1%} of the "
                    f"{money(self.covered_prompt / NANO)} "
                    f"the prompts cost)" if share is not None else "exploration's part unknown")
            total = money(self.total / NANO)
            lines = [f"In dollars ({self.table.describe()}): {total} for {_sessions(self.priced)}, {part}.",
                     f"Assumed: {ASSUMPTION}."]
            if self.several_models:
                lines.append(f"{_sessions(self.several_models)} that used several models priced at the first "
                             "(their usage is one sum).")
            if self.exploration_unknown and share is not None:
                lines.append(f"{_sessions(self.exploration_unknown)} whose bill is short of their records: in the "
                             "dollars, not in exploration's part.")
        if self.unpriced:
            named = ", ".join(f"{printable(str(model))}: {count:,}" for model, count in self.unpriced.most_common(6))
            more = len(self.unpriced) - 6
            lines.append(f"Not priced, no list price known: {_sessions(sum(self.unpriced.values()))} ({named}"
                         f"{f' and {more} more models' if more > 0 else ''}).")
        if self.no_usage:
            lines.append(f"Not priced, no token usage recorded: {_sessions(self.no_usage)}.")
        return [part for line in lines for part in wrap(line, width, "  ")]


def _nano(dollars: float) -> int:
    return round(dollars * NANO)


def _dollars(nano: int) -> float:
    return round(nano / NANO, 4)


def _sessions(count: int) -> str:
    return f"{count:,} session{'s' if count != 1 else ''}"
