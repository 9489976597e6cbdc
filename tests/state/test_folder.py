"""xshare's state folder on untidy machines: private whatever the umask (an earlier version's open folder
tightened), no home folder at all, XSHARE_HOME naming a file or a dangling symlink, a read-only state
folder, symlinked state files (left alone). The hook never fails and never hangs, the status line says why it shows
nothing, a report measures the same figures as a clean run and says in one line what it could not keep."""

from __future__ import annotations

import json
import os
import pwd
import stat
from pathlib import Path

import pytest

from tests.conftest import hook_on, session_json
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live import hook as live_hook
from xshare.live import log
from xshare.live import status_render as statusline
from xshare.state import private
from xshare.state.paths import line_file, live_dir, state_dir

posix_only = pytest.mark.skipif(os.name == "nt", reason="mode bits and uids are POSIX")


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    corpus = write_demo_corpus(tmp_path / "demo")
    return next(path for path in corpus.rglob("*.jsonl") if not path.name.startswith("agent-"))


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def hook(path: Path) -> None:
    hook_on(path, "Stop")  # a turn's end: the history is written too


def report_json(capsys, root: Path) -> dict:
    assert main(["report", "--all", "--json", "--claude-root", str(root), "--no-history"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return figures(captured.out)


def figures(out: str) -> dict:
    """The report's JSON without the moment it was made and which counter counted (one run counts, another
    remembers: the figures are the same)."""
    report = json.loads(out)
    report["window"].pop("until")
    report.pop("counter"), report.pop("counter_note")
    return report


def status_line(path: Path) -> str:
    return statusline.render({"session_id": path.stem, "transcript_path": str(path)}, colour=False)


def modes(folder: Path) -> dict[str, int]:
    """Every folder's and regular file's permission bits under `folder`, by relative path."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        if path.is_dir() or path.is_file() and not path.is_symlink():
            found[str(path.relative_to(folder))] = stat.S_IMODE(path.lstat().st_mode)
    return found


@posix_only
def test_under_umask_022_every_folder_is_0700_and_every_file_0600(capsys, transcript: Path, loose_umask):
    hook(transcript)  # state, summary, count store, history, vocabulary cache, locks
    log.log("a line, as when something went wrong")  # the hook's log names sessions
    assert session_json(capsys, transcript.stem)["api_calls"] > 0
    found = modes(state_dir())
    assert {"live", "logs", "counts", "history"} <= set(found), found
    assert any(name.endswith(".lock") for name in found) and "logs/hook.log" in found
    opened = {name: oct(mode) for name, mode in found.items() if mode & 0o077}
    assert not opened, f"open to others: {opened}"


@posix_only
def test_an_earlier_versions_open_folder_is_tightened_and_what_it_links_to_left_alone(
        capsys, tmp_path: Path, transcript: Path, loose_umask):
    state = state_dir()
    for folder in (state, state / "live", state / "logs", state / "history"):
        folder.mkdir(mode=0o755, exist_ok=True)
        folder.chmod(0o755)  # what xshare made before, under umask 022
    (state / "logs" / "hook.log").write_text("--- an old line\n")
    (state / "history" / "sessions.lock").write_bytes(b"")
    (state / "live" / "worker-0.pid").write_text("12345")  # a killed worker's, left behind
    (state / ".statusline-install.json.k2j3x").write_text("{}")  # a write a crash left unfinished
    elsewhere = tmp_path / "not-ours-to-change.txt"
    elsewhere.write_text("a file the user linked into the state folder")
    elsewhere.chmod(0o644)
    (state / "live" / "linked.txt").symlink_to(elsewhere)
    hook(transcript)
    opened = {name: oct(mode) for name, mode in modes(state).items() if mode & 0o077}
    assert not opened, f"still open to others: {opened}"
    assert (state / "logs" / "hook.log").read_text() == "--- an old line\n", "tightened, not rewritten"
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o644, "a symlink's target outside is never changed"
    assert session_json(capsys, transcript.stem) == session_json(capsys, str(transcript))


@posix_only
def test_xshare_home_set_to_the_home_folder_does_not_close_the_home(tmp_path: Path, monkeypatch, loose_umask):
    home = Path(os.environ["HOME"])
    home.chmod(0o755)
    (home / "notes.txt").write_text("the user's")
    (home / "notes.txt").chmod(0o644)
    monkeypatch.setenv("XSHARE_HOME", str(home))
    private.private_folder(live_dir())
    assert stat.S_IMODE(home.stat().st_mode) == 0o755 and stat.S_IMODE((home / "notes.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE(live_dir().stat().st_mode) == 0o700


def take_home_away(monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME unset and a uid with no passwd entry (cron, `docker --user 1234`)."""
    def no_entry(uid: int):
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    with pytest.raises(RuntimeError):
        Path.home()  # the machine as the issue found it


@pytest.fixture
def no_home(monkeypatch: pytest.MonkeyPatch):
    take_home_away(monkeypatch)


def test_no_home_with_xshare_home_and_claude_root_measures_as_a_clean_run(capsys, transcript: Path, monkeypatch):
    root = transcript.parents[2]
    clean = report_json(capsys, root)
    take_home_away(monkeypatch)
    assert report_json(capsys, root) == clean
    hook(transcript)
    assert status_line(transcript).startswith("explore ")
    assert session_json(capsys, transcript.stem) == session_json(capsys, str(transcript))


def test_no_home_and_no_xshare_home_a_report_still_measures_and_says_so_once(capsys, transcript: Path,
                                                                             monkeypatch, no_home):
    root = transcript.parents[2]
    monkeypatch.setenv("XSHARE_HOME", str(transcript.parents[3] / "clean-home"))
    clean = report_json(capsys, root)
    monkeypatch.delenv("XSHARE_HOME")
    assert main(["report", "--all", "--json", "--claude-root", str(root), "--no-history"]) == 0
    captured = capsys.readouterr()
    assert figures(captured.out) == clean
    said = [line for line in captured.err.splitlines() if "home folder" in line]
    assert len(said) == 1 and "XSHARE_HOME" in said[0] and "Traceback" not in captured.err
    assert "XSHARE_HOME" not in os.environ, "the throwaway state folder is this run's only"
    assert main(["html", "--claude-root", str(root)]) == 1  # its page would go nowhere: says so
    assert "--output" in capsys.readouterr().err


def test_no_home_and_no_xshare_home_the_hook_does_nothing_and_the_status_line_says_why(
        transcript: Path, monkeypatch, no_home):
    monkeypatch.delenv("XSHARE_HOME")
    hook(transcript)  # no traceback, no hang, nothing written anywhere
    assert "no home folder" in status_line(transcript)
    assert main(["statusline", "status"]) == 1  # Claude Code's settings need a home too: one line says so


@pytest.mark.parametrize("kind", ["file", "dangling symlink"])
def test_xshare_home_naming_a_file_or_a_dangling_symlink(capsys, tmp_path: Path, transcript: Path, monkeypatch, kind):
    root = transcript.parents[2]
    clean = report_json(capsys, root)
    odd = tmp_path / "odd-home"
    if kind == "file":
        odd.write_text("not a folder")
    else:
        odd.symlink_to(tmp_path / "nowhere")
    monkeypatch.setenv("XSHARE_HOME", str(odd))
    hook(transcript)
    assert "file or a dangling symlink" in status_line(transcript)
    assert main(["report", "--all", "--json", "--claude-root", str(root), "--no-history"]) == 0
    captured = capsys.readouterr()
    assert figures(captured.out) == clean
    assert [line for line in captured.err.splitlines() if "state folder" in line] == [
        "xshare: xshare's state folder is a file or a dangling symlink (see XSHARE_HOME); "
        "nothing is remembered after this run"]
    assert odd.is_symlink() or odd.read_text() == "not a folder", "left as it was"
    assert not (tmp_path / "nowhere").exists()


def test_a_read_only_state_folder_the_hook_neither_fails_nor_reads_for_nothing(transcript: Path, monkeypatch):
    state_dir().mkdir(mode=0o700)
    real_access = os.access
    # root ignores mode bits: a read-only file system is what os.access reports as not writable
    monkeypatch.setattr(private.os, "access", lambda path, mode: False if Path(path) == state_dir()
                        else real_access(path, mode))
    monkeypatch.setattr(live_hook, "update", lambda *args: pytest.fail("counted what could not be kept"))
    hook(transcript)
    assert not line_file(transcript.stem).exists()
    assert "read-only" in status_line(transcript)


def test_symlinked_state_files_are_left_alone_and_each_is_one_log_line(capsys, tmp_path: Path, transcript: Path):
    elsewhere = tmp_path / "synced" / "summary.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text("{}")
    live_dir().mkdir(parents=True)
    line_file(transcript.stem).symlink_to(elsewhere)
    hook(transcript)  # a link in the state folder may be someone else's: never written through
    assert line_file(transcript.stem).is_symlink() and elsewhere.read_text() == "{}"
    assert session_json(capsys, transcript.stem) == session_json(capsys, str(transcript))

    other = next(path for path in transcript.parent.glob("*.jsonl") if path != transcript)
    line_file(other.stem).symlink_to(tmp_path / "gone" / "summary.json")
    hook(other)  # never replaces the user's link, never fails
    assert line_file(other.stem).is_symlink() and not (tmp_path / "gone").exists()
    logged = (state_dir() / "logs" / "hook.log").read_text()
    assert logged.count("could not be saved") == 2 and "Traceback" not in logged
