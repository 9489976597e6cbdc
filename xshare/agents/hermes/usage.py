"""Hermes's billed calls that its messages do not show: title generation, compression, vision, ...

Hermes records these auxiliary calls only in `session_model_usage` (schema 22 on: rows whose `task` is not
'' ; '' is the main loop, whose sums are also the `sessions` row's columns). Their prompts are not in the
messages, yet the provider billed them: a session's bill is its main loop plus these (docs: hermes.md §4).

They are added to the session's row the way the ledger treats any bill the record does not explain: as
calls, as billed prompt, and as `overhead` in the context, with their own counts (`unrecorded_calls`,
`unrecorded_prompt_tokens`, `unrecorded_tasks`) so a reader can take them out again. Nothing of theirs is
exploration, so the exploration shares' denominators grow by exactly what the provider billed for them.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

from xshare.agents.common.sqlite import table_columns
from xshare.measure.ledger import BY_MODEL_FIELDS, OVERHEAD, set_shares, usage_sums_agree
from xshare.measure.plausible import MAX_CALLS, count, session_counts
from xshare.measure.prices import NO_MODEL, band_of
from xshare.measure.row import SessionRow
from xshare.printing import safe_label

TABLE = "session_model_usage"
_PROMPT_COLUMNS = ("input_tokens", "cache_read_tokens", "cache_write_tokens")
_USAGE_FIELDS = (("input", "input_tokens"), ("cache_read", "cache_read_tokens"),
                 ("cache_write_5m", "cache_write_tokens"), ("output", "output_tokens"))


IMPOSSIBLE = "Hermes auxiliary usage rows with impossible counts skipped"


def read_auxiliary(connection: sqlite3.Connection,
                   problems: Counter) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """session id -> task -> model (NO_MODEL where the row names none) -> summed counts of its auxiliary rows;
    {} for databases without the table or without its `task` column (before schema 22 every row there was main
    loop). A row with an impossible count (xshare/measure/plausible.py) is skipped and counted in `problems`."""
    columns = table_columns(connection, TABLE)
    wanted = ("api_call_count", *_PROMPT_COLUMNS, "output_tokens")
    if not {"session_id", "task"} <= columns:
        return {}
    select = ", ".join(f'"{name}"' if name in columns else "0" for name in wanted)
    model_column = '"model"' if "model" in columns else "NULL"
    found: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    query = f"SELECT session_id, task, {model_column}, {select} FROM {TABLE} WHERE task IS NOT NULL AND task != ''"
    for session_id, task, model, calls, *tokens in connection.execute(query):
        calls_checked = count(calls, MAX_CALLS)
        tokens_checked = session_counts(tokens, calls_checked or 0)
        if calls_checked is None or tokens_checked is None:
            problems[IMPOSSIBLE] += 1
            continue
        checked = [calls_checked, *tokens_checked]
        # a task name is printed and published as a label: one that is not a plain word is `other`
        models = found.setdefault(str(session_id), {}).setdefault(safe_label(str(task)), {})
        counts = models.setdefault(model if isinstance(model, str) and model else NO_MODEL, dict.fromkeys(wanted, 0))
        for name, value in zip(wanted, checked, strict=True):
            counts[name] += value
    return found


def add_unrecorded(row: SessionRow, tasks: dict[str, dict[str, dict[str, int]]] | None) -> SessionRow:
    """The session's row with its auxiliary calls billed in (see the module docstring), each model's at its
    model (usage_by_model, in the band of its average call); every Hermes row gets the three counts, zero
    when there were none."""
    tasks = tasks or {}
    by_model: dict[str, dict[str, int]] = {}
    for models in tasks.values():
        for model, counts in models.items():
            summed = by_model.setdefault(model, dict.fromkeys(counts, 0))
            for name, value in counts.items():
                summed[name] += value
    calls = sum(counts["api_call_count"] for counts in by_model.values())
    prompt = sum(counts[name] for counts in by_model.values() for name in _PROMPT_COLUMNS)
    row["unrecorded_calls"] = calls
    row["unrecorded_prompt_tokens"] = prompt
    row["unrecorded_tasks"] = {task: sum(counts["api_call_count"] for counts in models.values())
                               for task, models in sorted(tasks.items())}
    if not calls and not prompt:
        return row
    row["api_calls"] += calls
    row["prompt_tokens_billed"] += prompt
    row["billed_tokens"][OVERHEAD] += prompt
    row["context_tokens"] += prompt
    for model, counts in by_model.items():
        own_prompt = sum(counts[name] for name in _PROMPT_COLUMNS)
        band = band_of(own_prompt // counts["api_call_count"] if counts["api_call_count"] else 0)
        entry = row["usage_by_model"].setdefault(model, {}).setdefault(band, dict.fromkeys(BY_MODEL_FIELDS, 0))
        entry["calls"] += counts["api_call_count"]
        for field, column in _USAGE_FIELDS:
            row["usage"][field] = row["usage"].get(field, 0) + counts[column]
            entry[field] += counts[column]
    assert usage_sums_agree(row), "an auxiliary call reached the row's usage but not its model's"
    return set_shares(row)
