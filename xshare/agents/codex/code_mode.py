"""Codex's code mode (0.171's default GPT-6 models): every action is one custom tool, `exec`, whose input
is JavaScript calling nested tools (`await tools.exec_command({cmd: "cat a.py"})`, `tools.apply_patch(...)`).

The script alone does not say what ran (a command can be built at run time), but the rollout does: each
nested call that ran is an `item_completed` event between the `exec` call and its output, a
`CommandExecution` with its argv or a `FileChange` with its paths. So an `exec` call takes its category
from what it did, judged by the same rules as the other tools (measure/tool_tables.py):
  edit         any nested FileChange (a script that edits is an edit, whatever else it read)
  exploration  every nested action a command that only reads (the read-only shell rule)
  shell        any other command, without a FileChange
  web          only web searches
  other        no nested action, or anything else (MCP tools, subagents, mixed reads and web)
Its arguments (the script) and its output take that category. The call that produced the `exec` is
counted before its nested events arrive (0.171 writes the usage record first), so the call's text joins
the context once its category is known: at its output, at the next call, or at the end of the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xshare.agents.common.replay import Replay, as_text
from xshare.measure.classify import EDIT, EXPLORATION, OTHER, SHELL, WEB, explain_command
from xshare.measure.tool_tables import argv_command

# completed items that are not actions of a script: the conversation around it
NOT_ACTIONS = frozenset({"UserMessage", "AgentMessage", "Reasoning", "Plan", "ContextCompaction", "HookPrompt"})


def action_category(item: dict) -> str:
    """The category of one nested action, from its item_completed record."""
    kind = item.get("type")  # compared, never hashed: a damaged file may hold anything here
    if kind == "FileChange":
        return EDIT
    if kind == "WebSearch":
        return WEB
    if kind != "CommandExecution":
        return OTHER
    command = item.get("command")
    text = argv_command(command) if isinstance(command, list) else command if isinstance(command, str) else None
    return explain_command(text).category if text else SHELL


def script_category(actions: list[str]) -> str:
    found = set(actions)
    if EDIT in found:
        return EDIT
    if found == {EXPLORATION}:
        return EXPLORATION
    if SHELL in found:
        return SHELL
    return WEB if found == {WEB} else OTHER


@dataclass
class _Exec:
    script: str
    actions: list[str] = field(default_factory=list)
    produced: bool = False  # the call that produced it has been counted
    added: bool = False  # its script is in the context


class CodeMode:
    """The open `exec` calls of one rollout, fed to its replay once their category is known."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.open: dict[str, _Exec] = {}

    def call(self, call_id: object, script: object) -> None:
        key = call_id if isinstance(call_id, str) and call_id else f"#{len(self.open)}"
        self.open[key] = _Exec(script if isinstance(script, str) else as_text(script))

    def is_open(self, call_id: object) -> bool:
        return isinstance(call_id, str) and call_id in self.open

    def nested(self, item: object) -> None:
        """An item_completed event: an action of the latest open script (calls run one at a time), if any."""
        if not isinstance(item, dict) or not self.open or str(item.get("type")) in NOT_ACTIONS:
            return
        next(reversed(self.open.values())).actions.append(action_category(item))

    def result(self, call_id: str, text: str) -> None:
        found = self.open.pop(call_id)
        self._add_script(found)
        self.replay.add(script_category(found.actions), text)

    def before_call(self) -> None:
        """A new call carries every script whose own call was counted before it."""
        for found in self.open.values():
            if found.produced:
                self._add_script(found)

    def after_call(self) -> None:
        for found in self.open.values():
            found.produced = True

    def close(self) -> None:
        for found in self.open.values():
            self._add_script(found)
        self.open.clear()

    def _add_script(self, found: _Exec) -> None:
        if not found.added:
            found.added = True
            self.replay.add(script_category(found.actions), f"exec {found.script}".strip())
