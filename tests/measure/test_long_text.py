"""A long text is counted in parts cut where o200k's pre-tokenizer starts a piece, and a huge single piece in
bounded memory (issue 29: one 48 MB tool result of `ab` repeated took 3 GB and a minute inside tiktoken).
The parts' counts are tiktoken's own; a long piece that repeats no unit is counted in windows, off by at
most two tokens a window, as the README's method says."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from xshare.measure import long_text, tokens


def tiktoken_count(text: str) -> int:
    return len(tokens._load_o200k(tokens.PACKAGED_VOCAB).encode_ordinary(text))


def counter() -> tokens.Counter:
    return tokens.Counter(tokens.choose(remember=False))


def long_texts() -> list[str]:
    """Texts past tiktoken's comfort: one piece repeating a unit (after a mark, in capitals, of newlines after
    a full stop), and texts of many pieces cut in parts at newlines, at spaces, or nowhere but their pieces."""
    rng = random.Random(29)
    alphabet = (" \t\n\r" * 4 + "abcXYZ019_-.,;:'\"()[]{}<>|/\\" + "éßøñмир世界漢字مرح😀🎉\u200b\u3000\ufeff"
                + "\ud83d")
    return [
        "ab" * 150_000, "x = _" + "ab" * 100_000 + " end", "ABC" * 70_000 + "def", "-" * 200_000 + "\n",
        "." + "\n" * 100_000 + "x", "said: " + "ça" * 80_000 + "'ll go", "\n/" * 90_000,
        "".join(rng.choice(alphabet) for _ in range(1_300_000)),
        "   1\tdef f():\n   2\t    return 1\n" * 40_000 + "zz" * 70_000 + "word " * 300_000,
        "".join(rng.choice("abc019 ,.;") for _ in range(2_300_000)),  # one line: cut at its spaces
        "".join(rng.choice("abc019,.;") for _ in range(2_300_000)),  # no space, no newline: by its pieces
    ]


@pytest.mark.parametrize("index", range(len(long_texts())))
def test_a_long_text_counts_as_tiktoken_counts_it(index: int):
    text = long_texts()[index]
    assert counter().count(text) == tiktoken_count(text)


def test_the_parts_are_the_text_and_each_long_piece_stands_alone():
    text = "intro\n" + "ab" * 100_000 + "\n" + "words and more " * 150_000 + "-" * 70_000
    parts = list(long_text.parts(text))
    assert "".join(part for part, _ in parts) == text
    assert [part for part, whole in parts if whole] == ["ab" * 100_000, " " + "-" * 70_000]
    assert max(len(part) for part, whole in parts if not whole) <= 3 * long_text.PART


@pytest.mark.parametrize("alphabet", ["ab", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGH", "мирпривет", "-=+*#"])
def test_a_long_piece_that_repeats_nothing_is_off_by_at_most_two_tokens_a_window(alphabet: str):
    rng = random.Random(alphabet)
    piece = "".join(rng.choice(alphabet) * rng.randrange(1, 30) for _ in range(20_000))[:200_000]
    [(whole_piece, whole)] = list(long_text.parts(piece))
    assert whole and whole_piece == piece
    windows = -(-len(piece) // long_text.LONG_PIECE)
    assert abs(counter().count(piece) - tiktoken_count(piece)) <= 2 * (windows - 1)


_HUGE_PIECE = """
import resource, sys, time
from xshare.measure import tokens
counter = tokens.Counter(tokens.choose(remember=False))
counter.count("warm up")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = "ab" * 4_000_000 + " and " + "Zq" * 3_000_000
print(counter.count(text), (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


def test_a_huge_single_piece_is_counted_exactly_in_bounded_memory():
    """8 MB of `ab`, one piece, then 6 MB of short ones: tiktoken alone holds ~50 bytes a character for minutes."""
    done = subprocess.run([sys.executable, "-c", _HUGE_PIECE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    count, grown_mb = map(int, done.stdout.split())
    # "abab" is one token wherever it lies in a run of them, as tiktoken counts runs it can take; each "Zq" is
    # a piece of its own
    assert count == tiktoken_count("ab" * 40_000 + " and " + "Zq" * 3_000_000) + (4_000_000 - 40_000) // 2
    assert grown_mb < 150
