"""Tool categories: what a Claude Code or Hermes tool call spends its tokens on.

exploration: reading and searching code (Read, Grep, Glob, LS, NotebookRead; Hermes read_file, search_files;
    Bash / terminal with a read-only command). edit: Edit, Write, MultiEdit, NotebookEdit; patch, write_file.
web: WebFetch, WebSearch; web_search, web_extract. shell: any other Bash / terminal command.
other: everything else (MCP tools, Task/Agent, TodoWrite, tool search, skills, ...).

A command is read-only when every stage of its pipeline (split at unquoted |, |&, &&, ||, ;, &, newline and
parentheses) starts, after any cd stage, assignments, shell keywords and the prefixes sudo, time, nohup, env
(and the wrappers xargs, timeout, nice, stdbuf, command), with a word on READ_ONLY that passes its entry in
_CHECKS; when no stage redirects output to a file; and when every command substitution inside it is
read-only too. Commands are read the way bash reads them (measure/shell_lexer.py). Reading forms added to
the spec's list: git diff-tree, diff-index, diff-files, show-branch, `git config NAME`, `git reflog REF`
(reflog's default is show), `git tag -v`, bare `set`; and stages that only change the shell's state
(read, export, set, ...) count like cd.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from xshare.measure.shell_lexer import KEYWORDS, Tok, lex

EXPLORATION = "exploration"
EDIT = "edit"
SHELL = "shell"
WEB = "web"
OTHER = "other"

# Tool name -> category. SHELL here means "decided by the command" (Bash, terminal).
_TOOLS = {**dict.fromkeys("Read Grep Glob LS NotebookRead read_file search_files".split(), EXPLORATION),
          **dict.fromkeys("Edit Write MultiEdit NotebookEdit patch write_file".split(), EDIT), "Bash": SHELL,
          **dict.fromkeys("WebFetch WebSearch web_search web_extract".split(), WEB), "terminal": SHELL}
# The argument that says what a call is about.
_SUBJECT = {"Bash": "command", "terminal": "command", "Read": "file_path", "read_file": "path",
            "Grep": "pattern", "search_files": "pattern", "Glob": "pattern"}

# Commands that only read files or print facts; _CHECKS below rejects their writing options.
READ_ONLY = frozenset("""
cat head tail less more bat grep egrep fgrep rg ag ack ugrep ug find bfs fd fdfind ls tree wc diff cmp comm
file stat du df pwd echo printf sort uniq cut tr nl column jq yq awk gawk sed realpath readlink dirname
basename which whereis type tac rev od hexdump xxd strings md5sum sha1sum sha256sum shasum cksum true false
date whoami id uname hostname printenv test [ [[ git
""".split())
# Stages that change only the shell's state (directory, variables, options, loops) neither read nor write:
# they never make a command exploration on their own (`cd src` is shell; `cd src && ls`, `while read` read).
_NEUTRAL = frozenset("cd pushd popd read export unset set break continue exit return".split())
_HEADERS = frozenset({"for", "select", "case"})  # the rest of such a stage is data, not a command
_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


@dataclass(frozen=True)
class Verdict:
    """Why a command got its category: the pipeline stage and the word that decided it."""

    category: str
    stage: str
    word: str
    reason: str


def _skip_options(args: list[str], k: int, with_value: frozenset[str]) -> int:
    """Index of the first operand at or after k, past -x options (and the values of those in with_value)."""
    while k < len(args) and args[k].startswith("-") and args[k] != "-":
        k += 2 if args[k] in with_value else 1
    return k


def _operands(args: list[str], with_value: frozenset[str]) -> int:
    n, k = 0, 0
    while k < len(args):
        n += args[k] == "-" or not args[k].startswith("-")
        k += 2 if args[k] in with_value else 1
    return n


def _first_operand(args: list[str]) -> str:
    return next((a for a in args if not a.startswith("-")), "")


def _option(args: list[str], letters: str, value_letters: str, long_names: tuple[str, ...]) -> str | None:
    """The first option that is one of `letters`, also inside a cluster (-ni) up to a letter that takes a
    value (the rest of the cluster is that value), or a long option abbreviating one of `long_names`."""
    for a in args:
        if a.startswith("--"):
            name = a[2:].split("=", 1)[0]
            if name and any(n.startswith(name) for n in long_names):
                return a
        elif a.startswith("-"):
            for ch in a[1:]:
                if ch in letters:
                    return a
                if ch in value_letters:
                    break
    return None


def _awk(args: list[str]) -> str | None:
    """awk writes with -i inplace, or when its program redirects a print (> file, | cmd) or calls system()."""
    k, prog = 0, ""
    while k < len(args) and args[k].startswith("-") and args[k] != "-":
        a, value = args[k], args[k + 1] if k + 1 < len(args) else ""
        if (a in ("-i", "--include") and value.startswith("inplace")) or re.match(r"-iinpl|--include=in", a):
            return "awk -i inplace edits files"
        if a in ("-f", "--file") or a.startswith("--file="):
            return "awk -f runs a program file that is not in the command"
        prog = value if a in ("-e", "--source") else prog
        k += 2 if a in ("-F", "-v", "-i", "-e", "--include", "--field-separator", "--assign", "--source") \
            else 1
    prog = prog or (args[k] if k < len(args) else "")
    code = re.sub(r'"(?:\\.|[^"\\\n])*"', lambda m: '"' + "_" * (len(m[0]) - 2) + '"', prog)  # mask strings
    if re.search(r"\bsystem\s*\(", code):
        return "awk program calls system()"
    if re.search(r"\|&?\s*getline", code):
        return "awk program runs a command with getline"
    for m in re.finditer(r"\bprintf?\b", code):  # up to the end of the statement, outside parentheses
        level, j = 0, m.end()
        while j < len(code) and level >= 0 and not (level == 0 and code[j] in ";}\n"):
            level += (code[j] == "(") - (code[j] == ")")
            if level == 0 and code[j] == "|" and "|" not in (code[j - 1], code[j + 1:j + 2]):
                return "awk print pipes to a command"
            if level == 0 and code[j] == ">":
                if not any(prog[j:].lstrip(">").strip().startswith(f'"{t}"') for t in _SAFE_TARGETS):
                    return "awk print > writes a file"
                j += 1
            j += 1
    return None


_REF_MUTATING = frozenset("delete move copy force set-upstream-to set-upstream unset-upstream track no-track "
                          "edit-description annotate sign message file edit create-reflog local-user cleanup "
                          "trailer".split())
_REF_VALUED = ("sort", "format", "points-at", "contains", "no-contains", "merged", "no-merged")  # 3 required


def _git_refs(sub: str, rest: list[str]) -> str | None:
    """git branch / git tag read only in their listing forms. Mutating options are rejected first, so a
    listing flag cannot rescue them (git branch -d -v x); then an operand without -l/--list creates a ref."""
    mutating = "dDmMcCfut" if sub == "branch" else "dfasumFe"  # -a is --all for branch, --annotate for tag
    listing, operand, k = False, False, 0
    while k < len(rest):
        a, k = rest[k], k + 1
        if a.startswith("--"):
            name = a[2:].split("=", 1)[0]
            if name in _REF_MUTATING:
                return f"git {sub} --{name} changes refs"
            listing = listing or name == "list" or (name == "verify" and sub == "tag")
            if "=" not in a and k < len(rest) and (name in _REF_VALUED[:3] or (
                    name in _REF_VALUED and not rest[k].startswith("-"))):
                k += 1  # the value of --sort X (or of --contains X, optional) is not a ref to create
        elif a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                if ch in mutating:
                    return f"git {sub} -{ch} changes refs"
                listing = listing or ch == "l" or (ch == "v" and sub == "tag")  # tag -v verifies
                if ch == "n":  # tag -n<num>
                    break
        else:
            operand = True
    return f"git {sub} with a name creates a {sub}" if operand and not listing else None


def _git_config(rest: list[str]) -> str | None:
    # Reads: --get*, --list, get, list, and `git config [--global] name` (one operand, no action option).
    n = _operands(rest, frozenset({"-f", "--file", "--blob", "--type", "--default"}))
    acts = any(a in ("-e", "--edit", "--add") or a.startswith(("--unset", "--re")) for a in rest)
    reads = any(a in ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l") for a in rest)
    return None if reads or _first_operand(rest) in ("get", "list") or (n == 1 and not acts) else \
        "git config sets a value"


_GIT_READ = frozenset("""log show diff status blame annotate grep ls-files ls-tree rev-parse rev-list cat-file
describe shortlog whatchanged merge-base name-rev for-each-ref show-ref count-objects check-ignore ls-remote
var version help diff-tree diff-index diff-files show-branch""".split())
_GIT_SUB = {
    "branch": lambda rest: _git_refs("branch", rest), "tag": lambda rest: _git_refs("tag", rest),
    "config": _git_config,
    # show is reflog's default: bare, options only, show, exists (and a ref, i.e. show <ref>) read.
    "reflog": lambda rest: f"git reflog {_first_operand(rest)} rewrites the reflog"
    if _first_operand(rest) in ("expire", "delete", "drop", "write") else None,
    "remote": lambda rest: None if _first_operand(rest) in ("", "show", "get-url")
    and all(a in ("-v", "--verbose") for a in rest[:1] if a[:1] == "-") else "git remote changes remotes",
    "worktree": lambda rest: None if _first_operand(rest) == "list" else "git worktree changes worktrees",
    "stash": lambda rest: None if _first_operand(rest) in ("list", "show") else "git stash changes the stash",
}
_GIT_GLOBAL_VALUED = frozenset("-C -c --git-dir --work-tree --namespace --config-env --super-prefix "
                               "--attr-source".split())


def _git(args: list[str]) -> str | None:
    k = 0  # global options first: git -C dir log, git -c k=v diff, git --git-dir x show
    while k < len(args) and args[k].startswith("-"):
        k += 2 if args[k] in _GIT_GLOBAL_VALUED else 1
    if k >= len(args):
        return None  # git, git --version, git --help print
    sub, rest = args[k], args[k + 1:]
    if sub in _GIT_READ:
        out = next((a for a in rest if a == "--output" or a.startswith("--output=")), None)
        return out and f"git {sub} --output writes a file"
    check = _GIT_SUB.get(sub)
    return check(rest) if check else f"git {sub} is not a reading subcommand"


_FIND_ACTIONS = {"-delete": "deletes files"}
_FIND_ACTIONS |= dict.fromkeys("-exec -execdir -ok -okdir".split(), "runs commands")
_FIND_ACTIONS |= dict.fromkeys("-fprint -fprint0 -fprintf -fls".split(), "writes a file")
_XXD_VALUED = frozenset("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name".split())
_UNIQ_VALUED = frozenset({"-f", "-s", "-w"})
# Per-command checks: why the command writes or runs something, or a false value when it only reads.
_CHECKS = {
    "sed": lambda a: _option(a, "iI", "efl", ("in-place",)) and "sed with -i writes files",
    "sort": lambda a: _option(a, "o", "kStT", ("output",)) and "sort -o writes a file",
    "yq": lambda a: _option(a, "i", "oIp", ("inplace", "in-place")) and "yq -i writes files",
    "tree": lambda a: _option(a, "o", "ILPHT", ()) and "tree -o writes a file",
    "uniq": lambda a: _operands(a, _UNIQ_VALUED) > 1 and "uniq with two operands writes the second",
    "xxd": lambda a: _operands(a, _XXD_VALUED) > 1 and "xxd with two operands writes the second",
    "fd": lambda a: any(x in ("-x", "-X") or x.startswith("--exec") for x in a) and "fd -x runs commands",
    "find": lambda a: next((f"find with {x} {_FIND_ACTIONS[x]}" for x in a if x in _FIND_ACTIONS), None),
    "awk": _awk, "gawk": _awk, "git": _git,
}
_CHECKS.update(bfs=_CHECKS["find"], fdfind=_CHECKS["fd"])

# Prefixes that run the command after them: options taking a value, and how many operands precede the command.
_WRAPPERS = {
    "sudo": (frozenset("-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt --close-from --chdir "
                       "--role --type --other-user --command-timeout".split()), 0),
    "xargs": (frozenset("-a -d -E -I -L -n -P -s --arg-file --delimiter --max-lines --max-args --max-procs "
                        "--max-chars --process-slot-var".split()), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0), "nohup": (frozenset(), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),  # timeout [options] DURATION cmd
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0), "command": (frozenset(), 0),
}
_R = tuple[str, str, str, str]  # a stage's result: "read" | "none" | "shell", its text, deciding word, reason
_IN_SUB = " (in a substitution)"


def _command(raws: list[str], args: list[str], text: str) -> _R:
    """Judge one simple command from its words (as written, and unquoted); its redirects are checked."""
    k = 0
    while k < len(raws) and (raws[k] in KEYWORDS or raws[k].startswith("((")):
        if raws[k] in _HEADERS:
            return ("none", text, raws[k], f"{raws[k]} header")
        k += 1
    while k < len(args):
        w = args[k].rsplit("/", 1)[-1]  # /usr/bin/time, /usr/bin/env
        if _ASSIGN.match(raws[k]):
            k += 1
        elif w == "env":  # env [-i] [-u NAME] [NAME=value ...] [cmd]
            k += 1
            while k < len(args) and (args[k].startswith("-") or re.match(r"[A-Za-z_]\w*=", args[k])):
                k += 2 if args[k] in ("-u", "--unset", "-C", "--chdir") else 1
            if k >= len(args):
                return ("read", text, w, "env prints the environment")
        elif w in _WRAPPERS:
            if w == "command" and args[k + 1:k + 2] in (["-v"], ["-V"]):
                return ("read", text, w, "command -v looks a name up")
            valued, skip = _WRAPPERS[w]
            end = _skip_options(args, k + 1, valued) + skip
            if w == "time" and any(a in ("-o", "--output") or a.startswith("--output=") for a in args[k:end]):
                return ("shell", text, w, "time -o writes a file")
            if w == "xargs" and end >= len(args):
                return ("read", text, w, "xargs runs echo")
            k = end
        else:
            break
    if k >= len(args):
        return ("none", text, args[-1] if args else "", "no command")
    word = args[k]
    name = word.rsplit("/", 1)[-1] if "/" in word.rstrip("/") else word
    if name == "set" and k + 1 == len(args):
        return ("read", text, word, "set prints the shell's variables")
    if name in _NEUTRAL:
        return ("none", text, word, f"{name} only changes shell state")
    if name not in READ_ONLY:
        return ("shell", text, word, f"{name} is not on the read-only list")
    why = _CHECKS[name](args[k + 1:]) if name in _CHECKS else None
    return ("shell", text, word, why) if why else ("read", text, word, f"{name} reads")


def _stage(stage: list[Tok]) -> _R:
    first, last = stage[0], stage[-1]
    same = first.src and first.src is last.src  # (tokens from the shlex / tree-sitter bench have no source)
    text = first.src[first.start:last.end] if same else " ".join(t.raw for t in stage)
    words = [t for j, t in enumerate(stage) if t.kind == "w" and not (j and stage[j - 1].kind == "r")]
    for j, t in enumerate(stage):
        if t.kind != "r" or t.text in ("<", "<<", "<<-", "<<<", "<&"):  # input redirects read
            continue
        target = stage[j + 1].text if j + 1 < len(stage) and stage[j + 1].kind == "w" else "nothing"
        if target not in _SAFE_TARGETS and not (t.text == ">&" and (target.isdigit() or target == "-")):
            return ("shell", text, t.raw, f"redirect to {target} writes a file")  # (>&2, 2>&1, >&- are fine)
    for t in stage:  # $(...), `...`, <(...) run commands: they must read too
        for sub in t.subs:
            r = _judge(sub)
            if r[0] == "shell":
                return ("shell", r[1], r[2], r[3] if r[3].endswith(_IN_SUB) else r[3] + _IN_SUB)
    return _command([t.raw for t in words], [t.text for t in words], text)


def _judge(tokens: list[Tok]) -> _R:
    """Split at operators, judge each stage. Inside case ... esac, patterns (up to their ")") are dropped."""
    stages: list[list[Tok]] = [[]]
    pattern = header = False
    for t in tokens:
        if pattern:
            if t.kind == "op" and t.text == ")":
                pattern = False
                stages.append([])
            elif t.raw == "esac":
                pattern = False
                stages[-1].append(t)
        elif t.kind == "op":
            stages.append([])
            pattern = t.text in (";;", ";&", ";;&")
        else:
            header = header or (t.raw == "case" and not stages[-1])
            stages[-1].append(t)
            if header and t.raw == "in":
                header, pattern = False, True
    first_read = first_none = None
    for st in filter(None, stages):
        r = _stage(st)
        if r[0] == "shell":
            return r
        if r[0] == "read":
            first_read = first_read or r
        else:
            first_none = first_none or r
    return first_read or first_none or ("none", "", "", "empty command")


@lru_cache(maxsize=65536)
def _explain(command: str) -> Verdict:
    kind, stage, word, reason = _judge(lex(command)[0])
    if kind == "read":
        return Verdict(EXPLORATION, stage, word, "every stage reads")
    return Verdict(SHELL, stage, word, f"nothing reads ({reason})" if kind == "none" and stage else reason)


def explain_command(command: str) -> Verdict:
    """Category of a shell command (exploration or shell), with the stage and the word that decided it."""
    return _explain(command) if isinstance(command, str) else Verdict(SHELL, "", "", "not a command string")


def classify_command(command: str) -> str:
    """EXPLORATION when the command only reads, else SHELL."""
    return explain_command(command).category


def as_dict(tool_input: object) -> dict | None:
    """A tool call's arguments as a dict (Hermes's arrive as JSON text), None when they are not one."""
    if isinstance(tool_input, (str, bytes, bytearray)):  # Hermes arguments arrive as a JSON string
        try:
            tool_input = json.loads(tool_input)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return None
    return tool_input if isinstance(tool_input, dict) else None


def command_of(name: str, tool_input: object) -> str | None:
    """What a tool call is about: its command, file path or pattern; None for other tools or bad input."""
    key = _SUBJECT.get(name) if isinstance(name, str) else None
    args = as_dict(tool_input) if key else None
    value = args.get(key) if args is not None else None
    return value if isinstance(value, str) else None


def classify_tool(name: str, tool_input: object) -> str:
    """Category of a Claude Code or Hermes tool call. Never raises, whatever tool_input holds."""
    category = _TOOLS.get(name, OTHER) if isinstance(name, str) else OTHER
    if category != SHELL:
        return category
    command = command_of(name, tool_input)
    return classify_command(command) if command is not None else SHELL
