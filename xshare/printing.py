"""Text for people: the user's data made safe to print on a terminal, labels made safe to publish, and
the shares, tables and token counts every printer formats the same way.

A Hermes `sessions.source`, a model name or a session id is whatever a program stored: an escape sequence
in it would drive the terminal, a newline would forge a report line. Every printer passes such text
through `printable` (one field) or `printable_lines` (a block whose own newlines are kept); an unknown
group label is cut down to `safe_label`, so no path or prose reaches stdout or the JSON as a label.
Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence

# C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides, zero
# widths, ...): none of them belongs in a report line
_BEYOND_C0 = r"\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ud800-\udfff"
_INVISIBLE = re.compile(f"[\\x00-\\x1f{_BEYOND_C0}]")
_UNESCAPED_BY_JSON = re.compile(f"[{_BEYOND_C0}]")  # json.dumps escapes C0 inside strings; its newlines are layout
_SAFE_LABEL = re.compile(r"[A-Za-z0-9_.-]{1,64}")
OTHER = "other"


def _shown(match: re.Match) -> str:
    return f"[U+{ord(match.group()):04X}]"


def printable(text: object) -> str:
    """One field as it may be printed: every control or invisible character shown as [U+XXXX]."""
    return _INVISIBLE.sub(_shown, str(text))


def printable_lines(text: str) -> str:
    """A block of lines: each line made printable, the newlines between them kept."""
    return "\n".join(printable(line) for line in text.split("\n"))


def safe_label(text: object) -> str:
    """A group label as stored, when it is a plain word ([A-Za-z0-9_.-], up to 64 characters and not
    only dots); anything else — a path, spaces, escapes — becomes `other`."""
    if isinstance(text, str) and _SAFE_LABEL.fullmatch(text) and text.strip("."):
        return text
    return OTHER


def json_text(value: object) -> str:
    """JSON for stdout: json escapes C0 controls itself; C1 controls and the invisible format
    characters are escaped too (\\uXXXX is the same string to any JSON reader)."""
    dumped = json.dumps(value, indent=2, ensure_ascii=False)
    return _UNESCAPED_BY_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", dumped)


# a problem that names where it happened: the kind, this separator, then the place (a file's path)
_PLACE = "\x1f"
PLACES_SHOWN = 3  # named on stderr; the rest are counted


def problem_at(kind: str, place: object) -> str:
    """A problem's key that also says where (the places of one kind are listed together when said)."""
    return f"{kind}{_PLACE}{place}"


def problems_by_kind(problems: dict) -> dict[str, tuple[int, list[str]]]:
    """Problems counted by kind, with the places named (sorted) for the kinds that name them."""
    kinds: dict[str, tuple[int, list[str]]] = {}
    for key, count in problems.items():
        kind, _, place = str(key).partition(_PLACE)
        total, places = kinds.get(kind, (0, []))
        kinds[kind] = (total + count, sorted([*places, place]) if place else places)
    return kinds


def problem_lines(problems: dict, notes: dict[str, str] | None = None) -> list[str]:
    """One line per kind of problem, never one per line of input: how many, the places of those that name
    them (a few, the rest counted), and a note where one is given (the demo's: on purpose)."""
    said = []
    for kind, (count, places) in sorted(problems_by_kind(problems).items()):
        note = (notes or {}).get(kind)
        where = ""
        if places and not note:  # the files, so the user can look (the demo's are in a folder of its own)
            more = len(places) - PLACES_SHOWN
            where = " in " + ", ".join(places[:PLACES_SHOWN]) + (f" and {more:,} more" if more > 0 else "")
        said.append(f"{kind}: {count:,}{where}" + (f" ({note})" if note else ""))
    return said


def pct(value: float | None, missing: str = "unknown") -> str:
    """A share as printed everywhere: one decimal of a percent; `missing` when there is none."""
    return missing if value is None else f"{value:.1%}"


