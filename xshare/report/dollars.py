"""The report's dollars: each call of each session at its own model's list price (measure/prices.py
`row_cost`: the model and long-prompt band it was billed in), and the exploration share of that bill in
dollars. Sums only, as rows come, so stdout stays aggregate.

A session's exploration dollars are its exploration tokens of the billed prompt priced at the mix of fresh
input, cache reads and cache writes its own usage shows (the prompt side's dollars times exploration's share
of the billed prompt). A call whose model has no list price is counted as unpriced, never priced at another's.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from xshare.measure.ledger import bill_short
from xshare.measure.prices import NO_MODEL, NO_USAGE, OLD_ROW, PriceTable, RowCost, made_no_call, row_cost
from xshare.measure.row import SessionRow
from xshare.printing import printable, wrap

ASSUMPTION = ("exploration's dollars are its share of each session's billed prompt, priced at the mix of fresh "
              "input, cache reads and cache writes that session was billed; output is not exploration")
UNKNOWN_MODEL = NO_MODEL
NANO = 1_000_000_000


def exploration_dollars(row: SessionRow, priced: RowCost) -> float | None:
    """Exploration's part of a session's priced prompt dollars: its share of the billed prompt, at the mix of
    kinds the session paid; None when the prompt or the share is unknown (a bill short of its records). The
    one rule the report's sum, `session` and the pages take it by."""
    prompt = priced.prompt_dollars
    billed = row.get("prompt_tokens_billed") or 0
    if prompt is None:
        return None
    if not billed:
        return 0.0 if not prompt else None
    if bill_short(row.get("context_tokens") or 0, billed):
        return None
    return prompt * min(1.0, (row.get("billed_tokens") or {}).get("exploration", 0) / billed)


