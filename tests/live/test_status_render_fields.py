"""The status line's cache fields ({last}, {session}, {nudge}, {rebuilds}, {rebuilt}) and its second line:
computed by the hook (the same rules as the HTML page), rendered from its saved summary only."""

from __future__ import annotations

import json
import os
import re
import shlex
from datetime import datetime, timezone
from pathlib import Path

import pytest
from claude_pages import claude_data  # tests/support/ is on sys.path

from tests.live.test_status_render import run_script, status_payload
from xshare.agents.claude_code.transcript import describe
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.demo.writer import TranscriptWriter, text
from xshare.html.analysis import compaction_now, find_compactions, find_rebuilds, nudge_now
from xshare.live import session_state
from xshare.live import status_render as statusline
from xshare.measure import tokens
from xshare.measure.economics import weighted
from xshare.state.paths import line_file

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
ANSI = re.compile(r"\033\[[0-9;]*m")


def test_the_hook_saves_what_the_html_page_finds(tmp_path: Path):
    """Every demo transcript: the live summary's rebuilds, last cause and nudge are the page's."""
    demo = write_demo_corpus(tmp_path / "demo")
    checked = 0
    for path in sorted(demo.rglob("*.jsonl")):
        session_state.update(path)
        saved = json.loads(line_file(describe(path).session_id).read_text())
        data = claude_data(describe(path), tokens.choose())
        rebuilds = find_rebuilds(data)
        cards, _ = find_compactions(data)
        now = compaction_now(data, cards)
        expected = nudge_now(data, cards, now[0]) if now else None
        assert saved["rebuilds"] == len(rebuilds), path.name
        assert (saved["last_rebuild"] or {}).get("cause") == (rebuilds[-1].cause if rebuilds else None)
        assert ({k: v for k, v in saved["nudge"].items() if k != "basis"} if saved["nudge"] else None) == expected
        assert saved["last"]["prompt"] == data.calls[-1]["prompt"]
        assert saved["weighted"] == pytest.approx(weighted(saved["usage"]))
        checked += bool(rebuilds) + bool(expected)
    assert checked >= 3  # the demo has rebuilds and nudges to compare, not only empty fields


def _session(tmp_path: Path, switch_model: bool) -> tuple[TranscriptWriter, Path]:
    writer = TranscriptWriter("f00d", "/home/dev/app", start=START, model="claude-sonnet-4-6")
    writer.user("Why does the build fail?")
    writer.call(text("Let me look."), usage={"input_tokens": 8, "cache_creation_input_tokens": 30_000,
                                             "cache_read_input_tokens": 0})
    writer.call(text("Found it."), usage={"input_tokens": 6, "cache_creation_input_tokens": 900,
                                          "cache_read_input_tokens": 30_000})
    if switch_model:
        writer.user("Try the other model.")
        writer.call(text("Switched."), model="claude-opus-4-6",
                    usage={"input_tokens": 4, "cache_creation_input_tokens": 31_500, "cache_read_input_tokens": 0})
    path = tmp_path / "proj" / "f00d.jsonl"
    writer.write(path)
    return writer, path


def test_a_rebuild_just_caused_shows_once_with_its_cause(tmp_path: Path):
    writer, path = _session(tmp_path, switch_model=True)
    session_state.update(path)
    first = statusline.render(status_payload(path), colour=False)
    assert "cache rebuilt: model switch (claude-sonnet-4-6 → claude-opus-4-6)" in first.split("\n")[1]
    writer.call(text("Done."), model="claude-opus-4-6",
                usage={"input_tokens": 5, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 31_504})
    writer.write(path)
    session_state.update(path)
    later = statusline.render(status_payload(path), "{rebuilds}", colour=False)
    assert "cache rebuilt" not in later and later.split("\n")[0] == "1 cache rebuild (last: model switch)"


def test_the_new_fields_render_the_saved_figures(tmp_path: Path):
    _, path = _session(tmp_path, switch_model=False)
    session_state.update(path)
    line = statusline.render(status_payload(path), "{last}", "{session} · {rebuilds}", colour=False)
    first, second = line.split("\n")
    assert first == "last call 30.9k (read 30.0k, write 900, fresh 6, out " + first.rsplit("out ", 1)[1]
    saved = json.loads(line_file(path.stem).read_text())
    assert saved["usage"]["cache_read"] == 30_000 and saved["usage"]["cache_write_5m"] == 30_900
    weighted_k = f"{(30_000 * 0.1 + 30_900 * 1.25 + 14 + saved['usage']['output'] * 5) / 1000:.1f}k"
    assert second == f"session {weighted_k} weighted (read 30.0k, write 30.9k, fresh 14, out " \
        f"{saved['usage']['output']}) · 0 cache rebuilds"


