"""One session's dollars, and a period's, as the views show them (`session`, `sessions`, `report --by`, the
pages): every figure from `prices.row_cost`, never priced again here, so a change to how a call is priced
reaches every view at once. A session that cannot be priced says "unknown" and why, never $0.00.
"""

from __future__ import annotations

from dataclasses import dataclass

from xshare.measure.prices import PriceTable, RowCost, row_cost
from xshare.measure.row import SessionRow
from xshare.printing import printable
from xshare.report.dollars import exploration_dollars, money

PARTLY = "+"  # after a figure that leaves out calls with no price: at least this much
PARTLY_NOTE = (f"{PARTLY}: at least this much; calls or sessions with no list price (or no usage recorded) "
               "are left out of it")


def cost_cell(priced: RowCost) -> str:
    """A table's cell: the dollars, `unknown` when none is priced, PARTLY after a figure that leaves calls out."""
    if priced.dollars is None:
        return "unknown"
    return money(priced.dollars) + (PARTLY if priced.unpriced_calls else "")


def session_line(row: SessionRow, table: PriceTable) -> str:
    """`xshare session`'s line on dollars: the whole, the prompt and exploration's part, or why unknown."""
    priced = row_cost(row, table)
    head = f"Dollars ({table.describe()}): "
    if priced.dollars is None:
        return f"{head}unknown: {printable(priced.reason or 'not priced')}"
    explored = exploration_dollars(row, priced)
    line = (f"{head}{money(priced.dollars)}, of which the prompt {money(priced.prompt_dollars)} and exploration "
            f"{money(explored) if explored is not None else 'unknown'}")
    if priced.unpriced_calls:
        line += (f"; {priced.unpriced_calls:,} call{'s' if priced.unpriced_calls != 1 else ''} not priced: "
                 f"{printable(priced.reason or 'no list price')}")
    return line


@dataclass
class PeriodDollars:
    """A group of sessions' dollars (a period's, a week's): the priced sum, and the sessions left out."""

    dollars: float = 0.0
    priced: int = 0
    unknown: int = 0  # sessions with no price at all
    partly: int = 0  # sessions some of whose calls had no price

    def add(self, priced: RowCost) -> None:
        if priced.dollars is None:
            self.unknown += 1
            return
        self.dollars += priced.dollars
        self.priced += 1
        self.partly += bool(priced.unpriced_calls)

    def cell(self) -> str:
        """The figure, `unknown` when no session of it was priced, PARTLY when some are left out."""
        if not self.priced:
            return "unknown" if self.unknown else money(0.0)
        return money(self.dollars) + (PARTLY if self.unknown or self.partly else "")

    def to_json(self) -> dict:
        return {"dollars": round(self.dollars, 4) if self.priced or not self.unknown else None,
                "sessions_priced": self.priced, "sessions_unpriced": self.unknown,
                "sessions_partly_priced": self.partly}
