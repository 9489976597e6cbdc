"""List prices: a bill in tokens read in dollars, where the model's price is known.

The table ships as package data (prices.json, dated, with where each provider's rates were taken); a
user's file in the same shape (`--prices FILE`) adds models or replaces rates. A model the table does not
know is unpriced, never priced at a guess. Each call is priced at its own model and, where the provider
charges more for a long prompt (a model's `"above"` tiers), at the rates of its prompt's band: a row keeps
its usage by model and band (`usage_by_model`, made by measure/ledger.py) and `row_cost` prices it.
Subscription users can turn dollars off: `--no-dollars`, or XSHARE_DOLLARS=off in the environment,
which the status line and the advice read through `dollars_enabled`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from xshare.state.private import open_regular

# a usage's token kinds, each with its own rate; the first four are the prompt side
RATE_KEYS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
PROMPT_KEYS = RATE_KEYS[:4]
PER_TOKEN = 1e-6  # the table's rates are per million tokens
ENV_SWITCH = "XSHARE_DOLLARS"
OFF_WORDS = ("0", "off", "no", "false")
_DATED = re.compile(r"-(20\d{6}|20\d\d-\d\d-\d\d|latest)$")  # claude-sonnet-4-20250514, gpt-5.6-2026-07-09
# a price table is a few kilobytes; past this a --prices file is not one (/dev/zero would fill the memory)
LARGEST_PRICE_FILE = 4 << 20
# dollars per million tokens: no list price comes near; past it a rate is a typo, and 1e308 sums to infinity
HIGHEST_RATE = 1e6
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")  # Hermes's claude-sonnet-4.5 is Anthropic's claude-sonnet-4-5
# The prompt sizes where a provider's rates change (Anthropic's Haiku 5.5 over 100K, Anthropic's and Google's
# long-context rates over 200K, OpenAI's over 272K). A call's band is named by the largest bound its billed
# prompt is over ("0" under all of them); a table's tier must start at one of these bounds.
BAND_BOUNDS = (100_000, 200_000, 272_000)
BANDS = ("0", *map(str, BAND_BOUNDS))
NO_MODEL = "no model recorded"  # usage_by_model's key for calls whose records name no model
_UNSEEN = object()  # a rates memo's miss (None is a known answer: no price)


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
    # model -> band (BANDS, above "0") -> its whole rates: a long prompt's tier, where the provider has one
    tiers: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    # each model name as recorded -> the table's name: a report asks for the same few names thousands of times
    _names: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)
    _rates: dict[tuple[str, str], dict[str, float] | None] = field(default_factory=dict, compare=False, repr=False)

    def name_for(self, model: str | None) -> str | None:
        """The table's name for a model as an agent recorded it, or None when it has no price."""
        if not isinstance(model, str):
            return None
        if model not in self._names:
            self._names[model] = self._look_up(model)
        return self._names[model]

    def _look_up(self, model: str) -> str | None:
        if not model.strip():
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

    def rates(self, model: str | None, band: str = "0") -> dict[str, float] | None:
        """A model's rates for a call in this band (the highest tier the band reaches; its base below any)."""
        if not isinstance(model, str):
            return None
        found = self._rates.get((model, band), _UNSEEN)
        if found is _UNSEEN:
            found = self._rates[model, band] = self._rates_of(model, band)
        return found  # type: ignore[return-value]  # _UNSEEN is never stored

    def _rates_of(self, model: str, band: str) -> dict[str, float] | None:
        name = self.name_for(model)
        if name is None:
            return None
        reached = [bound for bound in self.tiers.get(name, {}) if int(bound) <= int(band)]
        return self.tiers[name][max(reached, key=int)] if reached else self.models[name]

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
    if type(value) is int:  # nearly every count: the general test below costs a report over many sessions
        return value >= 0
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _rate(value: object) -> bool:
    return isinstance(value, (int, float)) and _number(value) and value <= HIGHEST_RATE


def _given(rates: dict) -> dict[str, float]:
    return {key: float(rates[key]) for key in RATE_KEYS if _rate(rates.get(key))}


