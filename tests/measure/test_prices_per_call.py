"""Each call at its own model's price (issue 30): the ledger keeps every call's usage by model and by its
prompt's band, `row_cost` prices them with the model's long-prompt tier where it has one, a call whose model has
no price is counted as unpriced (never priced at another model's rate, never $0), and the report's prompt
dollars are one figure in its text and its JSON."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from claude_2_1_fixtures import a_session_with_a_subagent_and_a_compaction

from tests.agents.claude_code.test_reader_new_rows import read
from tests.agents.hermes.test_reader_billing import COMPRESSION, MAIN, TITLE, one, write_session
from xshare.agents.claude_code.unrecorded import complete_with_unrecorded
from xshare.measure.ledger import CATEGORIES, USAGE_FIELDS, Ledger, session_row, usage_sums_agree
from xshare.measure.prices import NO_MODEL, PriceError, parse, row_cost, shipped
from xshare.report.dollars import DollarSums

# invented rates, so the figures below are sums a person can check by hand (dollars per million tokens)
TABLE = parse({"date": "2026-12-01", "models": {
    "big-model": {"input": 10, "output": 50, "cache_read": 1, "cache_write_5m": 12.5, "cache_write_1h": 20,
                  "above": {"200000": {"input": 20, "output": 75, "cache_read": 2}}},
    "small-model": {"input": 1, "output": 5, "cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2},
}})


def usage(input=0, cache_read=0, cache_write_5m=0, cache_write_1h=0, output=0) -> dict:
    return {"input": input, "cache_read": cache_read, "cache_write_5m": cache_write_5m,
            "cache_write_1h": cache_write_1h, "output": output}


def call(ledger: Ledger, model: str | None, **tokens: int) -> None:
    used = usage(**tokens)
    ledger.call(sum(used[key] for key in USAGE_FIELDS[:4]), usage=used, model=model)


def row_of(ledger: Ledger) -> dict:
    return session_row(ledger, session_id="s", agent="claude-code", source="interactive", tokenizer="o200k_base")


def test_a_session_of_two_models_is_priced_call_by_call_at_each_ones_rates():
    ledger = Ledger()
    call(ledger, "big-model", input=1_000, cache_write_5m=20_000, output=500)
    call(ledger, "small-model", cache_read=21_000, input=2_000, output=4_000)
    call(ledger, "small-model", cache_read=23_000, output=1_000)
    call(ledger, "big-model", cache_read=21_000, cache_write_1h=3_000, output=100)
    row = row_of(ledger)
    big = 1_000 * 10 + 20_000 * 12.5 + 500 * 50 + 21_000 * 1 + 3_000 * 20 + 100 * 50
    small = 2_000 * 1 + 44_000 * 0.1 + 5_000 * 5
    cost = row_cost(row, TABLE)
    assert cost.dollars == pytest.approx((big + small) / 1e6)
    assert cost.prompt_dollars == pytest.approx((big - 600 * 50 + small - 5_000 * 5) / 1e6)
    assert (cost.priced_calls, cost.unpriced_calls, cost.unpriced_models, cost.reason) == (4, 0, (), None)
    # the row's most-called model is small-model; all at its rates would be far less than the bill
    assert row["model"] == "big-model" or row["model"] == "small-model"
    sums = DollarSums(TABLE)
    sums.add({**row, "billed_tokens": dict.fromkeys(CATEGORIES, 0)})
    figures = sums.to_json()
    assert figures["dollars"] == pytest.approx((big + small) / 1e6, abs=1e-4)
    assert figures["by_model"]["big-model"]["dollars"] == pytest.approx(big / 1e6, abs=1e-4)
    assert figures["by_model"]["small-model"]["dollars"] == pytest.approx(small / 1e6, abs=1e-4)


def test_a_call_of_a_model_with_no_price_is_counted_unpriced_not_zero_and_not_another_models():
    ledger = Ledger()
    call(ledger, "big-model", input=10_000, output=100)
    call(ledger, "house-model-7", input=50_000, output=5_000)
    call(ledger, "house-model-7", cache_read=55_000, output=5_000)
    call(ledger, None, input=1_000)
    cost = row_cost(row_of(ledger), TABLE)
    assert cost.dollars == pytest.approx((10_000 * 10 + 100 * 50) / 1e6)  # big-model's call alone
    assert cost.priced_calls == 1 and cost.unpriced_calls == 3
    assert cost.unpriced_models == ("house-model-7", NO_MODEL)
    assert cost.reason == "3 of 4 calls not priced: no list price for house-model-7; no model recorded"
    nothing = Ledger()
    call(nothing, "house-model-7", input=50_000)
    alone = row_cost(row_of(nothing), TABLE)
    assert alone.prompt_dollars is None and alone.dollars is None and alone.unpriced_calls == 1
    assert alone.reason == "no list price for house-model-7"  # none priced: no count to read past
    sums = DollarSums(TABLE)
    for ledger_row in (row_of(ledger), row_of(nothing)):
        sums.add({**ledger_row, "billed_tokens": dict.fromkeys(CATEGORIES, 0)})
    text = " ".join(sums.lines(None))
    assert "$0.10 for 1 session" in text and "$0.00 for" not in text
    assert "Not priced, no list price known: 4 calls in 2 sessions, 1 of them in part" in text
    assert sums.to_json()["calls_unpriced"] == {"house-model-7": 3, NO_MODEL: 1}


def test_a_call_over_200k_is_priced_at_the_models_tier_and_one_under_at_its_base():
    ledger = Ledger()
    call(ledger, "big-model", cache_read=250_000, input=1_000, output=1_000)  # 251,000: over 200K
    call(ledger, "big-model", cache_read=150_000, input=1_000, output=1_000)  # under
    row = row_of(ledger)
    assert set(row["usage_by_model"]["big-model"]) == {"200000", "100000"}
    over = 250_000 * 2 + 1_000 * 20 + 1_000 * 75  # the tier's rates
    under = 150_000 * 1 + 1_000 * 10 + 1_000 * 50
    assert row_cost(row, TABLE).dollars == pytest.approx((over + under) / 1e6)
    # a tier names only some rates: the others are the model's base rates (its 5m cache write here)
    assert TABLE.rates("big-model", "272000")["cache_write_5m"] == 12.5 and TABLE.rates("big-model", "0")["input"] == 10


@pytest.mark.parametrize("above", [{"150000": {"input": 1}}, {"200000": {"input": "dear"}}, ["200000"]])
def test_a_tier_xshare_cannot_use_is_refused_with_a_reason(above):
    with pytest.raises(PriceError, match="model 'm'"):
        parse({"models": {"m": {"input": 1, "output": 2, "above": above}}})


def test_a_row_without_the_split_is_priced_at_its_one_model_and_not_at_all_with_several():
    old = {"api_calls": 2, "model": "big-model", "models": ["big-model"], "usage": usage(input=100_000)}
    assert row_cost(old, TABLE).dollars == pytest.approx(1.0) and row_cost(old, TABLE).priced_calls == 2
    several = {**old, "models": ["big-model", "small-model"]}
    cost = row_cost(several, TABLE)
    assert cost.prompt_dollars is None and cost.unpriced_calls == 2 and "several models" in cost.reason


def test_the_prompts_dollars_are_one_figure_in_the_text_and_the_json():
    sums = DollarSums(TABLE)
    known, short = Ledger(), Ledger()
    call(known, "big-model", input=100_000, output=1_000)
    call(short, "small-model", input=200_000)
    billed = dict.fromkeys(CATEGORIES, 0)
    sums.add({**row_of(known), "billed_tokens": {**billed, "exploration": 25_000}})
    sums.add({**row_of(short), "billed_tokens": billed, "context_tokens": 900_000})  # a bill short of its records
    figures = sums.to_json()
    text = " ".join(sums.lines(None))
    said = re.search(r"the prompts cost \$([\d.]+)", text)
    assert said and float(said.group(1)) == pytest.approx(figures["prompt_dollars"], abs=0.005)
    assert figures["prompt_dollars"] == pytest.approx(1.0 + 0.2)
    assert figures["prompt_dollars_share_known"] == pytest.approx(1.0) and figures["exploration_dollars"] == 0.25
    assert "1 session whose bill is short of their records ($0.20 of the prompts)" in text


def test_the_shipped_table_prices_a_call_over_200k_of_a_model_with_a_long_context_tier():
    table = shipped()
    base, tier = table.rates("gemini-2.5-pro", "0"), table.rates("gemini-2.5-pro", "200000")
    assert tier["input"] > base["input"] and tier["output"] > base["output"]
    assert table.rates("gemini-2.5-pro", "100000") == base


# --- every reader's usage reaches one model's band --------------------------------------------------------


def test_hermes_auxiliary_calls_are_kept_under_their_own_model(tmp_path: Path):
    row = one(write_session(tmp_path / "state.db"))
    assert usage_sums_agree(row)
    aux = row["usage_by_model"]["aux/model"]
    assert sum(entry["calls"] for entry in aux.values()) == 2
    assert sum(entry["input"] for entry in aux.values()) == TITLE[0] + COMPRESSION[0]
    main = [model for model in row["usage_by_model"] if model != "aux/model"]
    assert sum(entry["input"] for model in main for entry in row["usage_by_model"][model].values()) == MAIN[0]


def test_claude_codes_unrecorded_calls_are_kept_under_the_model_its_totals_name(tmp_path: Path):
    main_path, agent_path, _ = a_session_with_a_subagent_and_a_compaction(tmp_path)
    own, agent = read(main_path).row(), read(agent_path).row()
    row = complete_with_unrecorded(own, [agent])
    assert usage_sums_agree(row) and usage_sums_agree(own) and usage_sums_agree(agent)
    assert set(row["usage_by_model"]) == {"claude-opus-5-5"} and row["unrecorded_calls"] == 1
    added = {name: sum(entry[name] for entry in row["usage_by_model"]["claude-opus-5-5"].values())
             - sum(entry[name] for entry in own["usage_by_model"]["claude-opus-5-5"].values())
             for name in (*USAGE_FIELDS, "calls")}
    assert added == {**{name: row["usage"][name] - own["usage"][name] for name in USAGE_FIELDS}, "calls": 1}


def test_a_row_whose_usage_and_split_disagree_is_caught():
    row = row_of(Ledger())
    assert usage_sums_agree(row)
    row["usage"]["input"] += 1
    assert not usage_sums_agree(row)
