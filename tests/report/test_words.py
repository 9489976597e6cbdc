"""Issue 21: the report in words a newcomer understands (the bands, the NeuralMind column, the next step),
its tables fitted to the terminal, the help, bare `xshare`, and an empty window that says what lies outside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from tests.report.test_render import NOW, make_row
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live.status_render import fields
from xshare.printing import output_width, table
from xshare.report.render import READINGS, Report, Window, reading, summarize
from xshare.report.words import next_step, notes_lines, outside_window


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def text_of(rows: list[dict], width: int | None = None, **options) -> str:
    return Report(summarize(rows), Window.build(NOW), "o200k_base", "", {"Claude Code": "read"}).to_text(
        width, **options)


# --- finding 1: the bands, the NeuralMind column, the next step -------------------------------------


def test_the_bands_keep_their_thresholds_and_speak_of_the_bill():
    assert [(limit, name) for limit, name, _ in READINGS] == [
        (0.10, "under 10%"), (0.30, "10% to 30%"), (float("inf"), "30% or more")]
    for share in (0.05, 0.2, 0.4):
        words = reading(share, share, 40)
        assert "your bill" in words
        assert not any(jargon in words for jargon in ("claim", "arithmetic", "material", "pre-registered"))
    text = text_of([make_row(f"s{i}", 35, 100, 160) for i in range(12)])
    assert "Pre-registered" not in text and "claim" not in text and "What it means for your bill" in text


def test_the_neuralmind_column_shows_only_when_a_session_has_such_a_block():
    plain = [make_row(f"s{i}", 35, 100, 160) for i in range(3)]
    assert "NeuralMind" not in text_of(plain)
    with_block = make_row("nm", 30, 100, 160)
    with_block["billed_tokens"]["neuralmind"] = 5
    with_block["billed_tokens"]["conversation"] -= 5
    text = text_of([*plain, with_block])
    assert "NeuralMind block" in next(line for line in text.splitlines() if "Prompt tokens billed" in line)
    assert "NeuralMind block: what the NeuralMind code index added" in text
    report = Report(summarize(plain), Window.build(NOW), "o200k_base", "", {}).to_json()
    assert "neuralmind" in report["groups"]["claude-code/interactive"]["shares_of_context"]  # JSON keeps it


@pytest.mark.parametrize(("share", "sessions", "everything", "by", "expected"), [
    (0.35, 12, False, False, "`xshare html --index`"),
    (0.05, 12, False, False, "`xshare html` shows your latest session"),
    (0.20, 12, False, False, "`xshare report --by week`"),
    (0.20, 12, False, True, "`xshare mark"),
    (0.35, 3, False, False, "`xshare report --all`"),
    (0.35, 3, True, False, "`xshare html --index`"),
])
def test_one_next_step_fits_the_figures(share, sessions, everything, by, expected):
    rows = [make_row(f"s{i}", round(share * 100), 100, 160) for i in range(sessions)]
    step = next_step(summarize(rows), everything, by, False)
    assert step.startswith("Next: ") and expected in step
    text = text_of(rows, by=by)
    assert text.rstrip("\n").splitlines()[-1].startswith("Next: ")
    assert "s0" not in text.split()  # stdout still carries no session id


def test_the_notes_at_the_end_read_plainly():
    group = {**summarize([make_row("a", 35, 100, 160)])["claude-code/interactive"], "bill_short_sessions": 2,
             "unrecorded_calls": 3, "unrecorded_prompt_tokens": 1200, unseen_field(): {"codex_title": 4}}
    text = "\n".join(notes_lines({"claude-code/interactive": group}))
    assert "Sessions whose shares are unknown (the records cannot explain the bill):" in text
    assert "2 sessions whose own records show more sent than was billed" in text
    assert "Calls you were billed for that the records show only in total" in text
    assert "compactions (the agent summarising a long conversation)" in text
    assert "Calls you were billed for that no record holds" in text



def test_the_note_on_unrecorded_calls_says_where_each_agent_bills_them():
    """Each agent's line in agents/table.py says what its unrecorded calls are; rows of an agent no line names
    (a rows file from elsewhere) get the plain words."""
    from xshare.report.words import unrecorded_note

    assert unrecorded_note("claude-code", 1, 2549) == (
        "1 call (2,549 prompt tokens) billed but not in the record: compactions (the agent summarising a long "
        "conversation), from Claude Code's own usage totals")
    assert unrecorded_note("hermes", 3, 1200, {"title_generation": 2, "compression": 1}) == (
        "3 calls (1,200 prompt tokens) billed but not in the record: Hermes's auxiliary calls (title_generation 2, "
        "compression 1), from its per-model usage table")
    assert unrecorded_note("hermes", 0, 50).endswith("auxiliary calls (unnamed), from its per-model usage table")
    assert unrecorded_note("elsewhere", 2, 10).endswith("compactions (the agent summarising a long conversation), from "
                                                     "the agent's own usage totals")

def unseen_field() -> str:
    from xshare.agents.common import unseen

    return unseen.FIELD


# --- finding 3: tables fit the terminal ---------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 200])
def test_the_demo_report_fits_the_terminal(capsys, monkeypatch, demo_root, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = run(capsys, "report", "--claude-root", str(demo_root), "--all", "--by", "week")
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= width
    wide = [line for line in lines if line.startswith("Agent / source") and "Exploration of context" in line]
    assert bool(wide) == (width == 200)  # one line a row when there is room, a compact layout when not
    row = next(index for index, line in enumerate(lines) if line.startswith("claude-code / interactive"))
    figures = lines[row].split()[3:] if width == 200 else lines[row + 1].split()
    assert len(figures) == 5 and all(figure[0].isdigit() for figure in figures)  # no re-sent reads: no column


def test_narrower_still_lists_one_figure_a_line():
    lines = table(("Agent / source", "Sessions", "Exploration of context"), [("claude-code / interactive", "6",
                                                                              "21.6%")], 20)
    assert lines == ["claude-code / interactive", "  Sessions: 6", "  Exploration of context: 21.6%"]
    assert max(map(len, table(("Agent / source", "Sessions"), [("a / b", "6")], None))) > 25  # no width: full


def test_a_report_written_to_a_file_keeps_its_full_layout(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_width() is None  # pytest's stdout is no terminal
    monkeypatch.setenv("COLUMNS", "not a number")
    assert output_width() is None


# --- finding 5: the help --------------------------------------------------------------------------------


def test_bare_xshare_says_what_it_is_and_where_to_start(capsys):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert "xshare report --demo" in out and "token bill" in out


def test_every_command_says_what_it_does_with_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert "parse arguments" not in top and "xshare report --demo" in top
    for command in ("report", "mark", "collect", "session", "classify", "hook", "statusline", "slash", "html"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = capsys.readouterr().out
        description = out.split("\n\n")[1]
        assert not description.startswith("options:") and "example" in out, command
        assert f"  {command}" in top


def test_statusline_action_help_is_the_actions(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["statusline", "install", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert out.startswith("usage: xshare statusline install") and "settings.json" in out
    assert "--force" in out and "--no-color" not in out
    for field in fields({}, None, False):  # every field the line can show is named
        assert field in out.split("fields:")[-1], field


def test_classify_says_what_command_is(capsys):
    with pytest.raises(SystemExit):
        main(["classify", "--help"])
    assert "a shell command to sort" in capsys.readouterr().out


# --- finding 8: an empty window says what lies outside it -----------------------------------------------


def test_an_empty_window_counts_the_sessions_before_it(capsys, demo_root):
    code, out, _ = run(capsys, "report", "--claude-root", str(demo_root), "--all", "--json")
    everything = json.loads(out)["sessions"]
    code, out, err = run(capsys, "report", "--claude-root", str(demo_root), "--since-days", "0")
    assert code == 2 and out == ""
    assert f"{everything} sessions started before it, the newest on " in err
    assert "`--since-days " in err and "`--all` takes all" in err and "looked for" not in err
    assert "Traceback" not in err


def test_an_empty_window_counts_the_sessions_after_it(capsys, demo_root):
    code, _, err = run(capsys, "report", "--claude-root", str(demo_root), "--since", "2020-01-01",
                       "--until", "2020-02-01")
    assert code == 2 and "sessions started after it (it ends 2020-02-01" in err and "--until" in err


def test_a_window_with_nothing_anywhere_still_says_where_it_looked(capsys, tmp_path):
    code, _, err = run(capsys, "report", "--claude-root", str(tmp_path / "none"), "--since-days", "3")
    assert code == 2 and "looked for" in err and "started before it" not in err


def test_outside_window_names_the_flag_that_reaches_the_newest():
    window = Window.build(NOW, since_days=7)
    starts = ["2026-11-01T10:00:00Z", "2026-11-10T09:30:00Z", None, "not a time"]
    [line] = outside_window(window, starts, NOW)
    assert line.startswith("2 sessions started before it, the newest on 2026-11-10 09:30 UTC")
    assert "`--since-days 19` takes that one in" in line
    assert Window.build(NOW, since_days=19).place(make_row("x", 1, 10, 20, started=starts[1])) == "in"
    assert outside_window(window, [], NOW) == []


@pytest.mark.parametrize("columns", ["60", "132", "", "wide", "-5"])
def test_help_is_as_wide_as_argparse_makes_it_for_the_terminal(capsys, monkeypatch, columns):
    import argparse

    from xshare import arguments

    monkeypatch.setenv("COLUMNS", columns)
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    ours = capsys.readouterr().out
    monkeypatch.setattr(arguments, "_RAW", argparse.RawDescriptionHelpFormatter)  # argparse's own width
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert capsys.readouterr().out == ours


def test_starting_a_command_imports_no_shutil():
    import subprocess
    import sys

    code = ("import sys; from xshare import arguments; arguments.build_parser('report').parse_args(['report']); "
            "print('shutil' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"  # argparse imports it (and bz2, lzma) for a width found without it
