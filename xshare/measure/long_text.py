"""A long text counted in bounded memory and linear time, with tiktoken's own count wherever that is possible.

tiktoken holds every token of a text as a Python int (about 36 bytes each) and merges one pre-tokenizer piece
in time that grows with the square of its length (a 48 MB piece of `ab` repeated: 3 GB and a minute). The
pre-tokenizer's pieces are merged independently, so a text is counted in parts cut where a piece starts:
  - a long text is cut into parts of about PART characters, each at a newline followed by a character that
    starts a piece whatever came before it (no blank, no `/`, which a punctuation piece takes after newlines);
  - in a part, each piece of LONG_PIECE characters or more is counted alone (`count_piece`): one that repeats
    a unit of up to MAX_UNIT characters is shortened by whole blocks far from its ends, whose tokens are
    added back (exact: a block more is its tokens more, checked on the unit before use); any other is counted
    in windows of LONG_PIECE characters, each merged as a piece of its own. That last count is the one not
    exact: BPE merges near a cut differ, by at most a few tokens each (the README's method), so at most a
    few tokens per 65,536 characters of one piece with no repeating unit (a random run of letters).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

PART = 1 << 20  # characters of a long text counted at a time
LONG_PIECE = 1 << 16  # a piece this long is counted alone
MAX_UNIT = 256  # the longest repeating unit a long piece is shortened by
_MARGIN = 1 << 14  # characters kept at each end of a shortened piece: its ends' merges stay as they were
_SLACK = 8  # a piece's characters outside its run: a leading mark, a contraction ('ll), trailing newlines
# where a piece starts whatever came before: after a newline, unless a blank or `/` follows (a punctuation
# piece takes newlines and slashes after it), or at a single space between two non-blank characters (no
# piece takes a space after a non-blank, and the space starts the next). Python's \s holds every character
# the pre-tokenizer's does, so this never cuts where it must not.
_CUT = re.compile(r"(?<=\n)(?=[^\s/])|(?<=\S)(?= \S)")
# a cheap test first: a long piece is a long run of non-blanks, or of newlines and slashes
_MAY_HOLD_LONG_PIECE = re.compile(rf"(?<!\S)\S{{{LONG_PIECE - _SLACK},}}|(?<![\r\n/])[\r\n/]{{{LONG_PIECE - _SLACK},}}")
_CUT_BACK = re.compile(r"(?s:.*)(?:(?<=\n)(?=[^\s/])|(?<=\S)(?= \S))")  # the last such place (its end)


@functools.lru_cache(maxsize=1)
def _patterns():
    """o200k_base's pre-tokenizer (tiktoken's own pattern) and a search for runs one piece could be."""
    import regex  # tiktoken's own dependency, for its pattern's \p classes
    import tiktoken_ext.openai_public as openai_public

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda _url, expected_hash=None: {}  # the pattern alone: no vocabulary
    try:
        pattern = openai_public.o200k_base()["pat_str"]
    finally:
        openai_public.load_tiktoken_bpe = original
    # each run is tried from its start alone (the look-behinds): a search linear in the text. The regex
    # module unrolls a counted repeat (35 MB for {65528,}): runs of 1024 and more are found, the long kept
    letters, marks, breaks = r"[\p{L}\p{M}]", r"[^\s\p{L}\p{N}]", r"[\r\n/]"
    candidates = "|".join(rf"(?<!{run}){run}{{1024}}{run}*" for run in (letters, marks, breaks))
    return regex.compile(pattern), regex.compile(candidates)


def parts(text: str) -> Iterator[tuple[str, bool]]:
    """The text as consecutive parts, each cut where a piece starts: (part, whether it is one long piece)."""
    start = 0
    while start < len(text):
        found = _CUT.search(text, start + PART)
        cut = found.start() if found else len(text)
        if cut - start > 2 * PART:  # nowhere to cut by its characters alone: by its pieces
            yield from _grouped(text, start, cut)
        else:
            yield from _long_pieces(text[start:cut])
        start = cut


def _grouped(text: str, start: int, end: int) -> Iterator[tuple[str, bool]]:
    """text[start:end] in parts of about PART characters at its pieces' ends, every long piece on its own."""
    done = start
    for piece in _patterns()[0].finditer(text, start, end):
        if piece.end() - piece.start() >= LONG_PIECE:
            if piece.start() > done:
                yield text[done:piece.start()], False
            yield piece.group(), True
            done = piece.end()
        elif piece.end() - done >= PART:
            yield text[done:piece.end()], False
            done = piece.end()
    if done < end:
        yield text[done:end], False


