"""settings_json: set or delete one top-level key in a JSON text and leave every other byte alone."""

from __future__ import annotations

import json
import random

import pytest

from xshare.install import settings_json

LINE = {"type": "command", "command": '"/usr/bin/python3" -I -S "/x/statusline.py"', "padding": 0}
# values that trip a naive scanner: braces and quotes inside strings, escapes, nesting, literals
TRICKY = {"a}": "}{\"]", "nested": [1, {"b": [None, True, False, -1.5e3]}], "path": "C:\\\\x\\\\", "e": {},
          "l": [], "u": "grüß \u2028 dich"}


def documents(seed: int) -> list[str]:
    """The same settings written the ways people and tools write JSON."""
    rng = random.Random(seed)
    keys = list(TRICKY)
    rng.shuffle(keys)
    data = {key: TRICKY[key] for key in keys}
    return [json.dumps(data), json.dumps(data, separators=(",", ":")), json.dumps(data, indent=2) + "\n",
            json.dumps(data, indent=4, ensure_ascii=False), json.dumps(data, indent="\t") + "\n\n",
            "  " + json.dumps(data, indent=3).replace(": ", " : ") + "  "]


@pytest.mark.parametrize("seed", range(4))
def test_set_then_delete_gives_back_the_same_text(seed: int):
    for text in documents(seed):
        with_line = settings_json.set_value(text, "statusLine", LINE)
        assert json.loads(with_line) == {**json.loads(text), "statusLine": LINE}
        assert settings_json.delete(with_line, "statusLine") == text  # every byte of theirs as it was
        assert settings_json.raw_value(with_line, "statusLine") is not None


def test_replacing_a_value_changes_only_that_value():
    text = '{\n  "model": "opus",\n  "statusLine": {"type": "command", "command": "mine"},\n  "x": [1, 2]\n}\n'
    raw = settings_json.raw_value(text, "statusLine")
    assert raw == '{"type": "command", "command": "mine"}'
    replaced = settings_json.set_value(text, "statusLine", LINE)
    assert replaced.startswith('{\n  "model": "opus",\n  "statusLine": {\n    "type": "command",\n')
    assert replaced.endswith('\n  },\n  "x": [1, 2]\n}\n')
    assert settings_json.set_raw(replaced, "statusLine", raw) == text


def test_delete_handles_first_middle_last_only_and_repeated_keys():
    assert settings_json.delete('{"statusLine": 1, "a": 2}', "statusLine") == '{"a": 2}'
    assert settings_json.delete('{"a": 2, "statusLine": 1, "b": 3}', "statusLine") == '{"a": 2, "b": 3}'
    assert settings_json.delete('{\n  "a": 2,\n  "statusLine": 1\n}', "statusLine") == '{\n  "a": 2\n}'
    assert settings_json.delete('{ "statusLine": 1 }\n', "statusLine") == "{}\n"
    assert settings_json.delete('{"statusLine": 1, "a": 0, "statusLine": 2}', "statusLine") == '{"a": 0}'
    assert settings_json.delete('{"a": 1}', "statusLine") == '{"a": 1}'


def test_an_escaped_key_is_the_same_key_and_the_last_of_repeated_keys_is_set():
    text = '{"status\\u004cine": 1, "statusLine": 2}'
    assert settings_json.raw_value(text, "statusLine") == "2"
    assert settings_json.set_raw(text, "statusLine", "3") == '{"status\\u004cine": 1, "statusLine": 3}'


def test_a_key_on_the_opening_line_does_not_leak_the_brace_into_the_indent():
    text = '{"statusLine": 1,\n  "a": 2}'
    edited = settings_json.set_value(text, "statusLine", LINE)
    assert json.loads(edited) == {"statusLine": LINE, "a": 2} and edited.count("{") == 2


def test_adding_to_an_empty_object_and_a_new_document():
    assert json.loads(settings_json.set_value("{}", "statusLine", LINE)) == {"statusLine": LINE}
    assert json.loads(settings_json.set_value(" {\n}\n", "statusLine", LINE)) == {"statusLine": LINE}
    fresh = settings_json.new_document("statusLine", LINE)
    assert fresh.startswith('{\n  "statusLine": {\n    "type"') and fresh.endswith("}\n")
