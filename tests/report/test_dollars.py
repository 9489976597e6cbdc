"""Dollars beside tokens: the shipped price table, model names as agents record them, a usage priced, the
report's dollars (exploration's part, unpriced models, sessions without usage), --prices, --no-dollars and
XSHARE_DOLLARS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from xshare.measure.ledger import CATEGORIES
from xshare.measure.prices import PROMPT_KEYS, RATE_KEYS, PriceError, cost, load, price_usage, shipped
from xshare.report.dollars import DollarSums

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"


def usage(input=0, cache_read=0, cache_write_5m=0, cache_write_1h=0, output=0) -> dict:
    return {"input": input, "cache_read": cache_read, "cache_write_5m": cache_write_5m,
            "cache_write_1h": cache_write_1h, "output": output}


def row(model, used: dict | None, exploration=0, context=None, models=None, **extra) -> dict:
    """A session row as the ledger makes one, with the figures these tests price."""
    prompt = sum(used[key] for key in RATE_KEYS[:4]) if used else 0
    billed = dict.fromkeys(CATEGORIES, 0)
    billed["exploration"] = exploration
    return {"id": "s", "agent": "claude-code", "api_calls": 3, "source": "interactive", "model": model,
            "models": models or ([model] if model else []), "usage": used or usage(),
            "prompt_tokens_billed": prompt, "context_tokens": prompt if context is None else context,
            "billed_tokens": billed, **extra}  # extra may replace api_calls


# --- the table ----------------------------------------------------------------------------------


def test_the_shipped_table_is_dated_and_every_model_has_five_rates():
    table = shipped()
    assert table.date[:4].isdigit() and "litellm" in table.sources and "tools/price_table.py" in table.about
    for name, rates in table.models.items():
        assert set(rates) == set(RATE_KEYS), name
        assert all(rate >= 0 for rate in rates.values()) and rates["output"] >= rates["input"] > 0, name
        assert rates["cache_read"] <= rates["input"] <= rates["cache_write_5m"] <= rates["cache_write_1h"], name


def test_anthropic_cache_rates_are_the_published_multiples_of_input():
    """Anthropic prices 5-minute writes at 1.25x and 1-hour writes at 2x base input, and cache reads at 0.1x, or
    less since its 5.x models (Opus 5.5 0.05x, Sonnet 5.5 0.05x since 2026-10-07, Fable 5.1 0.025x)."""
    for name, rates in shipped().models.items():
        if name.startswith("claude-") and name != "claude-haiku-3":  # Haiku 3's were rounded by Anthropic
            assert rates["cache_read"] <= rates["input"] * 0.1 + 1e-9, name
            assert rates["cache_write_5m"] == pytest.approx(rates["input"] * 1.25), name
            assert rates["cache_write_1h"] == pytest.approx(rates["input"] * 2), name


@pytest.mark.parametrize("recorded, name", [
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),  # Hermes through OpenRouter
    ("claude-opus-4-6[1m]", "claude-opus-4-6"),
    ("openai/gpt-5.1", "gpt-5.1"),
    ("GPT-5.1-Codex-Max", "gpt-5.1-codex-max"),
    ("gemini-2.5-pro", "gemini-2.5-pro"),
    ("claude-3-5-haiku-20241022", "claude-haiku-3-5"),
])
def test_model_names_as_agents_record_them(recorded, name):
    assert shipped().name_for(recorded) == name


@pytest.mark.parametrize("recorded", ["MiniMax-M2.5-highspeed", "Qwen3.6-35B-A3B-UD-IQ4_NL-MTP", "gpt-5.1.1", "",
                                      None, 42])
def test_a_model_with_no_list_price_is_unpriced_never_guessed(recorded):
    assert shipped().name_for(recorded) is None
    assert price_usage(recorded, usage(input=1_000_000)) is None


def test_a_usage_priced_by_hand():
    # Sonnet 4.6: $3 input, $0.30 cache read, $3.75 and $6 cache writes, $15 output per million tokens
    used = usage(input=1_000_000, cache_read=10_000_000, cache_write_5m=2_000_000, cache_write_1h=500_000,
                 output=100_000)
    assert price_usage("claude-sonnet-4-6", used) == pytest.approx(3 + 3 + 7.5 + 3 + 1.5)
    # the prompt side (as the report prices it): $16.50 of the 13.5M prompt tokens
    rates = shipped().models["claude-sonnet-4-6"]
    assert cost(rates, used, PROMPT_KEYS) == pytest.approx(16.5)
    assert cost(rates, usage(output=5), PROMPT_KEYS) == 0  # no prompt tokens: no prompt-side dollars


def test_a_prices_file_adds_and_replaces_models(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"date": "2027-01-05", "models": {
        "glm-4.6": {"input": 0.6, "output": 2.2, "cache_read": 0.11},
        "claude-sonnet-4-6": {"input": 1, "output": 2}}}))
    table = load(str(path))
    assert table.rates("glm-4.6") == {"input": 0.6, "output": 2.2, "cache_read": 0.11, "cache_write_5m": 0.6,
                                      "cache_write_1h": 0.6}
    assert table.rates("claude-sonnet-4-6")["input"] == 1 and table.rates("claude-opus-4-6")["input"] == 5
    assert table.file_date == "2027-01-05" and "2027-01-05" in table.describe()


@pytest.mark.parametrize("text, words", [
    ("not json", "not JSON"),
    ("[]", "not a JSON object"),
    ('{"models": {}}', "no \"models\""),
    ('{"models": {"x": {"input": "cheap", "output": 1}}}', "needs \"input\" and \"output\""),
    ('{"models": {"x": {"input": -1, "output": 1}}}', "needs \"input\" and \"output\""),
])
def test_a_prices_file_xshare_cannot_use_is_refused_with_a_reason(tmp_path, text, words):
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(PriceError, match=words):
        load(str(path))


# --- the report's sums ---------------------------------------------------------------------------


def test_exploration_dollars_are_its_share_of_the_prompt_at_the_sessions_mix():
    sums = DollarSums(shipped())
    # Opus 4.6: prompt 100k fresh ($0.50) + 900k cache reads ($0.45) = $0.95; output 10k = $0.25
    sums.add(row("claude-opus-4-6", usage(input=100_000, cache_read=900_000, output=10_000), exploration=250_000))
    # Haiku 4.5, short of its records (context 3x its bill): in the dollars, not in exploration's part
    sums.add(row("claude-haiku-4-5", usage(input=1_000_000), exploration=500_000, context=3_000_000))
    sums.add(row("MiniMax-M2.5-highspeed", usage(input=5)))
    sums.add(row("claude-opus-4-6", None, usage_unknown="no usage recorded"))
    sums.add(row(None, usage(input=7)))
    sums.add(row(None, None, api_calls=0))  # made no call: nothing to price, not "unknown"
    figures = sums.to_json()
    assert figures["dollars"] == pytest.approx(0.95 + 0.25 + 1.0)
    assert figures["exploration_dollars"] == pytest.approx(0.95 * 0.25)
    assert figures["exploration_share_of_prompt_dollars"] == pytest.approx(0.25)
    assert figures["sessions_priced"] == 2 and figures["sessions_exploration_unknown"] == 1
    assert figures["models_unpriced"] == {"MiniMax-M2.5-highspeed": 1, "no model recorded": 1}
    assert figures["sessions_without_usage"] == 1 and figures["sessions_without_calls"] == 1 and sums.sessions == 6
    text = "\n".join(sums.lines(None))
    assert "$2.20 for 2 sessions; the prompts cost $1.95, of which exploration $0.24 (25.0% of the prompts whose " \
        "share is known)" in text and "1 session whose bill is short of their records ($1.00 of the prompts)" in text
    assert "MiniMax-M2.5-highspeed: 3 calls" in text and "no token usage recorded: 1 session" in text
    assert "Cost nothing: 1 session that made no API call." in text  # every session of the count accounted for
    assert max(len(line) for line in sums.lines(60)) <= 60


def test_no_priced_session_says_unknown_not_zero():
    sums = DollarSums(shipped())
    sums.add(row("qwen-local", usage(input=100, output=10)))
    assert "unknown" in sums.lines(None)[0] and "$0.00" not in "\n".join(sums.lines(None))
    assert sums.to_json()["exploration_share_of_prompt_dollars"] is None


def test_a_remembered_row_of_several_models_without_their_split_is_not_priced_at_one_of_them():
    sums = DollarSums(shipped())
    sums.add(row("claude-sonnet-4", usage(input=1_000_000), models=["claude-sonnet-4", "claude-opus-4-1"]))
    figures = sums.to_json()
    assert figures["sessions_priced"] == 0 and figures["sessions_unpriced_old_rows"] == 1 and sums.sessions == 1
    assert "1 session that used several models" in " ".join(sums.lines(None))


# --- the command -----------------------------------------------------------------------------------


def test_the_demo_report_shows_dollars_with_the_tables_date(capsys):
    code, out, _ = run(capsys, "report", "--demo")
    assert code == 0 and f"In dollars (list prices of {shipped().date})" in out and "Assumed:" in out
    code, out, _ = run(capsys, "report", "--demo", "--json")
    dollars = json.loads(out)["dollars"]
    assert dollars["prices"]["date"] == shipped().date and dollars["sessions_priced"] > 0
    assert dollars["by_model"] and 0 < dollars["exploration_dollars"] < dollars["prompt_dollars"] < dollars["dollars"]


def test_dollars_turned_off_leave_the_token_figures_as_they_were(capsys, monkeypatch):
    _, with_dollars, _ = run(capsys, "report", "--demo", "--json")
    _, without, _ = run(capsys, "report", "--demo", "--json", "--no-dollars")
    assert json.loads(without)["dollars"] is None
    assert json.loads(without)["groups"] == json.loads(with_dollars)["groups"]
    monkeypatch.setenv("XSHARE_DOLLARS", "off")
    code, out, _ = run(capsys, "report", "--demo")
    assert code == 0 and "In dollars" not in out and "$" not in out


def test_a_prices_file_replaces_a_models_rates_in_the_report(capsys, tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"date": "2027-02-01", "models": {"claude-haiku-4-5": {"input": 100, "output": 500},
                                                                 "qwen3-coder-30b-local": {"input": 1, "output": 2}}}))
    _, before, _ = run(capsys, "report", "--demo", "--json")
    code, after, _ = run(capsys, "report", "--demo", "--json", "--prices", str(path))
    before, after = json.loads(before)["dollars"], json.loads(after)["dollars"]
    assert code == 0 and after["sessions_priced"] == before["sessions_priced"] + 1  # the gateway's model, now priced
    assert "qwen3-coder-30b-local" not in before["by_model"]
    assert after["by_model"]["qwen3-coder-30b-local"]["dollars"] > 0
    assert after["by_model"]["claude-haiku-4-5"]["dollars"] > 50 * before["by_model"]["claude-haiku-4-5"]["dollars"] > 0
    assert after["prices"]["prices_file"] == {"date": "2027-02-01", "models": ["claude-haiku-4-5",
                                                                             "qwen3-coder-30b-local"]}


@pytest.mark.parametrize("content", [None, "{not json", '{"models": []}'])
def test_a_bad_prices_file_is_refused_on_one_line(capsys, tmp_path, content):
    path = tmp_path / "prices.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "report", "--demo", "--prices", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_corpus_prices_most_of_its_claude_code_sessions(capsys):
    """On the shared corpus (skipped without it): Claude Code's models all have list prices."""
    roots = sorted((CORPUS / "claude").glob("*")) if (CORPUS / "claude").is_dir() else []
    if not roots:
        pytest.skip("no shared corpus here")
    argv = ["report", "--all", "--json", "--no-history"]
    for root in roots[:3]:
        argv += ["--claude-root", str(root)]
    code, out, _ = run(capsys, *argv)
    dollars = json.loads(out)["dollars"]
    assert code == 0 and dollars["sessions_priced"] > 0 and dollars["dollars"] > 0
    assert dollars["exploration_dollars"] <= dollars["prompt_dollars"] <= dollars["dollars"]
