"""The agents xshare reads, one line each: what the CLI's start-up needs (the option, its help, the name
shown) without importing any reader, and the module whose `ADAPTER` reads the agent's records
(agents/<name>/adapter.py, the shape agents/protocol.py). The order is the report's; sessions/registry.py
imports the adapters and checks each against its line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentLine:
    agent: str  # the rows' agent ("claude-code")
    name: str  # shown in the report and messages ("Claude Code")
    option: str  # the CLI option naming its records ("--claude-root"), repeatable
    metavar: str
    help: str
    adapter: str  # the module holding its ADAPTER
    # the calls it billed that no record holds, where the figures take them from ({tasks}: their names), for
    # the report's note; "" for an agent whose records hold every call
    unrecorded: str = ""

    @property
    def flag(self) -> str:
        """The option's dest (--codex-home -> codex_home), the key commands pass its values under."""
        return self.option.removeprefix("--").replace("-", "_")


AGENTS: tuple[AgentLine, ...] = (
    AgentLine("claude-code", "Claude Code", "--claude-root", "DIR",
              "a Claude Code config or projects folder (repeatable); default: $CLAUDE_CONFIG_DIR, else ~/.claude "
              "and ~/.config/claude", "xshare.agents.claude_code.adapter",
              "compactions (the agent summarising a long conversation), from Claude Code's own usage totals"),
    AgentLine("hermes", "Hermes", "--hermes-db", "PATH",
              "a Hermes state.db, opened read-only (repeatable); default: $HERMES_HOME/state.db, else "
              "~/.hermes/state.db, plus ~/.hermes/profiles/*/state.db", "xshare.agents.hermes.adapter",
              "Hermes's auxiliary calls ({tasks}), from its per-model usage table"),
    AgentLine("codex", "Codex CLI", "--codex-home", "PATH",
              "a Codex CLI home, read-only (repeatable); default: $CODEX_HOME, else ~/.codex",
              "xshare.agents.codex.adapter"),
    AgentLine("gemini", "Gemini CLI", "--gemini-home", "PATH",
              "a Gemini CLI home (the .gemini folder), read-only (repeatable); default: $GEMINI_CLI_HOME/.gemini, "
              "else ~/.gemini", "xshare.agents.gemini.adapter"),
    AgentLine("opencode", "OpenCode", "--opencode-db", "PATH",
              "an OpenCode opencode.db, or its data folder, read-only (repeatable); default: $XDG_DATA_HOME/opencode, "
              "else ~/.local/share/opencode", "xshare.agents.opencode.adapter"),
    AgentLine("openclaw", "OpenClaw", "--openclaw-home", "PATH",
              "an OpenClaw state folder, read-only (repeatable); default: $OPENCLAW_STATE_DIR, else "
              "$OPENCLAW_HOME/.openclaw, else ~/.openclaw", "xshare.agents.openclaw.adapter"),
    AgentLine("copilot", "GitHub Copilot CLI", "--copilot-home", "PATH",
              "a GitHub Copilot CLI home (the .copilot folder), read-only (repeatable); default: $COPILOT_HOME, "
              "else ~/.copilot", "xshare.agents.copilot.adapter"),
    AgentLine("qwen", "Qwen Code", "--qwen-home", "PATH",
              "a Qwen Code home (the .qwen folder), read-only (repeatable); default: $QWEN_HOME, else ~/.qwen",
              "xshare.agents.qwen.adapter"),
    AgentLine("pi", "pi", "--pi-home", "PATH",
              "a pi agent folder, or a sessions folder, read-only (repeatable); default: $PI_CODING_AGENT_DIR, else "
              "~/.pi/agent, plus $PI_CODING_AGENT_SESSION_DIR", "xshare.agents.pi.adapter"),
    AgentLine("kilo", "Kilo CLI", "--kilo-db", "PATH",
              "a Kilo CLI kilo.db, or its data folder, read-only (repeatable); default: $XDG_DATA_HOME/kilo, "
              "else ~/.local/share/kilo", "xshare.agents.kilo.adapter"),
)


def line_of(agent: str) -> AgentLine | None:
    """The table's line of a rows' agent (None for one no line names: rows from elsewhere, an older xshare)."""
    return next((line for line in AGENTS if line.agent == agent), None)


def names_listed(conjunction: str = "and") -> str:
    """"Claude Code, Hermes, ... and OpenClaw": every agent's name, in the table's order."""
    names = [line.name for line in AGENTS]
    return ", ".join(names[:-1]) + f" {conjunction} " + names[-1]
