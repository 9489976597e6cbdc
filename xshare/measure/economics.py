"""Cache economics, one rule each for the HTML page, the live hook and the status line: token weights,
what a cache rebuild is and what caused it, what a compaction costs and saves, and when a compaction
now is worth suggesting. Standard library only, and no xshare imports but xshare.measure.timestamps (a leaf
like this one): the ledger, the HTML analysis and the hook all import it.

`Watch` applies the rules as calls stream by, keeping only what the next call needs (a few numbers
per conversation), so the live hook can say what the page says without a per-call log.
"""

from __future__ import annotations

import math

from xshare.measure.timestamps import session_time

# token weights in multiples of fresh input (the essay's table); the page shows them and lets them change
WEIGHTS = {"input": 1.0, "cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2.0, "output": 5.0}
# Anthropic caches nothing shorter than 1,024 tokens, so a smaller drop in cache reads is not a rebuild;
# nor is a drop under 5% of what was cached: in real transcripts that is a call made in parallel with
# the previous one, missing only that call's own write
MIN_REBUILD = 1024
MIN_REBUILD_SHARE = 0.05
TTL_5M_S, TTL_1H_S = 300, 3600
CAUSES = ("compaction", "model switch", "idle", "turn boundary", "other")
# the marks kept for the next call of each conversation: a bound against a file of endless prompts
_MARKS_KEPT = 256


def weighted(usage: dict, weights: dict[str, float] = WEIGHTS) -> float:
    """A call's (or a session's) tokens in multiples of fresh input."""
    return sum(usage.get(kind, 0) * weight for kind, weight in weights.items())


def compaction_economics(before: int, after: int, write_5m: int, write_1h: int, followed: int,
                         weights: dict[str, float] = WEIGHTS) -> dict:
    """Write cost (weighted), saving per later call (weighted), calls to break even, paid off or not."""
    cost = write_5m * weights["cache_write_5m"] + write_1h * weights["cache_write_1h"]
    saving = (before - after) * weights["cache_read"]
    even = math.ceil(cost / saving) if saving > 0 else None
    return {"cost": cost, "saving": saving, "break_even": even,
            "paid_off": None if even is None else followed >= even}


def likely_remaining(calls_so_far: int) -> int:
    """The calls a session is likely to still make: as many as it made since its latest compaction (or
    its start). Without a forecast, the best guess of how much longer something lasts is how long it
    has lasted; it also keeps the nudge quiet early, when little is known."""
    return max(0, calls_so_far)


def compaction_nudge(before: int, after: int, one_hour: bool, calls_so_far: int,
                     weights: dict[str, float] = WEIGHTS) -> dict | None:
    """THE rule for suggesting /compact (the page's "a compaction now" card and the status line): a
    compaction now rewrites `after` tokens to the cache (at the session's usual lifetime) and takes
    `before - after` off every later call; suggest it only when that pays back within the calls the
    session is likely to still make. Returns the figures to say, or None (no suggestion)."""
    write = (0, after) if one_hour else (after, 0)
    money = compaction_economics(before, after, *write, 0, weights)
    remaining = likely_remaining(calls_so_far)
    if money["break_even"] is None or money["break_even"] > remaining:
        return None
    return {"fewer": before - after, "saving": money["saving"], "cost": money["cost"],
            "break_even": money["break_even"], "remaining": remaining}


def duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes / 60
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.1f} days"


def _write(usage: dict) -> int:
    return usage.get("cache_write_5m", 0) + usage.get("cache_write_1h", 0)


