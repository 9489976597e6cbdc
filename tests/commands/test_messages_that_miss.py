"""Issue 31, findings 7 and 8: messages that miss. A mistyped flag names the flag it was likely meant to be,
a missing folder its likely sibling, a hint never suggests what was given, an index of nothing is no page,
an empty mark is refused, a problem names its files, the status line says what it waits for and which
fields of Claude Code's JSON it reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from xshare.live import status_render as statusline
from xshare.report.periods import read_marks

REPO = Path(__file__).resolve().parents[2]


def _row(kind: str, uuid: str, **fields) -> str:
    row = {"type": kind, "uuid": uuid, "sessionId": "s1", "timestamp": "2026-11-30T10:00:00Z", **fields}
    return json.dumps(row) + "\n"


# --- a mistyped flag, a missing folder ------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "meant"), [
    (("report", "--sinc-days", "7"), "--since-days"),
    (("sessions", "--limt", "3"), "--limit"),
    (("html", "--indx"), "--index"),
    (("advice", "--no-dolars"), "--no-dollars"),
])
def test_a_mistyped_flag_says_which_flag_was_meant_under_its_commands_usage(capsys, argv, meant):
    with pytest.raises(SystemExit) as done:
        run(capsys, *argv)
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert err.startswith(f"usage: xshare {argv[0]} ")  # the command's usage, not the top level's
    assert f"unrecognized arguments: {argv[1]} (did you mean {meant}?)" in err


def test_a_word_like_no_flag_gets_no_guess(capsys):
    with pytest.raises(SystemExit):
        run(capsys, "report", "--zzzzqqq")
    err = capsys.readouterr().err
    assert "unrecognized arguments: --zzzzqqq" in err and "did you mean" not in err


def test_a_missing_folder_names_its_likely_sibling_and_the_hint_leaves_out_what_was_given(capsys, tmp_path: Path):
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    code, out, err = run(capsys, "report", "--all", "--no-history", "--claude-root", str(tmp_path / ".claud"))
    assert code == 2 and out == ""
    assert f"{tmp_path / '.claud'}: no such file or folder (did you mean {tmp_path / '.claude'}?)" in err
    hint = err.splitlines()[-1]
    assert hint.startswith("xshare: try ") and "--all" not in hint and "since-days" not in hint
    assert "another folder" in hint and "--demo" in hint


def test_the_hint_without_all_still_offers_the_whole_history(capsys, tmp_path: Path):
    (tmp_path / "projects").mkdir()
    code, _, err = run(capsys, "report", "--no-history", "--claude-root", str(tmp_path / "projects"))
    hint = err.splitlines()[-1]
    assert code == 2 and "did you mean" not in err
    assert hint.startswith("xshare: try `xshare report --all`, a longer --since-days")



def test_a_folder_named_without_sessions_is_said_but_a_project_folder_beside_its_root_is_not(capsys, tmp_path: Path):
    """A Claude Code project folder named beside its projects/ holds transcripts (measured through the root),
    though discover finds none from it alone: not a typo. An empty folder, or one of another agent's, is."""
    project = tmp_path / "claude" / "projects" / "-home-u-app"
    project.mkdir(parents=True)
    (project / "s1.jsonl").write_text(_row("user", "u1", message={"role": "user", "content": "hello there"}))
    (tmp_path / "empty").mkdir()
    _, _, err = run(capsys, "report", "--all", "--no-history", "--claude-root", str(tmp_path / "claude" / "projects"),
                    "--claude-root", str(project), "--claude-root", str(tmp_path / "empty"),
                    "--codex-home", str(tmp_path / "empty"))
    said = [line for line in err.splitlines() if line.endswith("sessions in it")]
    assert said == [f"xshare: --claude-root {tmp_path / 'empty'}: no Claude Code sessions in it",
                    f"xshare: --codex-home {tmp_path / 'empty'}: no Codex CLI sessions in it"]

# --- the index of nothing, an empty mark -----------------------------------------------------------------


def test_an_index_of_no_session_is_no_page_and_exits_2(capsys, tmp_path: Path):
    root = tmp_path / "claude" / "projects"
    root.mkdir(parents=True)
    out = tmp_path / "site" / "index.html"
    out.parent.mkdir()
    code, printed, err = run(capsys, "html", "--index", "--claude-root", str(root), "-o", str(out))
    assert code == 2 and printed == "" and not out.exists() and list(out.parent.iterdir()) == []
    assert "no session to list, so no index was written" in err and f"under {root}" in err


@pytest.mark.parametrize("label", ["", "   ", "\t"])
def test_an_empty_mark_is_refused_and_nothing_is_stored(capsys, isolated_home: Path, label: str):
    code, out, err = run(capsys, "mark", label)
    assert code == 2 and out == "" and "a mark needs words" in err
    assert read_marks() == []


def test_a_marks_label_is_stored_without_its_surrounding_blanks(capsys, isolated_home: Path):
    code, out, _ = run(capsys, "mark", "  new rule ")
    assert code == 0 and out.rstrip().endswith("  new rule")
    assert [mark["label"] for mark in read_marks()] == ["new rule"]


