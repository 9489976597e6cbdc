"""A session row's dollars (`prices.row_cost`), the one price every view shows: a session priced by hand,
its prompt side, and the sessions it cannot price, said as such with a reason, never $0."""

from __future__ import annotations

import pytest

from xshare.measure.prices import load, row_cost, shipped


def session(model, api_calls=4, usage_unknown=False, **tokens) -> dict:
    usage = {"input": 0, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0, "output": 0, **tokens}
    return {"id": "s1", "agent": "claude-code", "model": model, "models": [model] if model else [],
            "api_calls": api_calls, "usage": usage, "usage_unknown": usage_unknown}


def test_a_session_priced_by_hand_with_its_prompt_side():
    # Sonnet 4.6: $3 input, $0.30 cache read, $3.75 and $6 cache writes, $15 output per million tokens
    row = session("claude-sonnet-4-6", input=200_000, cache_read=4_000_000, cache_write_5m=400_000,
                  cache_write_1h=100_000, output=50_000)
    priced = row_cost(row, shipped())
    prompt = 0.2 * 3 + 4 * 0.3 + 0.4 * 3.75 + 0.1 * 6
    assert priced.prompt_dollars == pytest.approx(prompt)
    assert priced.dollars == pytest.approx(prompt + 0.05 * 15)
    assert (priced.priced_calls, priced.unpriced_calls, priced.unpriced_models, priced.reason) == (4, 0, (), None)


def test_a_model_with_no_price_is_unknown_with_its_name_never_zero():
    priced = row_cost(session("qwen3-coder-30b-local", input=1_000_000, output=1_000), shipped())
    assert priced.dollars is None and priced.prompt_dollars is None
    assert (priced.priced_calls, priced.unpriced_calls, priced.unpriced_models) == (0, 4, ("qwen3-coder-30b-local",))
    assert "qwen3-coder-30b-local" in priced.reason


def test_a_session_whose_agent_recorded_no_usage_is_unknown():
    priced = row_cost(session("gpt-5.1", usage_unknown=True), shipped())
    assert priced.dollars is None and priced.unpriced_calls == 4 and "usage" in priced.reason


def test_a_session_that_made_no_call_cost_nothing_and_is_not_unknown():
    priced = row_cost(session("claude-sonnet-4-6", api_calls=0), shipped())
    assert (priced.dollars, priced.prompt_dollars, priced.reason) == (0.0, 0.0, None)


def test_a_prices_file_prices_the_model_the_table_lacks(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text('{"date": "2026-11-30", "models": {"qwen3-coder-30b-local": {"input": 0.6, "output": 2.2}}}')
    priced = row_cost(session("qwen3-coder-30b-local", input=1_000_000, output=1_000_000), load(str(path)))
    assert priced.dollars == pytest.approx(2.8) and priced.reason is None