def _long_pieces(part: str) -> Iterator[tuple[str, bool]]:
    """The part with every piece of LONG_PIECE characters or more on its own."""
    if len(part) < LONG_PIECE or not _MAY_HOLD_LONG_PIECE.search(part):
        yield part, False
        return
    pieces, candidates = _patterns()
    done = scanned = 0  # split up to `done`, its pieces read up to `scanned`: a piece starts at each
    for candidate in candidates.finditer(part):
        if candidate.end() <= scanned or candidate.end() - candidate.start() < LONG_PIECE - _SLACK:
            continue
        found = _CUT_BACK.search(part, scanned, candidate.start())
        for piece in pieces.finditer(part, found.end() if found else scanned):
            if piece.end() - piece.start() >= LONG_PIECE:
                if piece.start() > done:
                    yield part[done:piece.start()], False
                yield part if piece.end() - piece.start() == len(part) else piece.group(), True  # whole: no copy
                done = piece.end()
            scanned = piece.end()
            if scanned >= candidate.end():
                break
    if done < len(part):
        yield part[done:], False


def count_piece(piece: str, count: Callable[[str], int], blocks_of: dict) -> int:
    """One long piece's tokens: shortened by whole blocks where it repeats a unit, else in windows."""
    for lead in (0, 1):  # a piece may start with one mark before its run
        unit = _unit(piece, lead)
        if unit is None:
            continue
        block = blocks_of.get((piece[:lead], unit), ())
        if block == ():
            block = blocks_of[piece[:lead], unit] = _block(piece[:lead], unit, count)
        if block is None:
            break
        chars, tokens = block
        blocks = (_repeated_to(piece, lead, len(unit)) - lead - 2 * _MARGIN) // chars
        if blocks <= 0:
            break
        shorter = piece[:lead + _MARGIN] + piece[lead + _MARGIN + blocks * chars:]
        return count_piece(shorter, count, blocks_of) + blocks * tokens
    if len(piece) < LONG_PIECE:
        return count(piece)
    return sum(count(piece[start:start + LONG_PIECE]) for start in range(0, len(piece), LONG_PIECE))


def _unit(piece: str, lead: int) -> str | None:
    """The shortest unit of up to MAX_UNIT characters the piece starts repeating after its first `lead`."""
    body = piece[lead:lead + 4 * MAX_UNIT]
    for size in range(1, MAX_UNIT + 1):
        if body[size:] == body[:-size]:
            return piece[lead:lead + size]
    return None


def _repeated_to(piece: str, lead: int, size: int, step: int = 1 << 20) -> int:
    """Where the piece stops repeating its `size` characters after `lead` (compared a window at a time, the
    first unequal window halved down to its first unequal character)."""
    for start in range(lead + size, len(piece), step):
        end = min(start + step, len(piece))
        if piece[start:end] != piece[start - size:end - size]:
            while end - start > 1:  # piece[start:end] holds the first difference
                middle = (start + end) // 2
                if piece[start:middle] == piece[start - size:middle - size]:
                    start = middle
                else:
                    end = middle
            return start
    return len(piece)


def _block(lead: str, unit: str, count: Callable[[str], int]) -> tuple[int, int] | None:
    """(characters, tokens) of the block a long run of `unit` grows by: the fewest units that add the same
    tokens to runs of any length (checked over MAX_UNIT consecutive lengths), else None."""
    base = -(-2048 // len(unit))
    most = max(1, MAX_UNIT // len(unit))
    sizes: dict[int, int] = {}

    def size(units: int) -> int:
        if units not in sizes:
            sizes[units] = count(lead + unit * (base + units))
        return sizes[units]

    for units in range(1, most + 1):
        grows = size(units) - size(0)
        if grows > 0 and all(size(shift + units) - size(shift) == grows for shift in range(most)):
            return units * len(unit), grows
    return None