def test_a_line_too_wide_loses_fields_from_the_right():
    line = "explore 12.0% of context · 9.0% of bill · calib 97% · 1,234 calls"
    assert statusline.fit(line, 80) == line
    assert statusline.fit(line, 45) == "explore 12.0% of context · 9.0% of bill"
    assert statusline.fit(line, 10) == "explore 1…"
    coloured = "\033[33m/compact now: 9k fewer\033[0m ·  · last call 1k"
    assert statusline.fit(coloured, 24) == "\033[33m/compact now: 9k fewer\033[0m"  # colour takes no width


def test_the_script_honours_columns_no_color_and_the_switch(tmp_path: Path):
    demo = write_demo_corpus(tmp_path / "demo")
    for path in demo.rglob("*.jsonl"):
        session_state.update(path)
    path = next(p for p in sorted(demo.rglob("*.jsonl"))
                if not p.name.startswith("agent-") and json.loads(line_file(p.stem).read_text())["nudge"])
    env = {**os.environ, "COLUMNS": "60"}
    env.pop("NO_COLOR", None)
    shown = run_script(status_payload(path), "--no-catch-up", env=env)
    lines = shown.stdout.decode().rstrip("\n").split("\n")
    assert shown.returncode == 0 and len(lines) == 2 and "\033[33m/compact now" in lines[1]
    assert all(len(ANSI.sub("", line)) <= 60 for line in lines)
    plain = run_script(status_payload(path), "--no-catch-up", env={**env, "NO_COLOR": "1", "COLUMNS": "400"})
    assert "\033" not in plain.stdout.decode() and "last call" in plain.stdout.decode()
    off = run_script(status_payload(path), "--no-catch-up", "--no-line2", env=env)
    assert len(off.stdout.decode().rstrip("\n").split("\n")) == 1


@pytest.mark.parametrize("broken", [{"last": "x", "usage": [1], "nudge": 5, "rebuilds": "many",
                                     "last_rebuild": 3, "rebuild_now": True},
                                    {"last": {"usage": {"cache_read": "a lot"}}, "nudge": {"fewer": None}}])
def test_a_summary_of_the_wrong_shapes_gives_short_fields_not_a_failure(tmp_path: Path, broken: dict):
    _, path = _session(tmp_path, switch_model=False)
    session_state.update(path)
    saved = json.loads(line_file(path.stem).read_text()) | broken
    line_file(path.stem).write_text(json.dumps(saved))
    shown = run_script(status_payload(path), "--no-catch-up", "--format", "{calls} calls · {last} · {nudge} · "
                       "{rebuilds}", "--no-line2")
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr
    assert shown.stdout.decode().startswith(f"{saved['api_calls']} calls") and len(shown.stdout) < 200


def test_install_writes_the_fields_and_the_switch_that_the_script_reads(tmp_path: Path, isolated_home: Path):
    _, path = _session(tmp_path, switch_model=False)
    session_state.update(path)
    assert main(["statusline", "install", "--format", "{calls} calls · {session}", "--no-line2"]) == 0
    command = json.loads((isolated_home / ".claude" / "settings.json").read_text())["statusLine"]["command"]
    words = shlex.split(command)
    assert "--no-line2" in words and "--line2" not in words
    shown = run_script(status_payload(path), *words[4:], "--no-catch-up", env={**os.environ, "NO_COLOR": "1"})
    assert shown.stdout.decode().startswith("2 calls · session ") and shown.stdout.decode().count("\n") == 1


# an OSC 52 clipboard write, a clear screen and a newline that would forge a line of its own
HOSTILE_MODEL = "claude-opus\033]52;c;ZXZpbA==\a\033[2J\nexplore 0.0% of context\u202e"


def test_a_model_name_holding_escapes_is_printed_escaped(tmp_path: Path):
    writer = TranscriptWriter("f00d", "/home/dev/app", start=START, model="claude-sonnet-4-6")
    writer.user("Why does the build fail?")
    writer.call(text("Let me look."), usage={"input_tokens": 8, "cache_creation_input_tokens": 30_000,
                                             "cache_read_input_tokens": 0})
    writer.user("Try the other model.")
    writer.call(text("Switched."), model=HOSTILE_MODEL,
                usage={"input_tokens": 4, "cache_creation_input_tokens": 31_500, "cache_read_input_tokens": 0})
    path = tmp_path / "proj" / "f00d.jsonl"
    writer.write(path)
    session_state.update(path)
    line = statusline.render(status_payload(path), colour=True)
    first, second = line.split("\n")  # two lines: the name forged none
    assert "\033]" not in line and "\a" not in line and "\033[2J" not in line and "\u202e" not in line
    assert set(ANSI.findall(line)) <= {"\033[31m", "\033[32m", "\033[33m", "\033[0m"}  # only the line's own colours
    shown = "claude-opus[U+001B]]52;c;ZXZpbA==[U+0007][U+001B][2J[U+000A]explore 0.0% of context[U+202E]"
    assert f"cache rebuilt: model switch (claude-sonnet-4-6 → {shown})" in ANSI.sub("", second)
    assert first.startswith("explore ")
