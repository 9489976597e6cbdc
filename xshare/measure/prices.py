"""List prices: a bill in tokens read in dollars, where the model's price is known.

The table ships as package data (prices.json, dated, with where each provider's rates were taken); a
user's file in the same shape (`--prices FILE`) adds models or replaces rates. A model the table does not
know is unpriced, never priced at a guess. Subscription users can turn dollars off: `--no-dollars`, or
XSHARE_DOLLARS=off in the environment, which the status line and the advice read through
`dollars_enabled`.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from xshare.state.private import open_regular

# a usage's token kinds, each with its own rate; the first four are the prompt side
RATE_KEYS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
PROMPT_KEYS = RATE_KEYS[:4]
PER_TOKEN = 1e-6  # the table's rates are per million tokens
ENV_SWITCH = "XSHARE_DOLLARS"
OFF_WORDS = ("0", "off", "no", "false")
_DATED = re.compile(r"-(20\d{6}|latest)$")  # claude-sonnet-4-20250514, gpt-4o-latest
# a price table is a few kilobytes; past this a --prices file is not one (/dev/zero would fill the memory)
LARGEST_PRICE_FILE = 4 << 20
# dollars per million tokens: no list price comes near; past it a rate is a typo, and 1e308 sums to infinity
HIGHEST_RATE = 1e6
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")  # Hermes's claude-sonnet-4.5 is Anthropic's claude-sonnet-4-5


class PriceError(ValueError):
    """A price file xshare cannot use; the message is one line for stderr."""


@dataclass(frozen=True)
class PriceTable:
    date: str
    models: dict[str, dict[str, float]]
    aliases: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    about: str = ""
    file_date: str | None = None  # a --prices file's own date, when one was laid over the shipped table
    file_models: tuple[str, ...] = ()  # the models that file priced

    def name_for(self, model: str | None) -> str | None:
        """The table's name for a model as an agent recorded it, or None when it has no price."""
        if not isinstance(model, str) or not model.strip():
            return None
        name = model.strip().lower().split("[")[0]  # claude-opus-4-6[1m]: the same model, a longer window
        candidates = [name, name.rsplit("/", 1)[-1]]  # anthropic/claude-sonnet-4, openai/gpt-5.1
        for candidate in list(candidates):
            undated = _DATED.sub("", candidate)
            candidates += [undated, _VERSION_DOT.sub("-", undated) if undated.startswith("claude") else undated]
        for candidate in candidates:
            candidate = self.aliases.get(candidate, candidate)
            if candidate in self.models:
                return candidate
        return None

    def rates(self, model: str | None) -> dict[str, float] | None:
        name = self.name_for(model)
        return self.models[name] if name else None

    def describe(self) -> str:
        """The table's date in words, and the user's file when one is laid over it."""
        text = f"list prices of {self.date}"
        if self.file_models:
            count = len(self.file_models)
            text += (f", with {count} model{'s' if count != 1 else ''} priced by your --prices file"
                     f" ({self.file_date or 'undated'})")
        return text

    def to_json(self) -> dict:
        return {"date": self.date, "sources": self.sources, "about": self.about,
                "prices_file": {"date": self.file_date, "models": sorted(self.file_models)} if self.file_models
                else None}


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _rate(value: object) -> bool:
    return _number(value) and value <= HIGHEST_RATE


def _models(data: dict, where: str) -> dict[str, dict[str, float]]:
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise PriceError(f"{where}: no \"models\" object with prices in it")
    checked = {}
    for name, rates in models.items():
        if not isinstance(rates, dict) or not all(_rate(rates.get(key)) for key in ("input", "output")):
            raise PriceError(f"{where}: model {name!r} needs \"input\" and \"output\" as numbers (dollars per "
                             f"million tokens, 0 to {HIGHEST_RATE:,.0f})")
        given = {key: float(rates[key]) for key in RATE_KEYS if _rate(rates.get(key))}
        # a table that names no cache rates (a provider with no cache premium) bills those tokens as input
        checked[str(name).lower()] = {key: given.get(key, given["input"]) for key in RATE_KEYS}
    return checked


