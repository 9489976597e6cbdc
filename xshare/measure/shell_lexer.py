"""Shell commands read the way bash reads them: words (quotes, escapes, substitutions, heredocs) and
operators, for the classifier (measure/classify.py) to judge stage by stage.

The lexer is hand-written because the read-only rule's history is five rounds of tokenizer bugs: a
character is an operator only where bash would treat it as one. It never raises: an unterminated quote,
substitution or heredoc runs to the end of the text (and the lexer says it had to be lenient).
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[^\s|&;<>()'\"\\$`]+")
_DQ_PLAIN = re.compile(r"[^\"\\$`]+")
_MAX_DEPTH = 40  # deeper substitutions are not lexed: hostile input cannot exhaust the stack
_OPERATORS = "&>> &> && || |& ;;& ;; ;& <<< <<- << <& <> >> >| >& | & ; < >".split()  # longest first
_OPERATOR = re.compile("|".join(map(re.escape, _OPERATORS)))  # the first that matches: the longest
# Reserved words are transparent: `if grep -q x f; then cat f; fi` is judged by grep and cat.
KEYWORDS = frozenset("if then elif else fi for select in do done while until case esac ! { } ((".split())


class Tok:
    """A word ("w": unquoted text, raw source), an operator ("op") or a redirect ("r", e.g. 2> or &>>)."""

    __slots__ = ("kind", "text", "raw", "subs", "src", "start", "end")

    def __init__(self, kind: str, text: str, src: str = "", start: int = 0, end: int = 0,
                 subs: list | None = None) -> None:
        self.kind, self.text, self.src, self.start, self.end = kind, text, src, start, end
        self.raw, self.subs = src[start:end] or text, subs if subs is not None else []


class _Word:
    """A word being read (a plain class: one is made per word, and a dataclass's __init__ costs more)."""

    __slots__ = ("parts", "start", "subs", "quoted")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.start = -1
        self.subs: list[list[Tok]] = []  # token lists of the $(...), `...`, <(...) in it
        self.quoted = False

    def last(self) -> str:
        """The word's last character so far ("" for none), without joining its parts: joined at each "(",
        a word of many (x=()=()...) took time growing with the square of its length."""
        return next((part[-1] for part in reversed(self.parts) if part), "")


class _Lexer:
    def __init__(self, src: str, depth: int = 0) -> None:
        self.s, self.i, self.n, self.depth = src, 0, len(src), depth
        self.heredocs: list[tuple[str, bool, bool, Tok]] = []  # delimiter, strip tabs, expands, its token
        self.want_delim: bool | None = None  # after << / <<- the next word is a heredoc delimiter
        self.dbracket = False  # inside [[ ]], where < > && || ( ) are operands, not operators
        self.lenient = False  # the text ended inside a quote, substitution or heredoc

    def _flush(self, w: _Word, out: list[Tok]) -> _Word:
        if w.start < 0:
            return w
        tok = Tok("w", "".join(w.parts), self.s, w.start, self.i, w.subs)
        out.append(tok)
        if self.want_delim is not None:
            self.heredocs.append((tok.text, self.want_delim, not w.quoted, tok))
            self.want_delim = None
        elif tok.raw in ("[[", "]]"):  # [[ opens a test only where a command starts (echo [[ && make: no)
            prev = out[-2] if len(out) > 1 else None
            self.dbracket = tok.raw == "[[" and (prev is None or prev.kind == "op" or prev.raw in KEYWORDS)
        return _Word()

    def tokens(self, close: bool = False) -> list[Tok]:
        """Lex to the end, or (close=True, inside $( or <( ) up to the ")" that closes it."""
        s, w, depth = self.s, _Word(), 0
        out: list[Tok] = []
        while self.i < self.n:
            i, c = self.i, s[self.i]
            word_paren = c == "(" and w.last() in ("=", "!", "@", "*", "+", "?")  # a=(x) !(x)
            if c == "\\" and s.startswith("\\\n", i):  # line continuation: dropped
                self.i += 2
            elif c in " \t\r\n":
                if w.start >= 0:
                    w = self._flush(w, out)
                self.i += 1
                if c == "\n":
                    out.append(Tok("op", "\n"))
                    self.dbracket = False
                    self._read_heredocs()
            elif c == "#" and w.start < 0:  # comment: dropped up to, not including, the newline
                j = s.find("\n", i)
                self.i = j if j >= 0 else self.n
            elif (c in "|&;()<>" and not word_paren and not (c in "<>" and s.startswith("(", i + 1))
                  and (c == ";" or not self.dbracket)):  # in [[ a < b && c ]], < && ( ) are word characters
                fd = c in "<>" and w.start >= 0 and not w.quoted and not w.subs and "".join(w.parts).isdigit()
                start, w = (w.start, _Word()) if fd else (i, self._flush(w, out))  # 2> : digits name an fd
                if c == ")":
                    self.i += 1
                    if close and depth == 0:
                        return out
                    depth = max(depth - 1, 0)
                    out.append(Tok("op", ")"))
                elif s.startswith("((", i) and (not out or out[-1].kind == "op" or out[-1].raw in KEYWORDS):
                    self.i = self._balanced(i, "(", ")")  # arithmetic command (( ... )): data
                    out.append(Tok("w", "((", s, i, self.i))
                elif c == "(":
                    depth += 1
                    self.i += 1
                    out.append(Tok("op", "("))
                else:
                    matched = _OPERATOR.match(s, i)
                    assert matched is not None  # c is one of | & ; < >: one always matches
                    op = matched.group()
                    self.i += len(op)
                    redirect = c in "<>" or op.startswith("&>")
                    out.append(Tok("r" if redirect else "op", op, s, start, self.i))
                    if op in ("<<", "<<-"):
                        self.want_delim = op == "<<-"
            else:
                if w.start < 0:
                    w.start = i
                if c == "\\":
                    w.parts.append(s[i + 1:i + 2])
                    w.quoted, self.i = True, i + 2
                elif c == "'":
                    j = s.find("'", i + 1)
                    if j < 0:
                        j, self.lenient = self.n, True
                    w.parts.append(s[i + 1:j])
                    w.quoted, self.i = True, j + 1
                elif c == '"':
                    w.quoted, self.i = True, i + 1
                    self._dquote(w, True)
                elif c == "`":
                    self._backtick(w)
                elif c == "$":
                    self._dollar(w, False)
                elif c in "<>" and s.startswith("(", i + 1):  # process substitution <(...) / >(...)
                    self.i += 2
                    w.subs.append(self._nested())
                    w.parts.append(c + "(...)")
                elif word_paren:
                    self.i = self._balanced(i, "(", ")")
                    w.parts.append(s[i:self.i])
                else:
                    m = _PLAIN.match(s, i)
                    self.i = m.end() if m else i + 1  # odd whitespace (U+00A0, ...) is part of a word
                    w.parts.append(s[i:self.i])
        self._flush(w, out)
        self.lenient = self.lenient or close
        return out

    def _nested(self) -> list[Tok]:
        if self.depth >= _MAX_DEPTH:
            self.i, self.lenient = self.n, True
            return []
        self.depth, saved, self.dbracket = self.depth + 1, self.dbracket, False
        inner = self.tokens(close=True)
        self.depth, self.dbracket = self.depth - 1, saved
        return inner

    def _balanced(self, j: int, open_: str, close_: str) -> int:
        """Index just past the bracket that balances the one at j (arithmetic, ${...}, arrays)."""
        level = 0
        while j < self.n:
            level += (self.s[j] == open_) - (self.s[j] == close_)
            j += 1
            if level == 0:
                return j
        self.lenient = True
        return self.n

    def _dollar(self, w: _Word, in_dquote: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1:i + 2]
        if nxt == "'" and not in_dquote:  # $'...' (ANSI-C quoting: \' does not end it)
            j = i + 2
            while j < self.n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            w.parts.append(re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), s[i + 2:j]))
            w.quoted, self.i, self.lenient = True, min(j + 1, self.n), self.lenient or j >= self.n
        elif nxt == '"' and not in_dquote:  # $"..." (locale string): a double-quoted string
            w.quoted, self.i = True, i + 2
            self._dquote(w, True)
        elif s.startswith("$((", i) or nxt == "{":  # arithmetic or parameter expansion: data
            self.i = self._balanced(i + 1, "(", ")") if nxt == "(" else self._balanced(i + 1, "{", "}")
            w.parts.append(s[i:self.i])
        elif nxt == "(":
            self.i += 2
            w.subs.append(self._nested())
            w.parts.append("$(...)")
        else:
            w.parts.append("$")
            self.i += 1

    def _dquote(self, w: _Word, stop: bool) -> None:
        """Inside "...", only $( ), ${ }, backticks and some escapes are special. stop=False: heredoc body."""
        s = self.s
        while self.i < self.n:
            i, c = self.i, s[self.i]
            if c == '"' and stop:
                self.i += 1
                return
            if c == "\\" and s[i + 1:i + 2] in ("$", "`", '"', "\\", "\n"):
                w.parts.append(s[i + 1].strip("\n"))
                self.i += 2
            elif c == "$":
                self._dollar(w, True)
            elif c == "`":
                self._backtick(w)
            else:
                m = _DQ_PLAIN.match(s, i)
                self.i = m.end() if m else i + 1
                w.parts.append(s[i:self.i])
        self.lenient = self.lenient or stop

    def _backtick(self, w: _Word) -> None:
        s, j, buf = self.s, self.i + 1, []
        while j < self.n and s[j] != "`":
            j += s[j] == "\\" and s[j + 1:j + 2] in ("`", "\\", "$")  # \` \\ \$ inside backticks
            buf.append(s[j:j + 1])
            j += 1
        self.lenient, self.i = self.lenient or j >= self.n, min(j + 1, self.n)
        w.parts.append("`...`")  # (nesting backticks needs ever more escapes: the depth stays small)
        sub = _Lexer("".join(buf), self.depth + 1)
        w.subs.append(sub.tokens())
        self.lenient = self.lenient or sub.lenient

    def _read_heredocs(self) -> None:
        """After a newline: skip the bodies of pending heredocs (data, never split into stages)."""
        pending, self.heredocs = self.heredocs, []
        for delim, strip, expands, tok in pending:
            s, start, body_end = self.s, self.i, self.n
            while self.i < self.n:
                j = s.find("\n", self.i)
                end = self.n if j < 0 else j
                line, line_start, self.i = s[self.i:end], self.i, min(end + 1, self.n)
                if (line.lstrip("\t") if strip else line) == delim:
                    body_end = line_start
                    break
            else:
                self.lenient = True
            body = s[start:body_end]
            if expands and ("$(" in body or "`" in body):  # an unquoted delimiter expands $( ) in the body
                sub, sw = _Lexer(body, self.depth + 1), _Word()
                sub._dquote(sw, False)
                tok.subs.extend(sw.subs)


def lex(command: str) -> tuple[list[Tok], bool]:
    """Tokens of a command, and whether the lexer had to be lenient (unterminated quote, heredoc, ...)."""
    lexer = _Lexer(command)
    return lexer.tokens(), lexer.lenient
