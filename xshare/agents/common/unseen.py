"""Calls an agent is billed for that no file of it records, so xshare can neither count nor measure them,
only say that they happened (a session row's `unseen_calls`: what, by key, and how many at most).

Claude Code's compactions and Hermes's auxiliary calls are recorded somewhere (usage totals, a per-model
table) and are counted (`unrecorded_*`); Hermes's background reviews are estimated (`unrecorded_reviews`).
These are the other agents' calls of that kind, found by driving their real CLIs against a fake server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

FIELD: Final = "unseen_calls"  # row and group field: {key: calls}

WHAT = {
    # Codex 0.171's app-server (the TUI, the IDE extension) starts a separate title thread for a new thread:
    # one request re-sending the base prompt; no rollout, no usage record holds it
    "codex_title": "title request{s} Codex's TUI makes for a new thread (about 6-13k prompt tokens each)",
    # Gemini CLI 0.61 with the model left on auto (its default) asks a small model which model should answer
    # each prompt; with -m it does not ask, and the chat file does not say which was the case
    "gemini_router": "model-router request{s} Gemini CLI makes before a prompt when the model is on auto "
                     "(its default; about 500-900 prompt tokens each), at most one a prompt",
    # OpenCode 1.18 names a new top-level session with one request without tools (SessionPrompt.ensureTitle);
    # neither its steps nor the session's totals record it (agents/opencode/reader.py)
    "opencode_title": "title request{s} OpenCode makes to name a new session (about 600 prompt tokens each)",
    # Kilo CLI 7.7, OpenCode's fork, does the same (agents/kilo/reader.py)
    "kilo_title": "title request{s} Kilo CLI makes to name a new session",
    # Qwen Code 0.24.4's TUI asks the model, after each turn, what the person might type next (SUGGESTION MODE):
    # the whole conversation again, with tools; neither the chat nor ~/.qwen/usage records it; print mode does not
    "qwen_suggestion": "next-prompt suggestion request{s} Qwen Code's TUI makes after a turn (each re-sending the "
                       "whole conversation), at most one a prompt",
}


def counts(value: object) -> dict[str, int]:
    """A row's or a group's unseen calls, keeping only well-formed entries (a rows file may hold anything)."""
    if not isinstance(value, Mapping):
        return {}
    return {key: count for key, count in value.items() if key in WHAT and type(count) is int and count > 0}


def notes(value: object) -> list[str]:
    """One phrase per kind of unseen call, e.g. 'up to 3 model-router requests ...'."""
    return [f"up to {count:,} {WHAT[key].format(s='' if count == 1 else 's')}, recorded nowhere"
            for key, count in sorted(counts(value).items())]