def columns_set() -> int | None:
    """COLUMNS when it holds a positive number (Claude Code sets it for the status line; ccusage reads it)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if columns > 0 else None


def output_width() -> int | None:
    """The columns to lay a report out in: COLUMNS when set (as ccusage reads it), else the width of the
    terminal stdout is; None when stdout is a file or a pipe, so a saved report keeps its full layout."""
    columns = columns_set()
    if columns:
        return columns
    try:
        if not sys.stdout.isatty():
            return None
        return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except (AttributeError, OSError, ValueError):  # a replaced stdout (tests, a capture) has no terminal
        return None


def wrap(text: str, width: int | None, indent: str = "") -> list[str]:
    """A paragraph as lines of at most `width` columns, the lines after the first indented by `indent`;
    one line when there is no width to fit."""
    if not width:
        return [text]
    import textwrap  # here, not at the top: the status line imports this module on every refresh

    return textwrap.wrap(text, max(width, 20), subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False) or [""]


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], width: int | None = None) -> list[str]:
    """Aligned text columns, the label to the left and the figures to the right, in `width` columns: one
    line a row when it fits; else each label on its own line above its figures, under headers broken over
    lines; else, narrowest, one figure a line. A row is never wider than the screen, so never wrapped."""
    for layout in (_wide_table, _stacked_table):
        lines = layout(header, rows)
        if width is None or max(map(len, lines)) <= width:
            return lines
    return _listed_table(header, rows)


def fitted_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], width: int | None,
                 drop: tuple[int, ...]) -> tuple[list[str], list[str]] | None:
    """One line a row: the columns in `drop` (least useful first) are given up one by one until the rows fit
    `width`, as ccusage's tables do; the lines and the headers of the columns given up, or None when even
    the columns kept do not fit."""
    kept = list(range(len(header)))
    for column in (None, *drop):
        if column is not None:
            kept.remove(column)
        lines = _wide_table(tuple(header[i] for i in kept), [tuple(row[i] for i in kept) for row in rows], 0)
        if width is None or max(map(len, lines)) <= width:
            return lines, [title for index, title in enumerate(header) if index not in kept]
    return None


def _wide_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], label_width: int = 25) -> list[str]:
    widths = [max([len(title)] + [len(row[index]) for row in rows]) for index, title in enumerate(header)]
    widths[0] = max(widths[0], label_width)  # the report's groups line up from table to table

    def line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return [line(header), "  ".join("-" * width for width in widths), *(line(row) for row in rows)]


def _stacked_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Each label on a line of its own, the figures under headers broken into words."""
    import textwrap  # as in wrap(): kept off the status line's imports

    titles = [textwrap.wrap(title, max([len(row[index]) for row in rows] + [max(map(len, title.split())),
                                                                              len(title) // 2 + 1]))
              for index, title in enumerate(header[1:], 1)]  # about two lines a header, never a word broken
    widths = [max([max(map(len, title))] + [len(row[index]) for row in rows]) for index, title in
              enumerate(titles, 1)]
    height = max(map(len, titles))
    titles = [[""] * (height - len(title)) + title for title in titles]  # the headers stand on the rule

    def line(cells: list[str]) -> str:
        return "  " + "  ".join(cell.rjust(width) for cell, width in zip(cells, widths, strict=True))

    head = [line([title[level] for title in titles]).rstrip() for level in range(height)]
    body = [text for row in rows for text in (row[0], line(list(row[1:])))]
    return [header[0], *head, "  " + "  ".join("-" * width for width in widths), *body]


def _listed_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Narrowest: each label, then one line per figure."""
    return [text for row in rows for text in
            (row[0], *(f"  {title}: {cell}" for title, cell in zip(header[1:], row[1:], strict=True)))]


USAGE_KINDS = ("cache read", "cache write", "fresh input", "output")  # as the HTML page names them


def usage_kinds(usage: dict, names: tuple[str, ...] = USAGE_KINDS, number: Callable[[int], str] = "{:,}".format) -> str:
    """Tokens by kind (cache read, cache write of either lifetime, fresh input, output), each `number`ed."""
    write = usage.get("cache_write_5m", 0) + usage.get("cache_write_1h", 0)
    counts = (usage.get("cache_read", 0), write, usage.get("input", 0), usage.get("output", 0))
    return ", ".join(f"{name} {number(count)}" for name, count in zip(names, counts, strict=True))