def money(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else "under $0.01"


class DollarSums:
    """Dollars per model and agent, the exploration part, and the calls and sessions left unpriced and why."""

    def __init__(self, table: PriceTable) -> None:
        self.table = table
        # whole nano-dollars: integer sums come out the same in any order rows arrive (cached or read fresh)
        self.total = self.prompt = self.exploration = self.covered_prompt = 0
        self.priced = self.partly_priced = self.exploration_unknown = self.no_usage = self.no_calls = 0
        self.by_model: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # sessions, dollars
        self.by_agent: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # sessions, dollars, exploration
        self.unpriced: Counter = Counter()  # model as recorded -> sessions with a call of it left unpriced
        self.unpriced_calls: Counter = Counter()  # model as recorded -> its calls left unpriced
        self.nothing_priced = 0  # sessions none of whose calls has a price
        self.old_rows = 0  # rows cached before each model's usage was kept, of several models: unpriced

    def add(self, row: SessionRow) -> None:
        if made_no_call(row):
            self.no_calls += 1  # a session that made no call cost nothing: nothing to price, nothing unknown
            return
        cost = row_cost(row, self.table)
        if cost.reason == NO_USAGE:
            self.no_usage += 1
            return
        if cost.reason == OLD_ROW:
            self.old_rows += 1
            return
        for model in cost.unpriced_models:
            self.unpriced[model] += 1
        self._unpriced_calls(row, cost.unpriced_models, cost.unpriced_calls)
        if cost.prompt_dollars is None:
            self.nothing_priced += 1
            return
        dollars, prompt = _nano(cost.dollars), _nano(cost.prompt_dollars)
        self.priced += 1
        self.partly_priced += bool(cost.unpriced_calls or cost.unpriced_models)
        self.total += dollars
        self.prompt += prompt
        for name, model_dollars in self._by_model_dollars(row, cost).items():
            self.by_model[name][0] += 1
            self.by_model[name][1] += model_dollars
        agent = self.by_agent[row.get("agent") or "unknown"]
        agent[0] += 1
        agent[1] += dollars
        explored = exploration_dollars(row, cost)
        if explored is None:
            self.exploration_unknown += 1  # its share of the bill is unknown, so its dollars are too
            return
        exploration = _nano(explored)
        self.covered_prompt += prompt
        self.exploration += exploration
        agent[2] += exploration

    def _unpriced_calls(self, row: SessionRow, models: tuple[str, ...], calls: int) -> None:
        """Each unpriced model's calls, from the row's own split (an old row's calls go to its first model)."""
        by_model = row.get("usage_by_model")
        if not isinstance(by_model, dict):
            if models:
                self.unpriced_calls[models[0]] += calls
            return
        for model in models:
            self.unpriced_calls[model] += sum(entry.get("calls", 0) for entry in by_model.get(model, {}).values())

    def _by_model_dollars(self, row: SessionRow, cost: RowCost) -> dict[str, int]:
        """The row's dollars by the table's name of each priced model (as `row_cost` found them)."""
        if not isinstance(row.get("usage_by_model"), dict):
            name = self.table.name_for(row.get("model"))
            return {name: _nano(cost.dollars)} if name else {}
        found: dict[str, int] = {}
        for name, dollars in cost.by_model:
            found[name] = found.get(name, 0) + _nano(dollars)
        return found

    @property
    def sessions(self) -> int:
        return self.priced + self.nothing_priced + self.old_rows + self.no_usage + self.no_calls

    def to_json(self) -> dict:
        share = self.exploration / self.covered_prompt if self.covered_prompt else None
        return {
            "currency": "USD",
            "prices": self.table.to_json(),
            "assumption": ASSUMPTION,
            "sessions_priced": self.priced,
            "sessions_partly_priced": self.partly_priced,
            "sessions_unpriced": self.nothing_priced,
            "sessions_unpriced_old_rows": self.old_rows,
            "sessions_without_usage": self.no_usage,
            "sessions_without_calls": self.no_calls,
            "sessions_exploration_unknown": self.exploration_unknown,
            "dollars": _dollars(self.total),
            "prompt_dollars": _dollars(self.prompt),
            # the prompts of the sessions whose exploration share is known: the share's denominator
            "prompt_dollars_share_known": _dollars(self.covered_prompt),
            "exploration_dollars": _dollars(self.exploration),
            "exploration_share_of_prompt_dollars": share,
            "by_model": {name: {"sessions": s, "dollars": _dollars(d)}
                         for name, (s, d) in sorted(self.by_model.items(), key=lambda item: -item[1][1])},
            "by_agent": {name: {"sessions": s, "dollars": _dollars(d), "exploration_dollars": _dollars(e)}
                         for name, (s, d, e) in sorted(self.by_agent.items())},
            "models_unpriced": dict(self.unpriced.most_common()),
            "calls_unpriced": dict(self.unpriced_calls.most_common()),
        }

    def lines(self, width: int | None) -> list[str]:
        """The header's words on dollars: what was priced, the exploration part, what was not and why."""
        if not self.priced:
            lines = [f"In dollars ({self.table.describe()}): unknown, no session's model has a list price."]
        else:
            share = self.exploration / self.covered_prompt if self.covered_prompt else None
            prompts = f"the prompts cost {money(self.prompt / NANO)}"
            part = (f"{prompts}, of which exploration {money(self.exploration / NANO)} ({share:.1%}"
                    f"{' of the prompts whose share is known' if self.exploration_unknown else ''})"
                    if share is not None else f"{prompts}, exploration's part unknown")
            total = money(self.total / NANO)
            lines = [f"In dollars ({self.table.describe()}): {total} for {_sessions(self.priced)}; {part}.",
                     f"Assumed: {ASSUMPTION}; each call is priced at its own model."]
            if self.exploration_unknown and share is not None:
                short = money((self.prompt - self.covered_prompt) / NANO)
                lines.append(f"{_sessions(self.exploration_unknown)} whose bill is short of their records ({short} "
                             "of the prompts): in the dollars, not in exploration's part.")
        if self.unpriced:
            named = ", ".join(f"{printable(str(model))}: {_calls(self.unpriced_calls[model])}"
                              for model, _ in self.unpriced.most_common(6))
            more = len(self.unpriced) - 6
            some = f", {self.partly_priced:,} of them in part" if self.partly_priced else ""
            lines.append(f"Not priced, no list price known: {_calls(sum(self.unpriced_calls.values()))} in "
                         f"{_sessions(self.nothing_priced + self.partly_priced)}{some} ({named}"
                         f"{f' and {more} more models' if more > 0 else ''}).")
        if self.old_rows:
            lines.append(f"Not priced, remembered before each model's usage was kept apart: "
                         f"{_sessions(self.old_rows)} that used several models.")
        if self.no_usage:
            lines.append(f"Not priced, no token usage recorded: {_sessions(self.no_usage)}.")
        if self.no_calls:  # said, so that every session of the count above is accounted for
            lines.append(f"Cost nothing: {_sessions(self.no_calls)} that made no API call.")
        return [part for line in lines for part in wrap(line, width, "  ")]


def _nano(dollars: float | None) -> int:
    assert dollars is not None, "priced: a row's dollars are known when its prompt's are, a priced model's always"
    return round(dollars * NANO)


def _dollars(nano: int) -> float:
    return round(nano / NANO, 4)


def _sessions(count: int) -> str:
    return f"{count:,} session{'s' if count != 1 else ''}"


def _calls(count: int) -> str:
    return f"{count:,} call{'s' if count != 1 else ''}"
