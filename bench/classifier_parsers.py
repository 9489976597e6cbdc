"""How should xshare.classify parse shell commands? Measured on the shared corpus, not argued.

Extracts every Claude Code Bash command (tool_use blocks named "Bash") from corpus/claude/**/*.jsonl and
every Hermes terminal command from corpus/hermes/*/state.db, then classifies each one three ways, all with the
same per-stage rules (xshare.classify's read-only list, redirect and option checks), so only the parser
differs:

  (a) xshare   the hand-written lexer in xshare.classify
  (b) shlex    shlex.shlex(punctuation_chars=True), newlines turned into ";" (the spec's pass 3)
  (c) ts       tree-sitter-bash, if importable

It prints counts only (number of commands, time per 1000 commands, parse failures, disagreements by kind of
construct), never a command: the corpus is other people's data.

Usage: python bench/classifier_parsers.py [corpus dir]   (default /work/shared/corpus or $XSHARE_CORPUS)
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xshare.measure import classify as xc  # noqa: E402
from xshare.measure.shell_lexer import Tok, lex  # noqa: E402

try:  # optional: the bench runs without it
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    _TS_PARSER: Parser | None = Parser(Language(tree_sitter_bash.language()))
except Exception:  # ImportError, or a binding too old for this API
    _TS_PARSER = None

# Kinds of construct a command contains; a disagreement is counted once under each kind its command has.
FEATURES = {
    "heredoc": re.compile(r"<<-?\s*['\"\\]?\w"),
    "here-string": re.compile(r"<<<"),
    "substitution": re.compile(r"\$\(|`|[<>]\("),
    "quoted operator": re.compile(r"'[^'\n]*[|;&<>][^'\n]*'|\"[^\"\n]*[|;&<>][^\"\n]*\""),
    "escaped operator": re.compile(r"\\[|;&<>]"),
    "comment": re.compile(r"(^|[\s;])#"),
    "line continuation": re.compile(r"\\\n"),
    "multi-line": re.compile(r"\n"),
    "keyword": re.compile(r"(^|[\s;&|(])(if|for|while|until|case)\s"),
    "redirect": re.compile(r"[0-9&]?>"),
}


# ---------------------------------------------------------------------------------------------------- corpus


def claude_commands(root: Path) -> Iterator[str]:
    seen: set[str] = set()  # a tool_use id appears again in resumed and internal-agent transcripts
    for path in sorted(root.glob("claude/**/*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if '"tool_use"' not in line:
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                content = (row.get("message") or {}).get("content") if isinstance(row, dict) else None
                for block in content if isinstance(content, list) else []:
                    if not (isinstance(block, dict) and block.get("type") == "tool_use"
                            and block.get("name") == "Bash"):
                        continue
                    key = block.get("id") or f"{path}:{len(seen)}"
                    command = xc.command_of("Bash", block.get("input"))
                    if command is not None and key not in seen:
                        seen.add(key)
                        yield command


def _open_ro(path: Path) -> sqlite3.Connection:
    uri = "file:" + urllib.parse.quote(str(path))
    try:
        conn = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=5)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.Error:  # read-only folder without usable -wal/-shm: read the main file as it is
        return sqlite3.connect(uri + "?immutable=1", uri=True)


def hermes_commands(root: Path) -> Iterator[str]:
    for path in sorted(root.glob("hermes/*/state.db")):
        try:
            conn = _open_ro(path)
            cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
            rows = conn.execute("SELECT tool_calls FROM messages WHERE tool_calls IS NOT NULL").fetchall() \
                if "tool_calls" in cols else []
            conn.close()
        except sqlite3.Error as exc:
            print(f"  skipped one Hermes database: {type(exc).__name__}", file=sys.stderr)
            continue
        for (raw,) in rows:
            try:
                calls = json.loads(raw)
            except (TypeError, ValueError):
                continue
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") if isinstance(call.get("function"), dict) else call
                if fn.get("name") == "terminal":
                    command = xc.command_of("terminal", fn.get("arguments"))
                    if command is not None:
                        yield command


# ---------------------------------------------------------------------------------------------------- parsers


def _verdict(tokens: list) -> str:
    return xc.EXPLORATION if xc._judge(tokens)[0] == "read" else xc.SHELL


def parse_xshare(command: str) -> tuple[str, bool]:
    tokens, lenient = lex(command)
    return _verdict(tokens), lenient


_SEPARATORS = {"|", "||", "&&", ";", "&", "|&", ";;", "(", ")"}


def parse_shlex(command: str) -> tuple[str, bool]:
    lex = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        words = list(lex)
    except ValueError:  # no closing quotation / escaped character: the command cannot be read
        return xc.SHELL, True
    tokens = []
    for w in words:
        if w in _SEPARATORS:
            tokens.append(Tok("op", w))
        elif w and set(w) <= set("<>&|") and ("<" in w or ">" in w):
            tokens.append(Tok("r", w))
        else:
            tokens.append(Tok("w", w))
    return _verdict(tokens), False


def _ts_text(node) -> str:
    raw = node.text.decode("utf-8", "replace")
    if node.type in ("string", "raw_string"):
        return raw[1:-1]
    if node.type == "ansi_c_string":
        return raw[2:-1]
    if node.type == "concatenation":
        return "".join(_ts_text(c) for c in node.children)
    return re.sub(r"\\(.)", r"\1", raw) if node.type == "word" else raw


def _ts_walk(node, out: list) -> None:
    kind = node.type
    if kind == "command":
        for child in node.named_children:
            if child.type == "variable_assignment":
                out.append(Tok("w", child.text.decode("utf-8", "replace")))
            elif child.type not in ("file_redirect", "herestring_redirect", "comment"):
                name = child.type == "command_name" and child.named_children
                out.append(Tok("w", _ts_text(child.named_children[0] if name else child)))
        out.append(Tok("op", ";"))
    elif kind == "test_command":
        out.extend([Tok("w", "[["), Tok("op", ";")])
    elif kind == "declaration_command" or kind == "unset_command":
        out.extend([Tok("w", node.children[0].type), Tok("op", ";")])
    elif kind == "file_redirect":
        op = next((c.type for c in node.children if not c.is_named), ">")
        dest = node.child_by_field_name("destination")
        out.extend([Tok("r", op), Tok("w", _ts_text(dest) if dest else ""), Tok("op", ";")])
        return
    for child in node.named_children:
        _ts_walk(child, out)


def parse_ts(command: str) -> tuple[str, bool]:
    assert _TS_PARSER is not None
    tree = _TS_PARSER.parse(command.encode("utf-8", "surrogatepass"))
    tokens: list = []
    _ts_walk(tree.root_node, tokens)
    return _verdict(tokens), tree.root_node.has_error


# ---------------------------------------------------------------------------------------------------- report


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else os.environ.get("XSHARE_CORPUS", "/work/shared/corpus"))
    if not root.is_dir():
        print(f"no corpus at {root}: nothing to measure")
        return 0
    commands = list(claude_commands(root))
    n_claude = len(commands)
    commands += hermes_commands(root)
    if not commands:
        print(f"no Bash or terminal commands under {root}: nothing to measure")
        return 0
    distinct = sorted(set(commands))
    print(f"commands: {len(commands)} ({n_claude} Claude Code Bash, {len(commands) - n_claude} Hermes "
          f"terminal), {len(distinct)} distinct")

    parsers: dict[str, Callable[[str], tuple[str, bool]]] = {"xshare": parse_xshare, "shlex": parse_shlex}
    if _TS_PARSER is not None:
        parsers["ts"] = parse_ts
    else:
        print("tree-sitter-bash not importable: approach (c) skipped")
    results: dict[str, dict[str, str]] = {}
    print(f"\n{'parser':<8} {'ms/1000':>9} {'failed':>7} {'exploration':>12}   (distinct commands; failed = "
          "unterminated/lenient for xshare, ValueError for shlex, ERROR node for ts)")
    for name, parse in parsers.items():
        verdicts, failed = {}, 0
        start = time.perf_counter()
        for c in distinct:
            verdicts[c], bad = parse(c)
            failed += bad
        ms = (time.perf_counter() - start) * 1e6 / len(distinct)
        results[name] = verdicts
        explored = sum(v == xc.EXPLORATION for v in verdicts.values())
        print(f"{name:<8} {ms:>9.1f} {failed:>7} {explored:>12}")

    weights = Counter(commands)  # disagreements are counted over all calls, as the share weighs them
    names = list(results)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    print("\ndisagreements over all calls (a->b: a says exploration, b says shell; b->a the reverse)")
    header = f"{'construct':<18}" + "".join(f"{a + '/' + b:>22}" for a, b in pairs)
    print(header)
    rows: dict[str, list[Counter]] = {}
    for c, n in weights.items():
        kinds = [k for k, rx in FEATURES.items() if rx.search(c)] or ["none of these"]
        for i, (a, b) in enumerate(pairs):
            va, vb = results[a][c], results[b][c]
            if va == vb:
                continue
            direction = "a" if va == xc.EXPLORATION else "b"
            for k in ["all", *kinds]:
                rows.setdefault(k, [Counter() for _ in pairs])[i][direction] += n
    for k in ["all", *FEATURES, "none of these"]:
        cells = rows.get(k, [Counter() for _ in pairs])
        print(f"{k:<18}" + "".join(f"{c['a']:>11} / {c['b']:<8}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