def rebuild_causes(marks: list[list], old_model: str | None, new_model: str | None,
                   gap: float | None, ttl: int) -> list[tuple[str, str]]:
    """Why the cache was rebuilt, most likely first, each rebuild counted under the first alone: a compaction
    or microcompaction since the previous call, a model switch, a gap longer than 5 minutes (idle), a
    person's prompt (turn boundary). A gap of 5 to 60 minutes is idle even where the conversation writes
    1-hour entries: a rebuild after it shows that what it re-wrote had expired (Claude Code caches parts of
    its context for 5 minutes; on the corpus such a gap preceded a rebuild 36% of the time, under a minute 4%)."""
    causes: list[tuple[str, str]] = []
    compactions = sum(1 for mark in marks if mark[1] == "compaction")
    cleared = sum(mark[2] or 0 for mark in marks if mark[1] == "trimmed")
    if compactions:
        causes.append(("compaction", "/compact or auto-compact"))
    elif cleared:
        causes.append(("compaction", f"microcompaction cleared {cleared:,} tool result(s)"))
    if old_model and new_model and old_model != new_model:
        causes.append(("model switch", f"{old_model} \u2192 {new_model}"))
    if gap is not None and gap > TTL_5M_S:
        life = ("past 5-minute entries' lifetime; the conversation writes 1-hour entries too"
                if ttl == TTL_1H_S and gap <= ttl else f"cache lifetime {'1 h' if ttl == TTL_1H_S else '5 min'}")
        causes.append(("idle", f"{duration(gap)} since the previous call ({life})"))
    if any(mark[1] == "prompt" for mark in marks):
        causes.append(("turn boundary", "a prompt was sent"))
    return causes


def _thread_of(mark: list) -> str:
    return mark[3] if len(mark) > 3 else "main"  # a state saved before marks named their thread