def parse(data: object, where: str = "prices") -> PriceTable:
    """A table from prices.json's shape; PriceError names what is wrong."""
    if not isinstance(data, dict):
        raise PriceError(f"{where}: not a JSON object")
    aliases = data.get("aliases") if isinstance(data.get("aliases"), dict) else {}
    sources = data.get("sources") if isinstance(data.get("sources"), dict) else {}
    return PriceTable(str(data.get("date") or "undated"), _models(data, where),
                      {str(k).lower(): str(v).lower() for k, v in aliases.items()},
                      {str(k): str(v) for k, v in sources.items()}, str(data.get("about") or ""))


@lru_cache(maxsize=1)
def shipped() -> PriceTable:
    """The table that ships with xshare."""
    text = resources.files("xshare.measure").joinpath("prices.json").read_text(encoding="utf-8")
    return parse(json.loads(text), "xshare's price table")


def load(path: str | None = None) -> PriceTable:
    """The shipped table, with a user's file laid over it (its models added or replacing ours)."""
    table = shipped()
    if not path:
        return table
    try:  # a regular file, as every file xshare reads: a FIFO would wait, a device never end
        with open_regular(Path(path)) as handle:
            raw = handle.read(LARGEST_PRICE_FILE + 1)
    except OSError as error:
        raise PriceError(f"could not read the --prices file: {error.strerror or error}") from None
    if len(raw) > LARGEST_PRICE_FILE:
        raise PriceError(f"the --prices file is over {LARGEST_PRICE_FILE >> 20} MB: not a price table")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise PriceError(f"the --prices file is not JSON: {error}") from None
    theirs = parse(data, "the --prices file")
    return PriceTable(table.date, {**table.models, **theirs.models}, {**table.aliases, **theirs.aliases},
                      {**table.sources, **theirs.sources}, table.about,
                      theirs.date if theirs.date != "undated" else None, tuple(sorted(theirs.models)))


def cost(rates: dict[str, float], usage: dict, keys: tuple[str, ...] = RATE_KEYS) -> float:
    """Dollars for a usage (tokens by kind) at these rates; kinds the usage lacks count as none."""
    return sum(rates[key] * usage.get(key, 0) for key in keys if _number(usage.get(key, 0))) * PER_TOKEN


def price_usage(model: str | None, usage: dict, table: PriceTable | None = None) -> float | None:
    """Dollars at list price for a usage ({"input", "cache_read", "cache_write_5m", "cache_write_1h",
    "output"}: tokens, or weighted token counts) on a model; None when the model has no price."""
    rates = (table or shipped()).rates(model)
    return None if rates is None else cost(rates, usage)


@dataclass(frozen=True)
class RowCost:
    """A session's dollars at list price: all of it, and its prompt side (fresh input, cache reads and
    writes); None where some of its calls have no price, `reason` saying why in plain words."""

    dollars: float | None
    prompt_dollars: float | None
    priced_calls: int
    unpriced_calls: int
    unpriced_models: tuple[str, ...]
    reason: str | None


NO_MODEL = "no model recorded"


def row_cost(row: dict, table: PriceTable) -> RowCost:
    """A session row's dollars: its summed usage at its model's rates. Unpriced, never $0, when the model
    has no price or the agent recorded no usage; a session that made no call cost nothing."""
    usage = row.get("usage") if isinstance(row.get("usage"), dict) else {}
    recorded = any(_number(value) and value for value in usage.values())
    calls = row.get("api_calls") if isinstance(row.get("api_calls"), int) else 0
    if not row.get("usage_unknown") and not calls and not recorded:
        return RowCost(0.0, 0.0, 0, 0, (), None)
    if row.get("usage_unknown") or not recorded:
        return RowCost(None, None, 0, calls, (), "no token usage recorded")
    model = row.get("model") if isinstance(row.get("model"), str) and row["model"].strip() else None
    rates = table.rates(model)
    if rates is None:
        why = f"no list price for {model}" if model else NO_MODEL
        return RowCost(None, None, 0, calls, (model or NO_MODEL,), why)
    return RowCost(cost(rates, usage), cost(rates, usage, PROMPT_KEYS), calls, 0, (), None)


def dollars_enabled(turned_off: bool = False) -> bool:
    """Whether to show dollars: not when a flag turned them off or XSHARE_DOLLARS says off."""
    return not turned_off and os.environ.get(ENV_SWITCH, "").strip().lower() not in OFF_WORDS
