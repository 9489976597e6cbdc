"""Calls Claude Code billed but wrote into no transcript, charged to the session that made them.

Since 2.1.3xx a compaction's call is recorded nowhere (older versions wrote it as an
`agent-acompact-*` file, measured as an internal row), but Claude Code's own usage totals
(`cost-state`) include it. For a session (its main file and every file under its subagents/ folder,
the family) the unrecorded prompt tokens are the last totals minus every call the family recorded.

They are charged as compaction calls: the reader kept, at each compaction those totals cover, a
snapshot of what was present then (by category), the thread's overhead, and its size in the provider's
tokens (the thread's last bill plus what was added since). Each snapshot takes a share
of the unrecorded tokens in proportion to its size; its call count is that share over the size,
rounded (Claude Code retries a compaction whose reply it rejects, each retry carrying it all again).
Each call carries the snapshot's categories; what the share exceeds them by (the overhead and the
compaction instruction, which Claude Code writes, like its system prompt) is overhead. Tokens with no
snapshot to explain them (a side call of unknown size) are overhead with no call counted: a call
count would be invented. `api_calls` and `prompt_tokens_billed` then equal what the provider billed.

One function serves the report, `xshare session` and the live hook, so all three agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xshare.agents.claude_code.files import AGENT
from xshare.measure.ledger import BY_MODEL_FIELDS, CATEGORIES, OVERHEAD, USAGE_FIELDS, set_shares, usage_sums_agree
from xshare.measure.prices import NO_MODEL, band_of
from xshare.measure.row import SessionRow
from xshare.state.store import dumps, loads

# what the main row's completion reads of each row of its family: a whole row, or (packed rows) the few
# fields complete_packed keeps
FamilyPart = Mapping[str, Any]


def _size(snapshot: dict) -> int:
    """What the compaction call carried in the provider's tokens (see ClaudeTranscript._snapshot)."""
    return snapshot.get("size", sum(snapshot["present"].values()) + snapshot["overhead"])


def _charge_snapshot(tokens: int, snapshot: dict, billed: dict[str, int]) -> int:
    """Charge `tokens` as this compaction's calls; returns how many calls they were."""
    size = _size(snapshot)
    calls = int(tokens / size + 0.5) if size > 0 else 0
    if calls == 0:
        billed[OVERHEAD] += tokens  # far less than the context then present: not that compaction's call
        return 0
    present_total = sum(snapshot["present"].values())
    carried = calls * present_total
    scale = min(1.0, tokens / carried) if carried else 0.0
    charged = 0
    for category, present in snapshot["present"].items():
        part = int(calls * present * scale)
        billed[category] += part
        charged += part
    billed[OVERHEAD] += tokens - charged
    return calls


def charge_unrecorded(tokens: int, snapshots: list[dict]) -> tuple[int, dict[str, int]]:
    """(calls, billed tokens by category) for `tokens` unrecorded prompt tokens over these compactions."""
    billed = dict.fromkeys(CATEGORIES, 0)
    sizes = [_size(snapshot) for snapshot in snapshots]
    whole = sum(sizes)
    if tokens <= 0:
        return 0, billed
    if whole <= 0:
        billed[OVERHEAD] += tokens
        return 0, billed
    calls, left = 0, tokens
    for index, (snapshot, size) in enumerate(zip(snapshots, sizes, strict=True)):
        part = left if index == len(snapshots) - 1 else tokens * size // whole
        left -= part
        calls += _charge_snapshot(part, snapshot, billed)
    return calls, billed


def complete_with_unrecorded(main_row: SessionRow, family_rows: Sequence[FamilyPart]) -> SessionRow:
    """The session's row with the calls its family did not record; unchanged without usage totals.

    Apply it once, to rows as the reader made them (it adds to the figures it finds).
    """
    cost = main_row.get("cost_state")
    if not cost or main_row.get("parent"):
        return main_row
    rows = [main_row, *family_rows]
    recorded = sum(row["prompt_tokens_billed"] for row in rows)
    unrecorded = max(0, cost["prompt"] - recorded)
    snapshots = [snapshot for row in rows for snapshot in row.get("compaction_snapshots") or ()
                 if snapshot.get("covered")]
    calls, billed = charge_unrecorded(unrecorded, snapshots)
    row = main_row.copy()
    row["billed_tokens"] = {name: main_row["billed_tokens"][name] + billed[name] for name in CATEGORIES}
    row["api_calls"] = main_row["api_calls"] + calls
    row["prompt_tokens_billed"] = main_row["prompt_tokens_billed"] + unrecorded
    row["context_tokens"] = main_row["context_tokens"] + sum(billed.values())
    extra = _extra_usage(cost, rows)
    row["usage"] = {name: main_row["usage"][name] + extra[name] for name in USAGE_FIELDS}
    if "usage_by_model" in main_row:
        row["usage_by_model"] = _with_unrecorded_models(main_row, extra, calls, unrecorded, cost, rows)
    row["unrecorded_calls"] = calls
    row["unrecorded_prompt_tokens"] = unrecorded
    assert usage_sums_agree(row), "the calls no file recorded reached the row's usage but not a model's"
    return set_shares(row)


