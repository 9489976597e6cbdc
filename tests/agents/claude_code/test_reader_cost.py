"""The Claude Code reader's shortcuts (issue 24, part 4) give what the plain way gives: each is checked
against a plain reference on hand-written and seeded generated input."""

from __future__ import annotations

import random

from xshare.measure import shell_lexer
from xshare.measure.ledger import OVERHEAD, Ledger
from xshare.measure.shell_lexer import lex


def test_every_operator_is_read_whole_longest_first():
    for op in "&>> &> && || |& ;;& ;; ;& <<< <<- << <& <> >> >| >& | & ; < >".split():
        tokens, _ = lex(f"a {op} b")
        assert [t.raw for t in tokens][:2] == ["a", op], op


def test_the_operator_pattern_finds_what_the_first_matching_operator_is():
    """The plain way: the first operator of the longest-first list the text starts with, at every place."""
    rng = random.Random(24)
    for _ in range(3000):
        text = "".join(rng.choice("&|;<>-x ") for _ in range(rng.randint(1, 8)))
        for at, char in enumerate(text):
            if char in "&|;<>":
                plain = next(op for op in shell_lexer._OPERATORS if text.startswith(op, at))
                assert shell_lexer._OPERATOR.match(text, at).group() == plain, (text, at)


def test_a_call_carries_what_is_present_and_the_overhead_in_category_order():
    ledger = Ledger()
    ledger.add("shell", 30, key="a")
    ledger.add("exploration", 50, key="b")
    ledger.add("conversation", 0, key="c")  # nothing present: not carried
    ledger.call(200)
    context = ledger.watch.last["context"]
    assert context == {"exploration": 50, "shell": 30, OVERHEAD: 120}
    assert list(context) == ["exploration", "shell", OVERHEAD]
    assert ledger.billed["exploration"] == 50 and ledger.billed[OVERHEAD] == 120
