"""Tool categories of the other agents (Codex CLI, Gemini CLI, OpenCode, OpenClaw), by their own tool
names and argument shapes, decided by the same shell-command rule as Claude Code's Bash.

Each agent's table maps a tool name to its category and, for a shell tool, the argument holding the
command. Codex's oldest shell tool (`shell`, 0.36-0.55) takes an argv list such as ["bash", "-lc", "sed -n
1,80p a.py"]: a shell's `-c`/`-lc` script is judged as the command, any other argv as its words joined.
`apply_patch` (Codex, OpenCode, OpenClaw) is an edit. A tool no table names is other. OpenClaw 2026.9 calls
most tools through `tool_call {id, args}` (`id` a tool name or a catalog id such as `openclaw:core:read`):
such a call is judged as the tool it calls, with the arguments it passes.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from xshare.measure.classify import EDIT, EXPLORATION, OTHER, SHELL, WEB, as_dict, explain_command

_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-cl", "-ic", "-ci", "-xc", "-ec", "-euc", "-eu"})


def _tools(exploration: str = "", edit: str = "", web: str = "", shell: dict[str, str] | None = None) -> dict:
    table: dict[str, tuple[str, str | None]] = {}
    for names, category in ((exploration, EXPLORATION), (edit, EDIT), (web, WEB)):
        table.update({name: (category, None) for name in names.split()})
    table.update({name: (SHELL, key) for name, key in (shell or {}).items()})
    return table


# agent -> tool name -> (category, the argument holding the command for shell tools)
AGENT_TOOLS: dict[str, dict[str, tuple[str, str | None]]] = {
    "codex": _tools(edit="apply_patch", web="web_search web_fetch",
                    shell={"shell": "command", "shell_command": "command", "exec_command": "cmd",
                           "local_shell": "command", "container.exec": "command", "write_stdin": ""}),
    "gemini": _tools(exploration="read_file read_many_files grep_search search_file_content glob list_directory "
                                 "ls grep",
                     edit="replace write_file edit smart_edit", web="google_web_search web_fetch web_search",
                     shell={"run_shell_command": "command"}),
    "opencode": _tools(exploration="read grep glob list ls codesearch lsp", edit="write edit patch multiedit "
                       "apply_patch", web="webfetch websearch web_fetch web_search", shell={"bash": "command"}),
    "openclaw": _tools(exploration="read grep find ls dir_list dir_fetch file_fetch",
                       edit="write edit apply_patch file_write",
                       web="web_fetch web_search browser", shell={"exec": "command", "bash": "command",
                                                                   "process": ""}),
}


# agent -> the tool that calls another one by name (OpenClaw's Tool Search)
WRAPPERS = {"openclaw": "tool_call"}
_SELECTORS = ("id", "toolId", "name")  # where OpenClaw's tool_call looks for the target, in this order


def wrapped_call(arguments: object) -> tuple[str, object] | None:
    """The (tool name, arguments) an OpenClaw `tool_call` passes on, or None when it names no tool.
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


def explain_tool(agent: str, name: str, arguments: object) -> ToolVerdict:
    """Category of one of these agents' tool calls, and why. Never raises, whatever `arguments` holds."""
    table = AGENT_TOOLS.get(agent, {})
    if name == WRAPPERS.get(agent):
        target = wrapped_call(arguments)
        if target is not None and target[0] != name:
            verdict = explain_tool(agent, *target)
            return ToolVerdict(verdict.category, f"{name} of {target[0]!r}: {verdict.reason}", verdict.command)
    entry = table.get(name) if isinstance(name, str) else None
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