def _models(data: dict, where: str) -> dict[str, dict[str, float]]:
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise PriceError(f"{where}: no \"models\" object with prices in it")
    checked = {}
    for name, rates in models.items():
        if not isinstance(rates, dict) or not all(_rate(rates.get(key)) for key in ("input", "output")):
            raise PriceError(f"{where}: model {name!r} needs \"input\" and \"output\" as numbers (dollars per "
                             f"million tokens, 0 to {HIGHEST_RATE:,.0f})")
        given = _given(rates)
        # a table that names no cache rates (a provider with no cache premium) bills those tokens as input
        checked[str(name).lower()] = {key: given.get(key, given["input"]) for key in RATE_KEYS}
    return checked


def _tiers(data: dict, base: dict[str, dict[str, float]], where: str) -> dict[str, dict[str, dict[str, float]]]:
    """Each model's "above" tiers, whole: a rate a tier does not name is the model's base rate for it."""
    tiers: dict[str, dict[str, dict[str, float]]] = {}
    for name, rates in data["models"].items():
        above = rates.get("above")
        if above is None:
            continue
        if not isinstance(above, dict) or any(bound not in BANDS[1:] or not isinstance(tier, dict)
                                              for bound, tier in above.items()):
            raise PriceError(f"{where}: model {name!r} has an \"above\" that is not an object of tiers starting "
                             f"at {', '.join(BANDS[1:])} tokens")
        if any(key in tier and not _rate(tier[key]) for tier in above.values() for key in RATE_KEYS):
            raise PriceError(f"{where}: model {name!r} has a tier rate that is not a number from 0 to "
                             f"{HIGHEST_RATE:,.0f}")
        own = base[str(name).lower()]
        tiers[str(name).lower()] = {bound: _tier(own, rates, _given(tier)) for bound, tier in above.items()}
    return tiers


def _tier(own: dict[str, float], named: dict, tier: dict[str, float]) -> dict[str, float]:
    """A tier's whole rates: those it names, else the model's; a cache write the model prices as input (it names
    no write rate) is the tier's input."""
    whole = {**own, **tier}
    for key in ("cache_write_5m", "cache_write_1h"):
        if key not in tier and not _rate(named.get(key)):
            whole[key] = whole["input"]
    return whole


def parse(data: object, where: str = "prices") -> PriceTable:
    """A table from prices.json's shape; PriceError names what is wrong."""
    if not isinstance(data, dict):
        raise PriceError(f"{where}: not a JSON object")
    aliases, sources = data.get("aliases"), data.get("sources")
    aliases, sources = (found if isinstance(found, dict) else {} for found in (aliases, sources))
    models = _models(data, where)
    return PriceTable(str(data.get("date") or "undated"), models,
                      {str(k).lower(): str(v).lower() for k, v in aliases.items()},
                      {str(k): str(v) for k, v in sources.items()}, str(data.get("about") or ""),
                      tiers=_tiers(data, models, where))


@lru_cache(maxsize=1)
def shipped() -> PriceTable:
    """The table that ships with xshare."""
    text = (Path(__file__).parent / "prices.json").read_text(encoding="utf-8")  # as the vocabulary: installed as files
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
    # a model the file prices takes its tiers from the file (none there: none at all)
    tiers = {name: bands for name, bands in table.tiers.items() if name not in theirs.models}
    return PriceTable(table.date, {**table.models, **theirs.models}, {**table.aliases, **theirs.aliases},
                      {**table.sources, **theirs.sources}, table.about,
                      theirs.date if theirs.date != "undated" else None, tuple(sorted(theirs.models)),
                      {**tiers, **theirs.tiers})


def cost(rates: dict[str, float], usage: dict, keys: tuple[str, ...] = RATE_KEYS) -> float:
    """Dollars for a usage (tokens by kind) at these rates; kinds the usage lacks count as none."""
    return sum(rates[key] * used for key in keys if _number(used := usage.get(key, 0))) * PER_TOKEN


def price_usage(model: str | None, usage: dict, table: PriceTable | None = None) -> float | None:
    """Dollars at list price for a usage ({"input", "cache_read", "cache_write_5m", "cache_write_1h",
    "output"}: tokens, or weighted token counts) on a model; None when the model has no price."""
    rates = (table or shipped()).rates(model)
    return None if rates is None else cost(rates, usage)


def dollars_enabled(turned_off: bool = False) -> bool:
    """Whether to show dollars: not when a flag turned them off or XSHARE_DOLLARS says off."""
    return not turned_off and os.environ.get(ENV_SWITCH, "").strip().lower() not in OFF_WORDS


