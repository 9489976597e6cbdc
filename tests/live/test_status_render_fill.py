"""What fills the context, live (`{fill}`), and the fields alone for another status line (`--fields`,
`xshare statusline command`): saved by the hook with the page's ledger, rendered from the summary only."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from claude_pages import claude_data  # tests/support/ is on sys.path

from tests.live.test_status_render import run_script, status_payload
from xshare.agents.claude_code.transcript import describe
from xshare.cli import main
from xshare.demo.writer import TranscriptWriter, text
from xshare.live import session_state
from xshare.live import status_render as statusline
from xshare.measure import tokens
from xshare.state.paths import line_file

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
MODULE = "def handler(request):\n    return respond(request, status=200)\n" * 40


def _working_session(tmp_path: Path) -> Path:
    """A session that reads, searches, edits and runs the tests: every group of `{fill}` but injected."""
    writer = TranscriptWriter("c0ffee", "/home/dev/api", start=START, model="claude-sonnet-4-6")
    writer.user("Make every handler return an explicit status code.")
    read = writer.use("Read", {"file_path": "/home/dev/api/handlers.py"})
    writer.read_result(read, "/home/dev/api/handlers.py", MODULE)
    grep = writer.use("Bash", {"command": "rg -n 'status=' handlers/"})
    writer.bash_result(grep, "".join(f"handlers/h{n}.py:{n}:    status=200\n" for n in range(30)))
    edit = writer.use("Edit", {"file_path": "/home/dev/api/handlers.py", "old_string": "status=200",
                               "new_string": "status=HTTP_OK"})
    writer.edit_result(edit, "/home/dev/api/handlers.py", "status=200", "status=HTTP_OK", MODULE)
    tests = writer.use("Bash", {"command": "pytest -q"})
    writer.bash_result(tests, "..........                                [100%]\n10 passed in 0.41s\n")
    writer.call(text("Every handler now returns HTTP_OK explicitly; the tests pass."))
    path = tmp_path / "proj" / "c0ffee.jsonl"
    writer.write(path)
    return path


def _saved(tmp_path: Path, last_context: object, prompt: int = 12_000) -> Path:
    """A summary as the hook writes it, with the given last-call context."""
    path = tmp_path / "proj" / "beef.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    summary = {"method": 0, "tokenizer": "o200k_base", "offset": 0, "transcript": str(path), "api_calls": 7,
               "exploration_share_of_context": 0.41, "exploration_share_of_prompt": 0.3,
               "recorded_over_billed": 0.97, "compactions": 0, "usage": {"cache_read": prompt}, "weighted": 1200.0,
               "last": {"prompt": prompt, "usage": {"cache_read": prompt}}, "last_context": last_context,
               "rebuilds": 0, "last_rebuild": None, "rebuild_now": False, "nudge": None}
    line_file(path.stem).parent.mkdir(parents=True, exist_ok=True)
    line_file(path.stem).write_text(json.dumps(summary))
    return path


def test_the_hook_saves_the_last_calls_context_as_the_page_counts_it(tmp_path: Path):
    path = _working_session(tmp_path)
    session_state.update(path)
    saved = json.loads(line_file(path.stem).read_text())
    last = claude_data(describe(path), tokens.choose()).calls[-1]  # the page's per-call ledger log
    expected = {category: count for category, count in last["present"].items() if count} | \
        {"overhead": last["overhead"]}
    assert saved["last_context"] == expected
    assert {"exploration", "edit", "shell", "conversation"} <= set(saved["last_context"])
    line = statusline.render(status_payload(path), "{fill}", None, colour=False)
    size = f"{last['prompt'] / 1000:.1f}k" if last["prompt"] >= 1000 else str(last["prompt"])
    assert line.startswith(f"context now {size}: explore ") and "overhead " in line
    shares = [int(part.rsplit(" ", 1)[1].rstrip("%").replace("<1", "0")) for part in line.split(": ", 1)[1].split(", ")]
    assert 98 <= sum(shares) <= 102  # the groups shown cover what was counted


def test_fill_renders_the_saved_summary_in_shares_of_what_was_counted(tmp_path: Path):
    path = _saved(tmp_path, {"exploration": 4100, "edit": 900, "conversation": 3000, "injected": 10,
                             "overhead": 2000})
    assert statusline.render(status_payload(path), "{fill}", None, colour=False) == \
        "context now 12.0k: explore 41%, edits 9%, chat 30%, overhead 20%, other <1%"


def test_the_rarer_categories_read_as_other_and_the_size_falls_back_to_the_count():
    assert statusline.fill_field({"web": 50, "reread": 30, "other": 20, "exploration": 100}, None) == \
        "context now 200: explore 50%, other 50%"


@pytest.mark.parametrize("context", [None, "lots", [], {}, {"exploration": "a lot"}, {"overhead": 0}])
def test_a_summary_without_the_context_or_of_the_wrong_shape_leaves_the_field_empty(tmp_path: Path, context):
    path = _saved(tmp_path, context)
    shown = run_script(status_payload(path), "--no-catch-up", "--no-color")
    assert shown.returncode == 0 and b"Traceback" not in shown.stderr
    lines = shown.stdout.decode().splitlines()
    assert lines[0].startswith("explore 41.0% of context") and "context now" not in shown.stdout.decode()
    assert statusline.fill_field(context) == ""


def test_the_fields_alone_are_exactly_the_chosen_fields_plain_on_one_line(tmp_path: Path):
    path = _saved(tmp_path, {"exploration": 4100, "edit": 900, "conversation": 3000, "injected": 10,
                             "overhead": 2000})
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"} | {"COLUMNS": "30"}
    shown = run_script(status_payload(path), "--no-catch-up", "--fields", "context,fill", env=env)
    assert shown.returncode == 0 and shown.stderr == b""
    assert shown.stdout.decode() == ("explore 41.0% of context · context now 12.0k: explore 41%, edits 9%, chat 30%, "
                                     "overhead 20%, other <1%\n")  # no colour, no width cut: the host lays out
    calls = run_script(status_payload(path), "--no-catch-up", "--fields", "{calls} {window}", env=env)
    assert calls.stdout.decode() == "7 calls · ctx 42%\n"


def test_the_fields_alone_say_nothing_until_the_hook_has_saved_and_name_a_bad_field(tmp_path: Path):
    waiting = run_script(status_payload(tmp_path / "proj" / "none.jsonl"), "--no-catch-up", "--fields", "context")
    assert waiting.returncode == 0 and waiting.stdout == b"\n"  # the host's widget hides
    bad = run_script({}, "--no-catch-up", "--fields", "context,fil")
    assert bad.returncode == 0 and bad.stdout.decode().startswith("xshare: --fields: unknown field fil; the fields")
    assert len(bad.stdout.decode().splitlines()) == 1


def test_the_command_printed_for_a_widget_runs_the_fast_script_and_shows_the_fields(tmp_path: Path, capsys):
    path = _saved(tmp_path, {"exploration": 1000, "overhead": 1000}, prompt=2_000)
    assert main(["statusline", "command", "--fields", "context,fill"]) == 0
    command = capsys.readouterr().out.strip()
    assert " -I -S " in command and command.endswith('statusline.py" --fields "context,fill"')
    shown = subprocess.run(shlex.split(command) + ["--no-catch-up"], input=json.dumps(status_payload(path)),
                           capture_output=True, text=True, timeout=30)
    assert shown.stdout == "explore 41.0% of context · context now 2.0k: explore 50%, overhead 50%\n"
    assert main(["statusline", "command", "--fields", "context,nope"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1 and "unknown field nope" in said.err
    assert main(["statusline", "install", "--fields", "context"]) == 2  # not silently the whole line instead
    said = capsys.readouterr()
    assert said.err.count("\n") == 1 and "--fields is for" in said.err and not list(tmp_path.rglob("settings.json"))


def test_the_help_and_the_install_check_know_every_field(capsys):
    with pytest.raises(SystemExit):
        main(["statusline", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in statusline.FIELD_NAMES) and "fill" in statusline.FIELD_NAMES
    assert " ".join(statusline.DEFAULT_LINE2.split()) in help_text
    assert statusline.install_refusal("{context}", "{fill} · {last}") is None
    assert "unknown field {fills}" in statusline.install_refusal("{fills}", None)