class Watch:
    """The economics of a stream of calls, one call at a time; its state is plain JSON.

    Feed it every marker (`mark`: compaction, trimmed, prompt) and every call (`call`) in order."""

    def __init__(self, state: dict | None = None) -> None:
        state = state or {}
        self.calls: int = state.get("calls", 0)
        self.previous: dict[str, dict] = state.get("previous", {})  # per conversation: its last call
        self.marks: list[list] = state.get("marks", [])  # [at, kind, value]
        self.rebuilds: int = state.get("rebuilds", 0)
        self.last_rebuild: dict | None = state.get("last_rebuild")
        self.last: dict | None = state.get("last")  # the last call: prompt, usage, at
        self.compacted_at: int | None = state.get("compacted_at")  # the first call after the latest compaction
        self.after: int | None = state.get("after")  # that call's prompt
        self.pending_compaction: bool = state.get("pending_compaction", False)
        self.written: list[int] = state.get("written", [0, 0])  # 5-minute and 1-hour cache writes, all calls
        self.read_seen: bool = state.get("read_seen", False)  # a cache read recorded on some call

    def to_state(self) -> dict:
        return {"calls": self.calls, "previous": self.previous, "marks": self.marks, "rebuilds": self.rebuilds,
                "last_rebuild": self.last_rebuild, "last": self.last, "compacted_at": self.compacted_at,
                "after": self.after, "pending_compaction": self.pending_compaction, "written": self.written,
                "read_seen": self.read_seen}

    def mark(self, kind: str, value: object = None, thread: str = "main") -> None:
        """An event before the next call of `thread`: a rebuild in another thread (an inline subagent) is
        not blamed on it."""
        self.marks.append([self.calls, kind, value, thread])
        if kind == "compaction":
            self.pending_compaction = True
        if len(self.marks) > _MARKS_KEPT:
            del self.marks[: len(self.marks) - _MARKS_KEPT]

    def call(self, prompt: int, usage: dict, *, thread: str = "main", model: str | None = None,
             time: str | None = None, carried_conversation: int = 0,
             context: dict[str, int] | None = None) -> dict | None:
        """One API call; returns the rebuild it was, if it was one. `carried_conversation`: the
        overhead plus conversation text it carried (what a summary would stand in for); `context`: what it
        carried by category (the status line's `{fill}`), kept for the last call only."""
        index = self.calls
        self.calls += 1
        before = self.previous.get(thread)
        ttl_sums = before["ttl"] if before else [0, 0]
        ttl = TTL_1H_S if ttl_sums[1] > ttl_sums[0] else TTL_5M_S
        found = self._rebuild(index, before, usage, model, time, ttl, thread) if before else None
        write_5m, write_1h = usage.get("cache_write_5m", 0), usage.get("cache_write_1h", 0)
        self.previous[thread] = {"at": index, "read": usage.get("cache_read", 0), "write": write_5m + write_1h,
                                 "input": usage.get("input", 0), "model": model, "time": time,
                                 "ttl": [ttl_sums[0] + write_5m, ttl_sums[1] + write_1h]}
        self.read_seen = self.read_seen or usage.get("cache_read", 0) > 0
        self.written[0] += write_5m
        self.written[1] += write_1h
        if self.pending_compaction:
            self.pending_compaction, self.compacted_at, self.after = False, index, prompt
        self.last = {"at": index, "prompt": prompt, "usage": dict(usage), "carried": carried_conversation}
        if context is not None:
            self.last["context"] = context
        marks = self.marks
        if marks:  # marks are in call order: those no conversation's next call needs are a prefix
            oldest = min(entry["at"] for entry in self.previous.values())
            if marks[0][0] <= oldest:
                self.marks = [mark for mark in marks if mark[0] > oldest]
        if found:
            self.rebuilds += 1
            self.last_rebuild = {key: found[key] for key in ("call", "time", "cause", "detail")}
        return found

    def _rebuild(self, index: int, before: dict, usage: dict, model: str | None, time: str | None,
                 ttl: int, thread: str) -> dict | None:
        """The rule: the cache read fell at least MIN_REBUILD tokens and MIN_REBUILD_SHARE below what the
        previous call of the same conversation left cached, while this call wrote at least MIN_REBUILD.

        Where no cache write was ever recorded but reads were (Codex CLI, Gemini CLI: the provider caches a
        prompt by itself), what a call left cached is its whole prompt (read plus fresh input), and the
        tokens that fell out are re-sent as fresh input: a rebuild is such a fall with at least MIN_REBUILD
        of them in this call's fresh input ("resent")."""
        read, written = usage.get("cache_read", 0), _write(usage)
        resent = not written and self.written == [0, 0] and self.read_seen
        expected = before["read"] + (before.get("input", 0) if resent else before["write"])
        drop = expected - read
        rewritten = min(usage.get("input", 0) if resent else written, drop)
        if drop < MIN_REBUILD or drop < MIN_REBUILD_SHARE * expected or rewritten < MIN_REBUILD:
            return None
        start, end = session_time(before["time"]), session_time(time)  # a 9999 or 1970 time makes no gap
        gap = (end - start).total_seconds() if start and end else None
        between = [mark for mark in self.marks if mark[0] > before["at"] and _thread_of(mark) == thread]
        causes = rebuild_causes(between, before["model"], model, gap, ttl)
        cause, detail = causes[0] if causes else ("other", "no compaction, switch, idle gap or prompt")
        if resent:
            detail += " (tokens cached before re-sent as fresh input: this agent records no cache writes)"
        return {"call": index, "time": time, "cause": cause, "detail": detail,
                "also": [name for name, _ in causes[1:]], "expected": expected, "read": read,
                "written": written, "rewritten": rewritten,
                "rewritten_1h": round(rewritten * usage.get("cache_write_1h", 0) / written) if written else 0,
                "gap": gap, "resent": resent, "model": model}

    def nudge(self) -> dict | None:
        """The compaction suggestion after the last call (compaction_nudge's rule), measured from this
        session: after its latest compaction, what that compaction left; before one, the overhead and
        conversation text the last call carried (a floor)."""
        if self.last is None:
            return None
        measured = self.after is not None
        after = self.after if self.after is not None else self.last["carried"]
        since = self.calls - (self.compacted_at or 0)
        found = compaction_nudge(max(self.last["prompt"], after), after, self.written[1] > self.written[0], since)
        return found and {**found, "basis": "measured" if measured else "floor"}