def band_of(prompt: int) -> str:
    """A call's band (BANDS) by its billed prompt: the largest bound it is over."""
    over = [bound for bound in BAND_BOUNDS if prompt > bound]
    return str(over[-1]) if over else BANDS[0]


@dataclass(frozen=True)
class RowCost:
    """A session's dollars, each call at its own model's rates for its band. `dollars` sums the priced calls
    (None, like `prompt_dollars`, when none was: nothing is known); a call with no known price is counted in
    `unpriced_calls`, never priced at another model's rate and never at $0. A session that made no call cost
    $0.00, known."""

    dollars: float | None  # None: nothing of it could be priced (unknown, never $0)
    prompt_dollars: float | None  # the prompt side (fresh input, cache reads and writes) of `dollars`
    priced_calls: int
    unpriced_calls: int
    unpriced_models: tuple[str, ...] = ()  # as recorded; NO_MODEL for calls whose records name none
    reason: str | None = None  # in plain words, when some or all of the row is unpriced
    # the table's name of each priced model as recorded, with its calls' dollars (a name twice: two spellings)
    by_model: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The session's dollars as `sessions --json` gives them: its split by model is the report's to sum."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "by_model"}


NO_USAGE = "no token usage recorded"
OLD_ROW = ("its cached figures sum the usage of several models: xshare reads its records again (a newer "
           "method) to price each call")


def row_cost(row: Mapping[str, Any], table: PriceTable) -> RowCost:
    """The row's dollars at list price, each call at its own model and band (the row's `usage_by_model`).
    A row from before that field was kept is priced at its model when it names one, else unpriced."""
    calls = row.get("api_calls") or 0
    by_model = row.get("usage_by_model")
    if made_no_call(row):
        return RowCost(0.0, 0.0, 0, 0)  # a session that made no call cost nothing: nothing unknown
    if row.get("usage_unknown") or not _recorded(row):
        return RowCost(None, None, 0, calls, (), NO_USAGE)
    if not isinstance(by_model, dict):
        models = set(row.get("models") or ()) | ({row["model"]} if row.get("model") else set())
        if len(models) > 1:
            return RowCost(None, None, 0, calls, tuple(sorted(models)), OLD_ROW)
        by_model = {(models.pop() if models else NO_MODEL): {BANDS[0]: {**(row.get("usage") or {}), "calls": calls}}}
    dollars = prompt = 0.0
    priced = unpriced = 0
    known, missing = False, dict[str, int]()
    each_model: list[tuple[str, float]] = []
    for model, bands in by_model.items():
        model_dollars, model_known = 0.0, False
        for band, used in bands.items():
            count = used.get("calls", 0)
            rates = None if model == NO_MODEL else table.rates(model, band)
            if rates is None:
                if count or any(used.get(key) for key in RATE_KEYS):
                    unpriced += count
                    missing[model] = missing.get(model, 0) + count
                continue
            known = model_known = True
            priced += count
            call_dollars = cost(rates, used)
            dollars += call_dollars
            model_dollars += call_dollars
            prompt += cost(rates, used, PROMPT_KEYS)
        name = table.name_for(model) if model_known else None
        if name is not None:
            each_model.append((name, model_dollars))
    return RowCost(dollars if known else None, prompt if known else None, priced, unpriced, tuple(sorted(missing)),
                   _unpriced_reason(missing, priced + unpriced) if missing else None, tuple(each_model))


def made_no_call(row: Mapping[str, Any]) -> bool:
    """A session that made no API call and recorded no usage: it cost nothing, which is known, not unknown."""
    return not row.get("usage_unknown") and not row.get("api_calls") and not _recorded(row)


def _recorded(row: Mapping[str, Any]) -> bool:
    """Whether the agent recorded any token usage for the row (its split by model, else its sum)."""
    by_model = row.get("usage_by_model")
    if isinstance(by_model, dict):
        return any(_number(used.get(key)) and used.get(key) for bands in by_model.values()
                   for used in bands.values() for key in RATE_KEYS)
    usage = row.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return any(_number(value) and value for value in usage.values())


def _unpriced_reason(missing: dict[str, int], calls: int) -> str:
    named = "; ".join("no model recorded" if model == NO_MODEL else f"no list price for {model}"
                      for model in sorted(missing))
    count = sum(missing.values())
    if count >= calls:  # none priced: which model, and no count to read past
        return named
    return f"{count:,} of {calls:,} call{'s' if calls != 1 else ''} not priced: {named}"