# --- a problem names its files ---------------------------------------------------------------------------


def test_incomplete_last_lines_name_their_files_a_few_then_a_count(capsys, tmp_path: Path):
    project = tmp_path / "projects" / "-home-u-app"
    project.mkdir(parents=True)
    cut = _row("user", "u1", message={"role": "user", "content": "hello there"}) + '{"type": "assistant", "uu'
    names = [f"s{number}.jsonl" for number in range(5)]
    for name in names:
        (project / name).write_text(cut)
    code, _, err = run(capsys, "report", "--all", "--no-history", "--claude-root", str(tmp_path / "projects"))
    line = next(line for line in err.splitlines() if "last lines incomplete" in line)
    assert code == 0
    assert line.endswith(f": 5 in {project / names[0]}, {project / names[1]}, {project / names[2]} and 2 more")


def test_the_demos_cut_line_keeps_its_note_and_names_no_temporary_file(capsys):
    _, _, err = run(capsys, "report", "--demo")
    line = next(line for line in err.splitlines() if "last lines incomplete" in line)
    assert line.endswith(": 1 (on purpose: one demo session is cut mid-line, as a transcript still being written is)")


# --- the status line's contract ---------------------------------------------------------------------------


@pytest.mark.parametrize(("payload", "said"), [
    ({}, "no session_id and transcript_path in the status JSON"),
    ({"session_id": "abc"}, "no session_id and transcript_path in the status JSON"),
    ({"session_id": "abc", "transcript_path": "/no/such/dir/abc.jsonl"}, "waiting for the session's first message"),
    ({"session_id": "abc", "transcript_path": "/etc/hostname"}, "not a Claude Code transcript"),
])
def test_a_session_with_no_figures_says_what_the_line_waits_for(isolated_home: Path, payload: dict, said: str):
    assert said in statusline.render(payload, update=False)


def test_a_session_whose_transcript_exists_is_measured_by_the_line_itself(isolated_home: Path, tmp_path: Path):
    """No hook has run (the plugin installed mid-session): the line starts the update and says so, then shows
    the figures once the update has saved them."""
    transcript = tmp_path / "abc.jsonl"
    transcript.write_text(_row("user", "u1", message={"role": "user", "content": "hello there"}))
    payload = {"session_id": "abc", "transcript_path": str(transcript)}
    assert "measuring this session" in statusline.render(payload, update=False)
    from xshare.live import session_state

    session_state.update(transcript)  # what the started update runs
    assert "measuring" not in statusline.render(payload, update=False)


def test_statusline_help_names_the_fields_it_reads_every_action_and_fits_80_columns():
    done = subprocess.run([sys.executable, "-m", "xshare", "statusline", "--help"], capture_output=True, text=True,
                          cwd=REPO, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.returncode == 0
    assert "`session_id`" in done.stdout and "`transcript_path`" in done.stdout
    for action in ("render", "install", "command", "remove", "status"):
        assert f"\n  {action} " in done.stdout  # in the ACTION list
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_report_help_does_not_say_the_vocabulary_needs_a_download():
    done = subprocess.run([sys.executable, "-m", "xshare", "report", "--help"], capture_output=True, text=True,
                          cwd=REPO, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"}, timeout=60)
    words = " ".join(done.stdout.split())
    assert "no download" not in words and "no network" not in words and "the one xshare ships" in words


# --- a closed pipe ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [("sessions", "--demo"), ("report", "--demo"), ("advice", "--demo")])
def test_output_into_a_pipe_closed_early_ends_quietly(tmp_path: Path, argv):
    """`xshare sessions | head -1`: the reader stops reading; a traceback (BrokenPipeError) was the last word.
    `true` reads nothing and has exited before xshare writes its first line."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XSHARE_HOME": str(tmp_path / "state"), "COLUMNS": "80"}
    done = subprocess.run(f"{sys.executable} -m xshare {' '.join(argv)} | true; "
                          "echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=120)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr[-600:]
    assert done.stdout.strip() in ("0", "141")  # all written before head closed it, or stopped by the closed pipe


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_session_fits_the_terminal(capsys, monkeypatch, tmp_path: Path, columns):
    """Issue 31: every command at 80 and 200 columns. `xshare session`'s lines (its categories, its re-sent
    reads, its dollars) ran past 80 columns unwrapped."""
    from xshare.demo import write_demo_corpus

    root = str(write_demo_corpus(tmp_path / "claude"))
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "sessions", "--all", "--estimate", "--claude-root", root, "--json")
    longest = max(json.loads(out)["sessions"], key=lambda entry: entry["api_calls"])
    code, out, _ = run(capsys, "session", longest["id"], "--estimate", "--claude-root", root)
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= columns
    words = " ".join(line.strip() for line in lines)
    assert "Recorded context by category:" in words and "Dollars (list prices of" in words
    assert (columns == 200) == all(not line.startswith("  ") for line in lines)  # continuations only when wrapped
