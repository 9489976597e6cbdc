"""How an agent's tool call is judged by its own tool table (Codex CLI, Gemini CLI, OpenCode, OpenClaw: each
table in its folder, agents/<name>/tools.py), by the same shell-command rule as Claude Code's Bash.

A table maps a tool name to its category and, for a shell tool, the argument holding the command. Codex's
oldest shell tool (`shell`, 0.36-0.55) takes an argv list such as ["bash", "-lc", "sed -n 1,80p a.py"]: a
shell's `-c`/`-lc` script is judged as the command, any other argv as its words joined. A tool no table
names is other. A table may name a wrapper, a tool that calls another by name (OpenClaw 2026.9's
`tool_call {id, args}`, `id` a tool name or a catalog id such as `openclaw:core:read`): such a call is
judged as the tool it calls, with the arguments it passes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from xshare.measure.classify import EDIT, EXPLORATION, OTHER, SHELL, WEB, as_dict, explain_command

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-cl", "-ic", "-ci", "-xc", "-ec", "-euc", "-eu"})


@dataclass(frozen=True)
class ToolTable:
    """One agent's tools: name -> (category, the argument holding the command for shell tools)."""

    agent: str  # named in the reasons `classify --why` gives
    tools: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    wrapper: str | None = None  # the tool that calls another one by name


def tool_table(agent: str, exploration: str = "", edit: str = "", web: str = "",
               shell: dict[str, str] | None = None, wrapper: str | None = None) -> ToolTable:
    """A table from space-separated tool names by category, and the shell tools with their command's argument."""
    tools: dict[str, tuple[str, str | None]] = {}
    for names, category in ((exploration, EXPLORATION), (edit, EDIT), (web, WEB)):
        tools.update({name: (category, None) for name in names.split()})
    tools.update({name: (SHELL, key) for name, key in (shell or {}).items()})
    return ToolTable(agent, tools, wrapper)


_SELECTORS = ("id", "toolId", "name")  # where OpenClaw's tool_call looks for the target, in this order


def wrapped_call(arguments: object) -> tuple[str, object] | None:
    """The (tool name, arguments) a wrapper (OpenClaw's `tool_call`) passes on, or None when it names no tool.
    Its arguments are `args` (or `input`), else the call's other keys, as OpenClaw reads them."""
    args = as_dict(arguments)
    if args is None:
        return None
    target = next((args[key] for key in _SELECTORS if isinstance(args.get(key), str) and args[key].strip()), None)
    if target is None:
        return None
    nested = args.get("args") if args.get("args") is not None else args.get("input")
    if nested is None or nested == {}:
        nested = {key: value for key, value in args.items() if key not in (*_SELECTORS, "args", "input")}
    return target.strip().rsplit(":", 1)[-1], nested


@dataclass(frozen=True)
class ToolVerdict:
    category: str
    reason: str
    command: str | None = None  # the command judged, for shell tools (an argv list joined)


def argv_command(argv: list) -> str | None:
    """The shell text an argv list runs: the script of `bash -lc SCRIPT`, else the words quoted and joined."""
    if not argv or not all(isinstance(word, str) for word in argv):
        return None
    if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in _SCRIPT_FLAGS:
        return argv[2]
    return shlex.join(argv)


def command_in(arguments: object, key: str) -> str | None:
    """The command of a shell tool call: a string, or an argv list (Codex's `shell`)."""
    args = as_dict(arguments)
    value = args.get(key) if args is not None and key else None
    if isinstance(value, list):
        return argv_command(value)
    return value if isinstance(value, str) else None


def explain_tool(table: ToolTable, name: str, arguments: object) -> ToolVerdict:
    """Category of a tool call by its agent's table, and why. Never raises, whatever `arguments` holds."""
    agent = table.agent
    if table.wrapper is not None and name == table.wrapper:
        target = wrapped_call(arguments)
        if target is not None and target[0] != name:
            verdict = explain_tool(table, *target)
            return ToolVerdict(verdict.category, f"{name} of {target[0]!r}: {verdict.reason}", verdict.command)
    entry = table.tools.get(name) if isinstance(name, str) else None
    if entry is None:
        return ToolVerdict(OTHER, f"{agent} tool {name!r} neither reads, edits, runs commands nor fetches")
    category, key = entry
    if category != SHELL:
        return ToolVerdict(category, f"{agent} tool {name!r} is {category}")
    if not key:
        return ToolVerdict(SHELL, f"{agent} tool {name!r} drives a running command (shell)")
    command = command_in(arguments, key)
    if command is None:
        return ToolVerdict(SHELL, f"{agent} tool {name!r} without a readable {key!r} argument (shell)")
    judged = explain_command(command)
    why = f"{judged.reason} (stage {judged.stage!r}, word {judged.word!r})"
    return ToolVerdict(judged.category, why, command)
