"""Hermes's background memory/skill review: billed calls that Hermes records nowhere in state.db.

hermes-agent 0.13.0 to 0.19.0 (run_agent.py; 0.16 on agent/conversation_loop.py, 0.19 agent/turn_context.py
and agent/turn_finalizer.py; the fork in agent/background_review.py): after a turn that ended with a reply,
Hermes forks the agent in a background thread, which re-sends the whole conversation plus a review prompt
(up to 16 iterations), when
  * skill review: `_iters_since_skill` reached `skills.creation_nudge_interval` (10). It counts the main
    loop's API calls across turns, goes back to 0 when the agent calls `skill_manage` or a review runs;
  * memory review: the 10th user turn since the memory tool was last used (`memory.nudge_interval` 10;
    a resumed session counts its earlier user turns).
The fork shares the session's id but never writes it down (0.19: `_persist_disabled`; earlier: it has no
SessionDB), so neither `sessions`, `messages` nor `session_model_usage` holds its calls or tokens; only
Hermes's agent.log (INFO `API call #N ... in=...` lines, rotated at 5 MB) does. So xshare cannot count
them: it estimates how many reviews a session's turns called for, with Hermes's default intervals (a
changed interval, a toolset switched off, a process restart or an early exit make the estimate high or
low), and the report says they exist and are not counted.
"""

from __future__ import annotations

INTERVAL = 10  # both nudge intervals' defaults, in every version read
SKILL_TOOL, MEMORY_TOOL = "skill_manage", "memory"
# old builds did write the fork's prompt into the session (hermes_state._REVIEW_HARNESS_PREFIXES): recorded,
# so not unrecorded, and not a user turn either
HARNESS_PREFIXES = ("Review the conversation above and update the skill library",
                    "Review the conversation above and consider saving to memory")


class _Counters:
    def __init__(self) -> None:
        self.iterations = 0  # _iters_since_skill
        self.turns = 0  # _turns_since_memory
        self.memory_due = False
        self.replied = False  # the turn's last call ended it with text
        self.reviews = 0

    def start_turn(self) -> None:
        self.turns += 1
        self.memory_due = self.turns >= INTERVAL
        if self.memory_due:
            self.turns = 0
        self.replied = False

    def end_turn(self) -> None:
        skill_due = self.iterations >= INTERVAL
        if skill_due:
            self.iterations = 0  # reset even when no review follows (an interrupted turn)
        if self.replied and (skill_due or self.memory_due):
            self.reviews += 1  # one fork does both reviews


def background_reviews(rows: list[dict], calls: set[int], copies: set[int]) -> int:
    """How many background reviews the session's turns called for. `rows`: its messages in id order, with
    `role`, `text`, `summary` and (assistant rows) `calls`; `calls`: indexes of the rows that are API calls;
    `copies`: of the rows a compaction copied (neither calls nor turns)."""
    counters = _Counters()
    in_turn = False
    for index, row in enumerate(rows):
        role = row["role"]
        if role == "user" and index not in copies and not row["summary"] and not _harness(row["text"]):
            if in_turn:
                counters.end_turn()
            counters.start_turn()
            in_turn = True
        elif index in calls:
            counters.iterations += 1  # counted as the iteration starts, before the call's tools run
            made = row.get("calls") or []
            counters.replied = not made and bool(row["text"].strip())
            for _ids, name, *_ in made:
                if name == SKILL_TOOL:
                    counters.iterations = 0
                elif name == MEMORY_TOOL:
                    counters.turns = 0
    if in_turn:
        counters.end_turn()
    return counters.reviews


def _harness(text: str) -> bool:
    return text.lstrip().startswith(HARNESS_PREFIXES)
