"""Minimal edits to the text of a JSON object: set or delete one top-level key, leave every other byte.

The user's settings.json is theirs: its key order, indentation, spacing and the values xshare does not
own stay exactly as they wrote them. Callers parse the text first (only valid JSON objects get here);
every edit is checked by parsing the result, and falls back to a full rewrite in the file's indentation
only if the text edit would not give the intended object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_LITERAL = re.compile(r"[^,\]}\s]+")
_WS = " \t\r\n"


@dataclass(frozen=True)
class Member:
    key: str
    start: int  # where the key's opening quote is
    value_start: int
    value_end: int


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def _end(token: re.Pattern, text: str, at: int) -> int:
    """Where the token starting at `at` ends (the text is valid JSON, so one starts there)."""
    found = token.match(text, at)
    assert found is not None, f"no JSON token at {at}"
    return found.end()


def _value_end(text: str, at: int) -> int:
    """Where the JSON value starting at `at` ends (text is valid JSON)."""
    if text[at] == '"':
        return _end(_STRING, text, at)
    if text[at] not in "[{":
        return _end(_LITERAL, text, at)
    depth = 0
    while True:
        char = text[at]
        if char == '"':
            at = _end(_STRING, text, at)
            continue
        depth += char in "[{"
        depth -= char in "]}"
        at += 1
        if depth == 0:
            return at


def members(text: str) -> tuple[int, int, list[Member]]:
    """The top-level object's '{' and '}' positions and its members, in order."""
    opening = _skip(text, 0)
    at, found = _skip(text, opening + 1), []
    while text[at] != "}":
        key_end = _end(_STRING, text, at)
        value_start = _skip(text, _skip(text, key_end) + 1)
        value_end = _value_end(text, value_start)
        found.append(Member(json.loads(text[at:key_end]), at, value_start, value_end))
        at = _skip(text, value_end)
        at = _skip(text, at + 1) if text[at] == "," else at
    return opening, at, found


def raw_value(text: str, key: str) -> str | None:
    """The exact text of `key`'s value (the last one, as parsers take it), or None if absent."""
    spans = [m for m in members(text)[2] if m.key == key]
    return text[spans[-1].value_start:spans[-1].value_end] if spans else None


def _indent_of(text: str, at: int) -> str:
    """The leading whitespace of at's line ('' when the object starts on that line)."""
    line_start = text.rfind("\n", 0, at)
    if line_start < 0:
        return ""
    line = text[line_start + 1:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _style(text: str) -> tuple[str | None, str]:
    """The file's indentation unit (None: all on one line) and what follows a key (': ' or ':')."""
    opening, _, found = members(text)
    if not found:
        return "  ", ": "  # Claude Code writes two spaces
    first = found[0]
    key_end = _end(_STRING, text, first.start)
    colon = text[key_end:first.value_start]
    colon = colon if "\n" not in colon else ": "
    unit = _indent_of(text, first.start) if "\n" in text[opening:first.start] else None
    return unit, colon


def dump_value(value: object, text: str, member_indent: str) -> str:
    """`value` as JSON in the style of `text`, for a member indented by `member_indent`."""
    unit, colon = _style(text) if text.strip() else ("  ", ": ")
    if unit is None:
        return json.dumps(value, ensure_ascii=False, separators=(", " if colon.endswith(" ") else ",", colon))
    dumped = json.dumps(value, ensure_ascii=False, indent=unit, separators=(",", colon))
    return dumped.replace("\n", "\n" + member_indent)


def set_raw(text: str, key: str, value_text: str) -> str:
    """`text` with `key` (the last one, if repeated) set to the JSON text `value_text`."""
    opening, closing, found = members(text)
    same = [m for m in found if m.key == key]
    if same:
        return text[:same[-1].value_start] + value_text + text[same[-1].value_end:]
    unit, colon = _style(text)
    pair = json.dumps(key, ensure_ascii=False) + colon + value_text
    if not found:
        return text[:opening + 1] + ("\n" + (unit or "") + pair + "\n" if unit else pair) + text[closing:]
    last = found[-1]
    gap = text[text.rfind(",", 0, found[1].start) + 1:found[1].start] if len(found) > 1 else (
        "\n" + _indent_of(text, last.start) if unit is not None else " " * colon.endswith(" "))
    return text[:last.value_end] + "," + gap + pair + text[last.value_end:]


def set_value(text: str, key: str, value: object) -> str:
    """`text` with `key` set to `value`, indented like its neighbours."""
    found = [m for m in members(text)[2] if m.key == key] or members(text)[2]
    indent = _indent_of(text, found[-1].start) if found else ("" if _style(text)[0] is None else "  ")
    return set_raw(text, key, dump_value(value, text, indent))


def delete(text: str, key: str) -> str:
    """`text` without `key` (every occurrence), its separating comma and line with it."""
    while True:
        opening, closing, found = members(text)
        places = [i for i, m in enumerate(found) if m.key == key]
        if not places:
            return text
        i = places[-1]
        if i > 0:  # from the end of the previous value: its comma and this member's line go
            text = text[:found[i - 1].value_end] + text[found[i].value_end:]
        elif len(found) > 1:  # the first of several: up to the next key
            text = text[:found[0].start] + text[found[1].start:]
        else:  # the only one: the object becomes {}
            text = text[:opening + 1] + text[closing:]


def new_document(key: str, value: object) -> str:
    """A fresh settings file holding one key, as Claude Code would write it."""
    return json.dumps({key: value}, ensure_ascii=False, indent=2) + "\n"
