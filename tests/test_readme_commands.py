"""Issue 31, finding 1: every `xshare ...` command the README shows runs as written. Each is parsed by the
real parser (a flag renamed or dropped since the README was written fails here); placeholders the README
writes as `<id>`, `ID`, `PATH`, `[--json]` or `week|month` are filled in first. And the Quickstart puts
`xshare` on the PATH before any later line uses it bare."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from xshare.arguments import build_parser, command_parser

README = Path(__file__).resolve().parents[1] / "README.md"
PLACEHOLDERS = {"ID": "1f0c2a9e", "PATH": "state.db", "DATE": "2026-11-13", "N": "3", "SESSION": "1f0c2a9e",
                "FILE": "rows.jsonl", "DIR": "claude"}
# a line of a code block that is a command (not a program's output that names one): it starts with a command,
# perhaps after a prompt or variables set for it
SHELL_LINE = re.compile(r"^\s*[$!]?\s*(?:[A-Z_]+=\S+\s+)*(?:xshare|python3?|\.venv/|\.ci/|cd|\. )")
NOT_COMMANDS = ("xshare ...", "xshare COMMAND --help")  # the README's words about commands in general


def _commands_in(line: str) -> list[list[str]]:
    """The `xshare` commands of one shell line, as words: placeholders filled, optional brackets opened, one
    alternative of `a|b` taken; split at `&&`, `|`, `;`, `<`, `>` and comments, quotes respected."""
    line = re.sub(r"<[^>]*>", "1f0c2a9e", line.strip().lstrip("$!").strip()).replace("[", "").replace("]", "")
    line = re.sub(r"(?<![\w'\"-])(\w+)(\|\w+)+(?![\w'\"])", r"\1", line)
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    lexer.wordchars += "~,:{}@%+^"  # ~/.codex, context,fill: one word each, as a shell splits them
    commands, words = [], []
    for token in [*lexer, ";"]:
        if token and set(token) <= set("&|;<>()"):
            if words[:1] == ["xshare"]:
                commands.append(words)
            words = [] if token not in ("<", ">") else ["(redirected)"]
        else:
            words.append(PLACEHOLDERS.get(token, token))
    return commands


def readme_commands() -> list[tuple[str, ...]]:
    text = README.read_text(encoding="utf-8")
    found = set()
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in (line for line in block.splitlines() if SHELL_LINE.match(line) and "xshare " in line):
            found.update(tuple(words) for words in _commands_in(line))
    for span in re.findall(r"`!?(xshare [^`]+)`", text.replace("\n", " ")):
        found.update(tuple(words) for words in _commands_in(re.sub(r"\s+", " ", span)))
    return sorted(words for words in found if " ".join(words) not in NOT_COMMANDS)


def test_the_readme_shows_the_commands_a_user_needs():
    commands = {" ".join(words) for words in readme_commands()}
    for needed in ("xshare report", "xshare sessions", "xshare advice", "xshare html", "xshare statusline install"):
        assert needed in commands
    assert len(commands) >= 40


@pytest.mark.parametrize("words", readme_commands(), ids=" ".join)
def test_every_command_the_readme_shows_parses_as_written(words: tuple[str, ...]):
    parser = build_parser()
    if len(words) == 2 and command_parser(words[1]) is not None:
        return  # a command named in prose ("`xshare session`'s line"): that it exists is what can be checked
    try:
        parser.parse_args(list(words[1:]))
    except SystemExit as error:
        if error.code:
            pytest.fail(f"the README's `{' '.join(words)}` is refused by xshare's parser (exit {error.code})")


def test_the_quickstart_puts_xshare_on_the_path_before_a_bare_xshare():
    text = README.read_text(encoding="utf-8")
    quickstart = text[text.index("## Quickstart"):text.index("\n## ", text.index("## Quickstart") + 1)]
    first = re.search(r"```sh\n(.*?)\n", quickstart).group(1)
    steps = [step.strip() for step in first.split("#")[0].split("&&")]
    activate = steps.index(". .venv/bin/activate")
    assert steps.index("pip install .") > activate and steps[-1] == "xshare report"
    assert "`. .venv/bin/activate` again" in quickstart  # a new shell: said how
    assert "As a Claude Code plugin" in quickstart and "/plugin install xshare@xshare" in quickstart
    assert "not realhost" in quickstart and "2.7 GB" in quickstart  # the test command's cost, and the fast path
