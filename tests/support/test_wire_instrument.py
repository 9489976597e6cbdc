"""The wire check's instrument (tests/support/wire.py) on invented requests: what it counts, how it categorises,
and that its bill is exactly its count. Runs without Claude Code."""

from __future__ import annotations

import json

import pytest
from wire import Wire, bash_category, common_prefix_tokens, usage_of

from xshare.measure.tokens import Counter, choose

COUNT = Counter(choose()).count
PIXEL = {"type": "base64", "media_type": "image/png",  # a 1 x 1 PNG
         "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"}


@pytest.mark.parametrize(("command", "category"), [
    ("cat notes.txt", "exploration"), ("sed -n 1,40p app.py", "exploration"), ("ls -la | wc -l", "exploration"),
    ("cd src && grep -n retry *.py", "exploration"), ("sed -i s/a/b/ app.py", "shell"),
    ("python3 -c 'print(1)'", "shell"), ("cat a > b", "shell"), ("cat $(rm -f x)", "shell"),
    ("ls; make test", "shell"),
])
def test_the_read_only_rule(command: str, category: str):
    assert bash_category(command) == category


def request(messages: list[dict]) -> dict:
    return {"model": "claude-opus-5-5", "system": [{"type": "text", "text": "You are a coding agent."}],
            "tools": [{"name": "Read", "input_schema": {"type": "object"}}], "messages": messages}


def tool_turn(tool_id: str, name: str, tool_input: dict, result: object) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": result}]}]


def test_blocks_are_counted_and_categorised_from_the_request_alone():
    reminder = "<system-reminder>\nThe file changed.\n</system-reminder>"
    messages = [{"role": "user", "content": "read the app"},
                *tool_turn("t1", "Read", {"file_path": "/p/app.py"}, "1\tdef main():\n2\t    pass\n" + reminder),
                *tool_turn("t2", "Bash", {"command": "make test"}, [{"type": "text", "text": "3 passed"},
                                                                    {"type": "image", "source": PIXEL}]),
                *tool_turn("t3", "Edit", {"file_path": "/p/app.py", "old_string": "a", "new_string": "b"}, "ok"),
                *tool_turn("t4", "mcp__files__read_text", {"path": "/p/x"}, "some text"),
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "a long thought " * 50,
                                                   "signature": "s"}, {"type": "text", "text": "Done."}]}]
    counted = Wire().count(request(messages))
    read_call = COUNT('Read {"file_path":"/p/app.py"}')
    assert counted.tokens["exploration"] == read_call + COUNT("1\tdef main():\n2\t    pass\n")
    # the screenshot the command returned is billed by size (1 x 1 px: one token), in the command's category
    assert counted.tokens["shell"] == COUNT('Bash {"command":"make test"}') + COUNT("3 passed") + 1
    assert counted.tokens["edit"] > 0 and counted.tokens["reread"] == 0
    assert counted.commands == [("make test", "shell")]
    # the reminder appended to the Read result, the MCP tool and the reply are the rest; thinking is not counted
    assert "a long thought" not in " ".join(block.text for block in counted.blocks)
    assert any(block.text == reminder and block.category == "rest" for block in counted.blocks)
    assert counted.total == sum(block.tokens for block in counted.blocks)


def test_files_re_sent_after_a_compaction_are_re_sent_reads():
    called = ('<system-reminder>\nCalled the Read tool with the following input: {"file_path":"/p/app.py"}\n'
              "</system-reminder>")
    result = "<system-reminder>\nResult of calling the Read tool:\n1\tdef main():\n</system-reminder>"
    messages = [{"role": "user", "content": "This session is being continued from a previous conversation."},
                {"role": "user", "content": called},
                {"role": "user", "content": [{"type": "text", "text": result}, {"type": "text", "text": "go on"}]}]
    counted = Wire().count(request(messages))
    assert counted.tokens["reread"] == COUNT(called) + COUNT(result)
    assert counted.tokens["exploration"] == 0


def test_the_bill_is_the_count_and_the_cache_read_is_the_shared_leading_blocks():
    wire = Wire()
    first = wire.count(request([{"role": "user", "content": "read the app"}]))
    second_body = request([{"role": "user", "content": "read the app"},
                           *tool_turn("t1", "Read", {"file_path": "/p/app.py"}, "1\tx = 1\n")])
    second = wire.count(second_body)
    usage = usage_of(second, first.blocks)
    assert usage["cache_read_input_tokens"] == first.total == common_prefix_tokens(second.blocks, first.blocks)
    fields = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    assert sum(usage[name] for name in fields) == second.total
    # a changed system prompt breaks the prefix right after the tools (sent first): only they are read
    changed = json.loads(json.dumps(second_body))
    changed["system"][0]["text"] = "You are another agent."
    assert usage_of(wire.count(changed), second.blocks)["cache_read_input_tokens"] == COUNT(
        json.dumps(second_body["tools"], separators=(",", ":")))
    # a request that repeats the previous one exactly is all cache read, nothing fresh
    assert usage_of(second, second.blocks) == {"input_tokens": 0, "cache_creation_input_tokens": 0,
                                               "cache_read_input_tokens": second.total, "output_tokens": 7}
