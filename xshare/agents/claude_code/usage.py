"""One Claude Code usage snapshot (`message.usage`) in the ledger's terms, or None when it cannot be a bill.

A usage whose token fields are strings, negative, fractional, NaN/inf or absurdly large, or whose prompt adds
up to nothing or to more than one call can carry (the rule of xshare/measure/plausible.py, every agent's), is not a
bill: taken as 0 it would become a call billed 0 tokens whose cap trims the whole context. The reader
reports such a row and counts no call for it (see ClaudeTranscript._assistant).
A missing or null field is 0, as the API leaves out what does not apply (cache fields, the 5m/1h split).
"""

from __future__ import annotations

from xshare.measure.plausible import MAX_TOKENS, count

__all__ = ["MAX_TOKENS", "call_usage"]
_tokens = count  # the rule every agent's calls are held to (xshare/measure/plausible.py)


def call_usage(usage: object) -> list[int] | None:
    """[prompt, input, cache_read, cache_write_5m, cache_write_1h, output] of one usage snapshot, or None.

    Cache writes: the larger of the flat field and its 5m/1h split, since each has been observed
    reading 0 while the other was set (2.1.152 fixed one; gateways send only the flat one).
    """
    if not isinstance(usage, dict):
        return None
    fresh = _tokens(usage.get("input_tokens"))
    read = _tokens(usage.get("cache_read_input_tokens"))
    flat = _tokens(usage.get("cache_creation_input_tokens"))
    output = _tokens(usage.get("output_tokens"))
    split = usage.get("cache_creation")
    five: int | None = 0
    one_hour: int | None = 0
    if isinstance(split, dict):
        five = _tokens(split.get("ephemeral_5m_input_tokens"))
        one_hour = _tokens(split.get("ephemeral_1h_input_tokens"))
    elif split is not None:
        return None
    if fresh is None or read is None or flat is None or output is None or five is None or one_hour is None:
        return None
    write = max(flat, five + one_hour)
    prompt = fresh + read + write
    if prompt == 0 or prompt > MAX_TOKENS:
        return None  # every real call sends a prompt; Claude Code's own notices are <synthetic>, skipped
    return [prompt, fresh, read, write - one_hour, one_hour, output]
