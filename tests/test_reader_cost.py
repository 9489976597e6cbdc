"""The Claude Code reader's shortcuts (issue 24, part 4) give what the plain way gives: each is checked
against a plain reference on hand-written and seeded generated input."""

from __future__ import annotations

from xshare.measure.shell_lexer import lex


def test_every_operator_is_read_whole_longest_first():
    for op in "&>> &> && || |& ;;& ;; ;& <<< <<- << <& <> >> >| >& | & ; < >".split():
        tokens, _ = lex(f"a {op} b")
        assert [t.raw for t in tokens][:2] == ["a", op], op
