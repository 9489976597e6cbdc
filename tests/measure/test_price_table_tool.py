"""tools/price_table.py: xshare's price table built from a LiteLLM-shaped list (invented here): first-party text
models only, dollars per token to per million, long-prompt tiers at xshare's band bounds, cache writes only where
the provider charges a premium for them, dated duplicates dropped, retired Claude models carried over; and what
it writes is a table xshare reads."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from xshare.measure.prices import parse

TOOL = Path(__file__).resolve().parents[2] / "tools" / "price_table.py"
SOURCE = {
    "sample_spec": {"input_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"},
    "claude-haiku-5-5": {"litellm_provider": "anthropic", "mode": "chat", "input_cost_per_token": 1e-07,
                         "output_cost_per_token": 5e-07, "cache_read_input_token_cost": 1e-08,
                         "cache_creation_input_token_cost": 1.25e-07,
                         "cache_creation_input_token_cost_above_1hr": 2e-07,
                         "input_cost_per_token_above_100k_tokens": 5e-07,
                         "output_cost_per_token_above_100k_tokens": 2.5e-06,
                         "input_cost_per_token_above_100k_tokens_batches": 2.5e-07},
    "gpt-5.6": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 4e-06,
                "output_cost_per_token": 2e-05, "cache_read_input_token_cost": 4e-07,
                "cache_creation_input_token_cost": 5e-06, "input_cost_per_token_above_272k_tokens": 8e-06},
    "gpt-5.6-2026-07-09": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 4e-06,
                           "output_cost_per_token": 2e-05, "cache_read_input_token_cost": 4e-07,
                           "cache_creation_input_token_cost": 5e-06, "input_cost_per_token_above_272k_tokens": 8e-06},
    "gemini/gemini-3.7-flash": {"litellm_provider": "gemini", "mode": "chat", "input_cost_per_token": 7.5e-07,
                                "output_cost_per_token": 3.75e-06, "cache_read_input_token_cost": 7.5e-08,
                                "cache_creation_input_token_cost": 1e-06},
    "zai/glm-4.6": {"litellm_provider": "zai", "mode": "chat", "input_cost_per_token": 6e-07,
                    "output_cost_per_token": 2.2e-06, "cache_creation_input_token_cost": 0},
    "minimax/MiniMax-M3": {"litellm_provider": "minimax", "mode": "chat", "input_cost_per_token": 3e-07,
                           "output_cost_per_token": 1.2e-06, "input_cost_per_token_above_512k_tokens": 6e-07},
    "bedrock/claude-x": {"litellm_provider": "bedrock", "mode": "chat", "input_cost_per_token": 1,
                         "output_cost_per_token": 1},
    "gpt-image-2": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": 1e-06,
                    "output_cost_per_token": 1e-06},
    "text-embedding-4": {"litellm_provider": "openai", "mode": "embedding", "input_cost_per_token": 1e-07},
}
EARLIER = {"date": "2026-06-01", "models": {
    "claude-opus-4-1": {"provider": "anthropic", "input": 15, "output": 75, "cache_read": 1.5,
                        "cache_write_5m": 18.75, "cache_write_1h": 30},
    "gpt-4-old": {"provider": "openai", "input": 1, "output": 2}}}


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("price_table", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tool_builds_a_table_xshare_reads(tool, tmp_path: Path):
    (tmp_path / "litellm.json").write_text(json.dumps(SOURCE))
    (tmp_path / "earlier.json").write_text(json.dumps(EARLIER))
    out = tmp_path / "prices.json"
    assert tool.main([str(tmp_path / "litellm.json"), "--source", "LiteLLM test", "--keep",
                      str(tmp_path / "earlier.json"), "--date", "2026-12-01", "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    models = written["models"]
    assert set(models) == {"claude-haiku-5-5", "gpt-5.6", "gemini-3.7-flash", "glm-4.6", "minimax-m3",
                           "claude-opus-4-1"}  # no reseller, image, embedding, free or dated duplicate
    assert models["claude-haiku-5-5"] == {
        "provider": "anthropic", "input": 0.1, "output": 0.5, "cache_read": 0.01, "cache_write_5m": 0.125,
        "cache_write_1h": 0.2, "above": {"100000": {"input": 0.5, "output": 2.5}}}
    # OpenAI's one write rate stands for both kinds; Google's and Z.ai's writes are left to be priced as input
    assert models["gpt-5.6"]["cache_write_5m"] == models["gpt-5.6"]["cache_write_1h"] == 5.0
    assert "cache_write_5m" not in models["gemini-3.7-flash"] and "cache_write_5m" not in models["glm-4.6"]
    assert "above" not in models["minimax-m3"] and "minimax-m3 over 512K" in written["about"]
    assert models["claude-opus-4-1"]["carried"] == "from the table of 2026-06-01"
    assert written["date"] == "2026-12-01" and written["sources"]["litellm"].startswith("LiteLLM test")
    table = parse(written)
    assert table.rates("claude-haiku-5-5", "100000")["cache_read"] == 0.01  # a tier rate not given: the base's
    assert table.rates("gpt-5.6", "272000")["input"] == 8.0 and table.rates("gpt-5.6-2026-07-09")["input"] == 4.0
    assert table.rates("glm-4.6")["cache_write_5m"] == 0.6
