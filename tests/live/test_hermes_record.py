"""The Hermes plugin's hooks without Hermes: what they count is saved at a turn's end, one file per session,
named as the Claude Code hook names its files (xshare.state.paths.file_name)."""

from __future__ import annotations

import json

from agent_fixtures import Counted

from xshare.live import hermes_plugin
from xshare.state.paths import file_name


class Context:
    """Hermes's plugin context, as far as register() uses it: the hooks it registers are kept."""

    def __init__(self) -> None:
        self.hooks: dict = {}

    def register_hook(self, name: str, callback) -> None:
        self.hooks[name] = callback

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: None


def test_a_turn_end_saves_the_sessions_counts_under_its_safe_file_name():
    context = Context()
    hermes_plugin.register(context, lambda argv: 0)
    session = "20260301_100000_abcdef/child:1"  # a slash and a colon: neither belongs in a file name
    for _ in range(2):
        context.hooks["post_api_request"](session_id=session, task_id="t1", usage={
            "input_tokens": 100, "cache_read_tokens": 400, "prompt_tokens": 500})
    context.hooks["on_session_end"](session_id=session, task_id="t1")
    saved = hermes_plugin.live_dir() / f"{file_name(session)}.json"
    assert saved.name == "20260301_100000_abcdef~2Fchild~3A1.json"
    record = json.loads(saved.read_text())
    assert record["session_id"] == session and record["calls"] == 2 and record["prompt_tokens"] == 1000


def test_slash_xshare_prints_the_sessions_fields_escaped(tmp_path):
    from hermes_fixtures import HermesDb, call, read_result

    from xshare.agents.hermes.state_db import measure_hermes

    hostile = "20260301_100000_abcdef\033]52;c;ZXZpbA==\a\033[2J\nxshare: session forged"
    db = HermesDb(tmp_path / "state.db", 22)
    db.session(hostile, "cli\u202e\033[31m", tokens=(3000, 6000, 1000, 50), api_calls=2)
    db.message(hostile, "user", "where is the config read?")
    db.message(hostile, "assistant", None, tool_calls=[call("read_file", {"path": "config.py"}, "c1")])
    db.message(hostile, "tool", read_result("1|import os"), tool_call_id="c1")
    db.close()
    rows, _ = measure_hermes([tmp_path / "state.db"], Counted(len, "chars"))
    text = hermes_plugin.describe(rows[0], None, hostile)
    assert not any(ord(char) < 32 and char != "\n" or char == "\u202e" for char in text)
    first = text.split("\n")[0]
    assert first == ("xshare: session 20260301_100000_abcdef[U+001B]]52;c;ZXZpbA==[U+0007][U+001B][2J[U+000A]"
                     "xshare: session forged (other)")  # a source of no plain word reads other
    assert [line for line in text.split("\n") if line.startswith("xshare:")] == [first]  # no line forged
    assert f"API calls: {rows[0]['api_calls']:,}" in text