def _extra_usage(cost: dict, rows: Sequence[FamilyPart]) -> dict[str, int]:
    """Field by field, what the totals exceed the family's records by."""
    return {name: max(0, cost.get(name, 0) - sum(row["usage"][name] for row in rows)) for name in USAGE_FIELDS}


def _with_unrecorded_models(main_row: SessionRow, extra: dict[str, int], calls: int, prompt: int, cost: dict,
                            rows: Sequence[FamilyPart]) -> dict:
    """The main row's usage_by_model with the unrecorded usage added to the models whose own totals exceed
    the family's records of them (each field shared in proportion to those excesses), so each is priced at its
    model. Their calls go to the model with the most unrecorded prompt, in the band of the average call."""
    excess = {}
    for model, totals in (cost.get("by_model") or {}).items():
        recorded = _recorded(model, rows)
        excess[model] = {name: max(0, totals.get(name, 0) - recorded[name]) for name in USAGE_FIELDS}
    if not any(any(fields.values()) for fields in excess.values()):  # totals of no model: the session's own
        excess = {main_row.get("model") or NO_MODEL: dict(extra)}
    shares = {model: dict.fromkeys(BY_MODEL_FIELDS, 0) for model in excess}
    for name in USAGE_FIELDS:
        weights = {model: fields[name] for model, fields in excess.items()}
        for model, part in _split(extra[name], weights).items():
            shares[model][name] = part
    busiest = max(shares, key=lambda model: (sum(shares[model][name] for name in USAGE_FIELDS[:4]), model))
    shares[busiest]["calls"] = calls
    by_model = {model: {band: dict(entry) for band, entry in bands.items()}
                for model, bands in main_row["usage_by_model"].items()}
    for model, added in shares.items():
        if not any(added.values()):
            continue
        band = band_of(prompt // calls if calls and model == busiest else 0)
        entry = by_model.setdefault(model, {}).setdefault(band, dict.fromkeys(BY_MODEL_FIELDS, 0))
        for name, value in added.items():
            entry[name] += value
    return by_model


def _recorded(model: str, rows: Sequence[FamilyPart]) -> dict[str, int]:
    entries = [entry for row in rows for entry in (row.get("usage_by_model") or {}).get(model, {}).values()]
    return {name: sum(entry.get(name, 0) for entry in entries) for name in USAGE_FIELDS}


def _split(total: int, weights: dict[str, int]) -> dict[str, int]:
    """`total` in whole tokens in proportion to the weights (all of it to the first model when none weighs)."""
    whole = sum(weights.values())
    if not whole:
        return {next(iter(weights)): total}
    parts = {model: total * weight // whole for model, weight in weights.items()}
    heaviest = max(weights, key=lambda model: (weights[model], model))
    parts[heaviest] += total - sum(parts.values())
    return parts


def complete_packed(items: list[bytes]) -> list[bytes]:
    """Every session row completed with its family (rows whose `parent` is its id), over rows kept as JSON bytes
    (xshare.agents.common.packed), in place: only a completed row is decoded and packed again; of a subagent's row
    only what completing its parent reads is kept. A row with no `cost_state` is not decoded to find that out
    (nearly every row of a warm report), nor, where no row has one, the rows with a `parent`."""
    owners = [index for index, item in enumerate(items) if _may_hold(item, _COST_STATE) and _owner(loads(item))]
    if not owners:
        return items
    children: dict[str, list[FamilyPart]] = {}
    for item in items:
        row = loads(item) if _may_hold(item, _PARENT) else None
        if row is not None and row.get("agent") == AGENT and row.get("parent"):
            children.setdefault(row["parent"], []).append(
                {"prompt_tokens_billed": row["prompt_tokens_billed"], "usage": row["usage"],
                 "usage_by_model": row.get("usage_by_model"), "compaction_snapshots": row.get("compaction_snapshots")})
    for index in owners:
        row = loads(items[index])
        items[index] = dumps(complete_with_unrecorded(row, children.get(row["id"], [])))
    return items


_COST_STATE, _PARENT = b'"cost_state"', b'"parent"'


def _may_hold(item: bytes, key: bytes) -> bool:
    """Whether a row's JSON may give `key` a value: not when the key is in its bytes once, followed by null, as
    store.dumps writes an empty field (a key cannot hide in a string: its quotes would be escaped)."""
    return item.count(key) != 1 or key + b":null" not in item


def _owner(row: SessionRow) -> bool:
    """A session's own row whose cost waits on its family's (not a subagent's: it has a parent)."""
    return row.get("agent") == AGENT and not row.get("parent") and bool(row.get("cost_state"))
