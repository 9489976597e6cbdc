"""Issue 9, the files, arguments and output part: what xshare writes, which flags it accepts, what it
prints, and how its HTML modules import each other."""

from __future__ import annotations

import ast
import json
import os
import socket
import sqlite3
import stat
from pathlib import Path

import pytest

import xshare
from xshare.agents.table import names_listed
from xshare.arguments import MAX_DAYS
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.state.store import atomic_write

PACKAGE = Path(xshare.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_analysis_stands_below_the_page_that_draws_it():
    analysis = imported_modules(PACKAGE / "html" / "analysis.py")
    page = imported_modules(PACKAGE / "html" / "session_page.py")
    assert "xshare.html.analysis" in page  # the page draws what the analysis found
    assert not {"xshare.html.write", "xshare.html.session_page"} & analysis
    assert "xshare.html.write" not in page  # nor does the page reach up to the module that writes it


# --- arguments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [
    ["--since-days", "1000000"], ["--since-days", "-1"], ["--since-days", "ten"], ["--lag-hours", "inf"],
    ["--lag-hours", "1e308"], ["--lag-hours", "nan"], ["--lag-hours", "-2"], ["--lag-hours", "soon"],
])
@pytest.mark.parametrize("command", ["report", "collect"])
def test_a_window_flag_out_of_range_is_a_bad_argument(capsys, tmp_path: Path, command: str, flags: list[str]):
    rows = ["--rows", str(tmp_path / "rows.jsonl")] if command == "collect" else []
    with pytest.raises(SystemExit) as stop:
        main([command, *flags, *rows, "--claude-root", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {flags[0]}: " in err and "Traceback" not in err
    assert not (tmp_path / "rows.jsonl").exists()


def test_the_widest_accepted_window_flags_still_measure(capsys, tmp_path: Path):
    demo_root = write_demo_corpus(tmp_path / "claude")
    assert main(["report", "--since-days", str(MAX_DAYS), "--claude-root", str(demo_root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == 8  # the demo corpus, all of it
    code = main(["report", "--lag-hours", str(MAX_DAYS * 24), "--all", "--claude-root", str(demo_root)])
    assert code == 2 and "no session started in the window" in capsys.readouterr().err


@pytest.mark.parametrize("report_args", [
    ["--bogus"], ["--since-days", "1000000"], ["--lag-hours", "nan"], ["--since-days"], ["--all", "extra"],
])
def test_slash_explains_a_bad_flag_on_stdout_and_exits_0(capsys, report_args: list[str]):
    code = main(["slash", "--session", "abc", "--", *report_args])
    out = capsys.readouterr().out
    assert code == 0
    explanation = out.splitlines()[0]
    assert explanation.startswith("/exploration-share: ") and "--since-days N" in explanation
    assert report_args[-1] in explanation or report_args[0] in explanation
    assert "This session: no live figures yet" in out  # the rest of the slash command still runs


def test_slash_without_the_separator_still_exits_0(capsys):
    assert main(["slash", "--bogus"]) == 0
    assert "unrecognized arguments: --bogus" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["report", "--bogus"])  # any other command keeps argparse's exit 2


# --- files it writes -------------------------------------------------------------------------------


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return write_demo_corpus(tmp_path / "claude")


def transcript_row() -> bytes:
    """A first line as Claude Code writes one (invented values)."""
    row = {"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u-1", "sessionId": "s-1",
           "timestamp": "2026-11-03T09:00:00.000Z", "message": {"role": "user", "content": "hello"}}
    return json.dumps(row).encode() + b"\n"


def rows_command(command: str, rows: Path, root: Path) -> list[str]:
    return [command, "--all", "--rows", str(rows), "--claude-root", str(root)]


@pytest.mark.parametrize("command", ["report", "collect"])
def test_rows_in_a_missing_folder_exit_1_and_create_nothing(capsys, tmp_path: Path, demo_root: Path, command):
    rows = tmp_path / "no" / "such" / "rows.jsonl"
    assert main(rows_command(command, rows, demo_root)) == 1
    assert "folder" in capsys.readouterr().err and not (tmp_path / "no").exists()


def special_files(tmp_path: Path) -> dict[str, Path]:
    """A FIFO, a folder, a socket, a symlink to a FIFO, a dangling symlink; a device node when root."""
    made = {"fifo": tmp_path / "fifo.jsonl", "folder": tmp_path / "folder.jsonl", "socket": tmp_path / "s.jsonl"}
    os.mkfifo(made["fifo"])
    made["folder"].mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(made["socket"]))
    server.close()
    made["link to fifo"] = tmp_path / "to-fifo.jsonl"
    made["link to fifo"].symlink_to(made["fifo"])
    made["dangling link"] = tmp_path / "dangling.jsonl"
    made["dangling link"].symlink_to(tmp_path / "nothing-here")
    if os.geteuid() == 0:  # a copy of /dev/null's node, so a failure could never harm a real device
        made["device"] = tmp_path / "null.jsonl"
        os.mknod(made["device"], stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return made


def kind(path: Path) -> tuple:
    found = os.lstat(path)
    return stat.S_IFMT(found.st_mode), found.st_ino


@pytest.mark.skipif(os.name != "posix", reason="FIFOs, sockets and device nodes are POSIX")
@pytest.mark.parametrize("command", ["report", "collect"])
def test_rows_never_replace_a_special_file(capsys, tmp_path: Path, demo_root: Path, command):
    for name, path in special_files(tmp_path).items():
        before = kind(path)
        assert main(rows_command(command, path, demo_root)) == 1, name
        assert "could not write the rows file" in capsys.readouterr().err, name
        assert kind(path) == before, name  # the same node, untouched (and a FIFO read nobody hung on)


@pytest.mark.skipif(os.name != "posix", reason="FIFOs are POSIX")
def test_atomic_write_itself_refuses_special_files_and_follows_links(tmp_path: Path):
    for name, path in special_files(tmp_path).items():
        before = kind(path)
        with pytest.raises(OSError):
            atomic_write(path, b"x")
        assert kind(path) == before, name
    target = tmp_path / "real" / "state.json"
    target.parent.mkdir()
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(target.parent)) == ["state.json"]  # no temporary file left beside it


def test_rows_through_a_symlink_write_its_target_and_keep_modes(capsys, tmp_path: Path, demo_root: Path):
    target = tmp_path / "data" / "sessions.jsonl"
    target.parent.mkdir()
    target.write_text("")  # an empty file, or a rows file: anything else is refused (tests/report/test_rows_hostile.py)
    target.chmod(0o644)
    link = tmp_path / "sessions.jsonl"
    link.symlink_to(target)
    assert main(rows_command("collect", link, demo_root)) == 0
    assert link.is_symlink() and len(target.read_text().splitlines()) == 8
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    fresh = tmp_path / "fresh.jsonl"
    assert main(rows_command("report", fresh, demo_root)) == 0
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600  # a new rows file is private to its owner


def test_rows_never_overwrite_a_transcript_or_a_database(capsys, tmp_path: Path, demo_root: Path):
    elsewhere = tmp_path / "copy-of-a-session.jsonl"
    elsewhere.write_bytes(transcript_row() * 3)
    database = tmp_path / "state.jsonl"
    sqlite3.connect(database).execute("CREATE TABLE t (x)").connection.close()
    in_place = sorted(demo_root.rglob("*.jsonl"))[0]
    new_in_projects = demo_root / "projects" / "rows.jsonl"
    default_root = tmp_path / "home" / ".claude" / "projects" / "-home-dev-app"
    default_root.mkdir(parents=True)
    for path in (elsewhere, database, in_place, new_in_projects, default_root / "rows.jsonl"):
        before = path.read_bytes() if path.exists() else None
        for command in ("report", "collect"):
            assert main(rows_command(command, path, demo_root)) == 1, path
            err = capsys.readouterr().err
            assert "could not write the rows file" in err and "Traceback" not in err
        assert (path.read_bytes() if path.exists() else None) == before


def test_a_rows_file_of_xshare_rows_is_still_replaced(capsys, tmp_path: Path, demo_root: Path):
    rows = tmp_path / "rows.jsonl"
    assert main(rows_command("report", rows, demo_root)) == 0
    assert main(rows_command("collect", rows, demo_root)) == 0  # its own rows do not look like a transcript
    assert "0 sessions added, 0 replaced" in capsys.readouterr().out


def test_html_output_never_overwrites_a_transcript(capsys, demo_root: Path):
    transcript = max(demo_root.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    before = transcript.read_bytes()
    assert main(["html", transcript.stem, "--claude-root", str(demo_root), "-o", str(transcript)]) == 1
    assert "could not write the page" in capsys.readouterr().err and transcript.read_bytes() == before


# --- stdout safety -----------------------------------------------------------------------------------

HOSTILE_SOURCES = {
    "s-escape": "\x1b[2J\x1b[31mred\x1b[0m",
    "s-newline": "cli\nclaude-code / interactive         99   9,999   99.9%",
    "s-path": "/home/someone/private/project",
    "s-bidi": "dis\u202ecord",
    "s-c1": "x\x9b31m",
}


def hostile_database(path: Path) -> Path:
    from hermes_fixtures import HermesDb, call, read_result

    db = HermesDb(path)
    for sid, source in {**HOSTILE_SOURCES, "s-fine": "discord"}.items():
        db.session(sid, source, tokens=(400, 500, 100, 20), api_calls=2, model="m\x1b]0;title\x07odel")
        db.message(sid, "user", "hello")
        db.message(sid, "assistant", "", tool_calls=[call("read_file", {"path": "a.py"}, f"{sid}-c1")])
        db.message(sid, "tool", read_result("1|x = 1"), tool_call_id=f"{sid}-c1", tool_name="read_file")
        db.message(sid, "assistant", "done")
    db.auxiliary("s-path", "/etc/passwd\x1b[1m", (100, 0, 0, 5))
    return db.close()


def assert_terminal_safe(text: str) -> None:
    assert not [char for char in text if char != "\n" and (ord(char) < 32 or 0x7f <= ord(char) <= 0x9f)]
    assert "\u202e" not in text and "/home/someone" not in text and "/etc/passwd" not in text


def test_a_hostile_hermes_source_cannot_forge_report_lines_or_print_a_path(capsys, tmp_path: Path):
    database = hostile_database(tmp_path / "hermes" / "state.db")
    assert main(["report", "--all", "--hermes-db", str(database)]) == 0
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    labels = [line.split("  ")[0] for line in out.splitlines() if line.startswith("hermes / ")]
    assert labels.count("hermes / other") == 2 and labels.count("hermes / discord") == 2  # both tables
    assert not [line for line in out.splitlines() if "99.9%" in line]  # the forged row is not a row
    assert main(["report", "--all", "--json", "--hermes-db", str(database)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["groups"]) == {"hermes/other", "hermes/discord"}
    assert report["groups"]["hermes/other"]["sessions"] == len(HOSTILE_SOURCES)
    assert report["groups"]["hermes/other"]["unrecorded_tasks"] == {"other": 1}


def test_rows_and_session_summaries_carry_safe_labels_and_printable_fields(capsys, tmp_path: Path):
    database = hostile_database(tmp_path / "hermes" / "state.db")
    rows = tmp_path / "rows.jsonl"
    assert main(["collect", "--all", "--hermes-db", str(database), "--rows", str(rows)]) == 0
    assert_terminal_safe(capsys.readouterr().out)
    written = [json.loads(line) for line in rows.read_text().splitlines()]
    assert {row["source"] for row in written} == {"other", "discord"}
    assert main(["session", "s-escape", "--hermes-db", str(database)]) == 0
    summary = capsys.readouterr().out
    assert_terminal_safe(summary)
    assert "model m[U+001B]]0;title[U+0007]odel" in summary  # shown, not obeyed
    assert main(["session", "s-escape", "--json", "--hermes-db", str(database)]) == 0
    shown = capsys.readouterr().out
    assert_terminal_safe(shown)
    assert json.loads(shown)["model"] == "m\x1b]0;title\x07odel"  # escaped, yet the same string to JSON


def test_printable_neutralises_every_control_and_reordering_character():
    from xshare.printing import json_text, printable, printable_lines, safe_label

    hostile = "a\x00b\x1b[0m\x7f\x85\x9b\u200b\u202e\u2066\ufeff\udc80\tz"
    shown = printable(hostile)
    assert shown.startswith("a[U+0000]b[U+001B][0m[U+007F][U+0085][U+009B][U+200B][U+202E]")
    assert shown.endswith("[U+DC80][U+0009]z") and shown.encode("utf-8")
    assert printable("naïve café 東京 ✓") == "naïve café 東京 ✓"  # ordinary text passes as it is
    assert printable_lines("one\ntwo\x1b") == "one\ntwo[U+001B]"
    assert json.loads(json_text({"k": hostile})) == {"k": hostile}
    assert_terminal_safe(json_text({"k": hostile}).replace("\\u", "u"))
    assert [safe_label(value) for value in ("discord", "my-bot.v2", "a/b", "..", "", None, "x" * 65, "a b")] == [
        "discord", "my-bot.v2", "other", "other", "other", "other", "other", "other"]


# --- problems nobody heard of ----------------------------------------------------------------------


def test_html_prints_the_problems_it_met_as_report_does(capsys, tmp_path: Path, demo_root: Path):
    transcript = max(demo_root.rglob("*.jsonl"), key=lambda path: path.stat().st_size)
    with transcript.open("ab") as handle:
        handle.write(b"{not json at all\n" + b'{"type": "user", "uuid": \n')
    assert main(["report", "--all", "--no-cache", "--claude-root", str(demo_root)]) == 0
    in_report = {line for line in capsys.readouterr().err.splitlines() if "malformed" in line}
    assert main(["session", str(transcript)]) == 0
    in_session = {line for line in capsys.readouterr().err.splitlines() if "malformed" in line}
    assert in_report and in_session and in_report != in_session  # the demo has a bad line elsewhere too
    for flags, expected in (([transcript.stem], in_session), ([str(transcript)], in_session),
                            (["--index", "--no-cache"], in_report)):
        assert main(["html", *flags, "--claude-root", str(demo_root), "-o", str(tmp_path / "page.html")]) == 0
        err = capsys.readouterr().err
        assert expected == {line for line in err.splitlines() if "malformed" in line}, flags


def test_html_of_a_hermes_session_in_a_locked_database_says_locked_promptly(capsys, tmp_path: Path):
    import time

    from hermes_fixtures import build_standard

    database = build_standard(tmp_path / "hermes" / "state.db", 11)  # rollback journal: a writer locks readers out
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        code = main(["html", "s-cli", "--hermes-db", str(database), "-o", str(tmp_path / "s.html")])
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert code == 2 and elapsed < 5
    assert "locked" in err.splitlines()[-1] and f"{names_listed('or')} matches" not in err
    assert f"Hermes database {database} is locked by another program; skipped: 1" in err
    assert main(["html", "s-cli", "--hermes-db", str(database), "-o", str(tmp_path / "s.html")]) == 0  # once free


# --- issue 29: classify prints the data's words escaped ---------------------------------------------------


def test_classify_prints_a_commands_words_escaped(capsys, monkeypatch: pytest.MonkeyPatch):
    import io

    hostile = "\033]52;c;ZXZpbA==\acat\u202e x\n"
    call = json.dumps({"tool": "Bash", "input": {"command": hostile}})
    monkeypatch.setattr("sys.stdin", io.StringIO(call + "\n"))
    assert main(["classify", "--jsonl", "--why"]) == 0
    out = capsys.readouterr().out
    assert out == "shell\t[U+001B]]52 is not on the read-only list (stage '\\x1b]52', word '\\x1b]52')\n"
    assert main(["classify", "--why", hostile]) == 0
    out = capsys.readouterr().out
    category, command, why = out.rstrip("\n").split("\t")  # one line, three fields
    assert (category, command) == ("shell", "[U+001B]]52;c;ZXZpbA==[U+0007]cat[U+202E] x[U+000A]")
    assert "\033" not in why and "\u202e" not in why


def test_the_slash_command_prints_the_session_id_it_was_given_escaped(capsys, tmp_path: Path):
    demo_root = write_demo_corpus(tmp_path / "claude")
    hostile = "abc\033]52;c;ZXZpbA==\a\n\u202e"
    assert main(["slash", "--session", hostile, "--", "--all", "--claude-root", str(demo_root)]) == 0
    out = capsys.readouterr().out
    assert "\033" not in out and "\a" not in out and "\u202e" not in out
    assert "Its HTML summary: not written yet: `xshare html abc[U+001B]]52;c;ZXZpbA==[U+0007][U+000A][U+202E]` " \
        "writes it" in out
