"""Claude Code's own usage totals (`cost-state` rows, 2.1.3xx), in the ledger's terms.

A cost-state row holds the session's cumulative usage per model since it started, including calls no
transcript records (compactions). Only its token counts are kept; cost and durations are not.
"""

from __future__ import annotations

# modelUsage field -> the ledger's usage field
_FIELDS = (
    ("inputTokens", "input"),
    ("cacheReadInputTokens", "cache_read"),
    ("outputTokens", "output"),
)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _model_totals(usage: dict) -> dict[str, int]:
    totals = {ours: _int(usage.get(theirs)) for theirs, ours in _FIELDS}
    # as in per-call usage: the larger of the flat cache-write figure and its 5m/1h split
    one_hour = _int(usage.get("cacheCreationEphemeral1hInputTokens"))
    split = _int(usage.get("cacheCreationEphemeral5mInputTokens")) + one_hour
    write = max(_int(usage.get("cacheCreationInputTokens")), split)
    totals["cache_write_5m"] = write - one_hour
    totals["cache_write_1h"] = one_hour
    return totals


def cost_totals(row: dict) -> dict | None:
    """{prompt, input, cache_read, cache_write_5m, cache_write_1h, output} summed over models, and
    `by_model` (each model's own, so the calls no file recorded are priced at their model), or None when
    the row holds no usable modelUsage."""
    models = row.get("modelUsage")
    if not isinstance(models, dict):
        return None
    totals = dict.fromkeys(("input", "cache_read", "cache_write_5m", "cache_write_1h", "output"), 0)
    by_model = {}
    for model, usage in models.items():
        if isinstance(usage, dict):
            own = by_model[str(model)] = _model_totals(usage)
            for name, value in own.items():
                totals[name] += value
    if not by_model:
        return None
    prompt = totals["input"] + totals["cache_read"] + totals["cache_write_5m"] + totals["cache_write_1h"]
    return {"prompt": prompt, **totals, "by_model": by_model}
