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

from xshare.measure.ledger import CATEGORIES, OVERHEAD, USAGE_FIELDS, set_shares
from xshare.state.store import dumps, loads


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


def complete_with_unrecorded(main_row: dict, family_rows: list[dict]) -> dict:
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
    row = dict(main_row)
    row["billed_tokens"] = {name: main_row["billed_tokens"][name] + billed[name] for name in CATEGORIES}
    row["api_calls"] = main_row["api_calls"] + calls
    row["prompt_tokens_billed"] = main_row["prompt_tokens_billed"] + unrecorded
    row["context_tokens"] = main_row["context_tokens"] + sum(billed.values())
    row["usage"] = _usage(main_row["usage"], cost, rows)
    row["unrecorded_calls"] = calls
    row["unrecorded_prompt_tokens"] = unrecorded
    return set_shares(row)


def _usage(own: dict, cost: dict, rows: list[dict]) -> dict[str, int]:
    """The main row's usage plus, field by field, what the totals exceed the family's records by."""
    return {name: own[name] + max(0, cost.get(name, 0) - sum(row["usage"][name] for row in rows))
            for name in USAGE_FIELDS}


def complete_rows(rows: list[dict]) -> list[dict]:
    """Every Claude Code session row completed with its family (rows whose `parent` is its id)."""
    children: dict[str, list[dict]] = {}
    for row in rows:
        if row.get("agent") == "claude-code" and row.get("parent"):
            children.setdefault(row["parent"], []).append(row)
    return [complete_with_unrecorded(row, children.get(row["id"], [])) if row.get("agent") == "claude-code" else row
            for row in rows]


def complete_packed(items: list[bytes]) -> list[bytes]:
    """complete_rows() over rows kept as JSON bytes (xshare.sessions.packed), in place: only a completed row is
    decoded and packed again; of a subagent's row only what completing its parent reads is kept."""
    children: dict[str, list[dict]] = {}
    owners = []
    for index, item in enumerate(items):
        row = loads(item)
        if row.get("agent") != "claude-code":
            continue
        if row.get("parent"):
            children.setdefault(row["parent"], []).append(
                {"prompt_tokens_billed": row["prompt_tokens_billed"], "usage": row["usage"],
                 "compaction_snapshots": row.get("compaction_snapshots")})
        elif row.get("cost_state"):
            owners.append(index)
    for index in owners:
        row = loads(items[index])
        items[index] = dumps(complete_with_unrecorded(row, children.get(row["id"], [])))
    return items
