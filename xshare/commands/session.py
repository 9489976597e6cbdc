"""One session's figures (`xshare session`; its page: commands/html.py) and how a tool call is sorted (`classify`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xshare.commands.common import looking, price_table, print_json, report_problems, say
from xshare.printing import output_width, printable, printable_lines, wrap


def cmd_session(args: argparse.Namespace) -> int:
    """A session by the path of its file (whichever agent's, told by its content), its id (the live state
    if the hook keeps one) or a unique prefix of its id, from any agent of the registry."""
    from collections import Counter

    from xshare.agents.protocol import Ambiguous
    from xshare.sessions.registry import REGISTRY, find, names

    try:  # a --prices file xshare cannot use is refused before anything is read, as the report does
        table = price_table(args)
    except ValueError as error:
        say(str(error))
        return 2
    where = looking(args)
    as_path = Path(args.session).expanduser().is_file() or args.session.endswith(".jsonl")
    # an agent's live state (the hook's), fresher than its records, where it keeps one
    row = None if as_path else next((row for adapter in REGISTRY if (row := adapter.live(args.session, where))), None)
    if row is None:
        problems: Counter = Counter()
        found = find(args.session, where, problems)
        report_problems(problems)
        if isinstance(found, Ambiguous):
            from xshare.commands.html import ambiguous_line  # shared with `xshare html`

            say(ambiguous_line(found))
            return 2
        if found is None:
            say(f"no session of {names()} matches {args.session!r} (give a session's file, its id or the start of "
                 "its id)")
            return 2
        row = found.row
    if args.json:
        print_json(row)
    else:
        from xshare.report.render import session_summary

        lines = session_summary(row).splitlines()
        if table is not None:
            from xshare.report.session_dollars import session_line

            lines.append(printable_lines(session_line(row, table)))
        width = output_width()  # each line wrapped to the terminal, its continuation indented
        print("\n".join(part for line in lines for part in wrap(line, width, "  ")))
    return 0


def _tool_verdict(call: dict, classify_tool) -> tuple[str, str]:
    """A tool call's category and why: by its agent's own tools where the agent has a table (an argv list
    shown as the command it runs), else by Claude Code's and Hermes's (measure/classify.py)."""
    from xshare.measure.classify import command_of, explain_command
    from xshare.measure.tool_tables import explain_tool
    from xshare.sessions.registry import BY_AGENT

    agent, name, tool_input = call.get("agent"), call["tool"], call.get("input")
    adapter = BY_AGENT.get(agent) if isinstance(agent, str) else None
    if adapter is not None and adapter.tools is not None:
        verdict = explain_tool(adapter.tools, name, tool_input)
        shown = f"; the command: {_one_line(verdict.command)}" if verdict.command is not None else ""
        return verdict.category, f"{verdict.reason}{shown}"
    if adapter is None and agent not in (None, "claude"):  # "claude": taken for Claude Code, as it always was
        raise ValueError(agent)
    category = classify_tool(name, tool_input)
    command = command_of(name, tool_input)
    if command is not None and name in ("Bash", "terminal"):
        judged = explain_command(command)
        return category, f"{judged.reason} (stage {judged.stage!r}, word {judged.word!r})"
    return category, f"tool {name!r} is {category}"


def _agents_with_tools() -> str:
    """"codex, gemini, opencode or openclaw": the agents a tool call may name, for the message on a bad line."""
    from xshare.sessions.registry import REGISTRY

    agents = [adapter.agent for adapter in REGISTRY if adapter.tools is not None]
    return ", ".join(agents[:-1]) + " or " + agents[-1]


def _one_line(text: str) -> str:
    """One line for the terminal: control characters shown, never run."""
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def cmd_classify(args: argparse.Namespace) -> int:
    from xshare.measure.classify import classify_tool, explain_command
    from xshare.state.store import loads

    if args.jsonl:
        for number, line in enumerate(sys.stdin, 1):
            if not line.strip():
                continue
            try:
                call = loads(line)
                category, why = _tool_verdict(call, classify_tool)
                print(f"{category}\t{printable(why)}" if args.why else category)  # why names words of the data
            except (ValueError, KeyError, TypeError, AttributeError):
                say(f'line {number}: expected {{"tool": NAME, "input": {{...}}}} (and optionally "agent": '
                    f'{_agents_with_tools()})')
                print("invalid")
        return 0
    if not args.commands:
        say("give one or more shell commands, or --jsonl to read tool calls on stdin")
        return 2
    for command in args.commands:
        verdict = explain_command(command)
        why = f"\t{printable(f'{verdict.reason} (stage {verdict.stage!r}, word {verdict.word!r})')}" if args.why else ""
        print(f"{verdict.category}\t{printable(command)}{why}")
    return 0
