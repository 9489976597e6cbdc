"""Issue 29, round three of hostile input, the state folder's part: an XSHARE_HOME another account made or
can write, links planted inside the state folder, an XSHARE_HOME naming a folder xshare did not make,
and one that is blank, relative or `~nouser`. Each case: the figures a clean run measures, or one clear
line, and nothing outside the state folder changed (bytes and modes)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import hook_on
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.live import log
from xshare.measure import count_store, tokens
from xshare.report.history import history_path
from xshare.state import private
from xshare.state.paths import NOT_ABSOLUTE, html_file, line_file, state_dir

posix_only = pytest.mark.skipif(os.name == "nt", reason="mode bits and uids are POSIX")
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="giving a file to another account needs root (CI runs as root)")
NOBODY = 65534


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    corpus = write_demo_corpus(tmp_path / "demo")
    return next(path for path in corpus.rglob("*.jsonl") if not path.name.startswith("agent-"))


def report(capsys, root: Path) -> tuple[dict, list[str]]:
    """`report --json` on the demo: its figures (without the moment it was made and which counter counted) and
    its stderr lines."""
    code = main(["report", "--all", "--json", "--claude-root", str(root), "--no-history"])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err
    figures = json.loads(captured.out)
    figures["window"].pop("until")
    figures.pop("counter"), figures.pop("counter_note")
    return figures, captured.err.splitlines()


def snapshot(*paths: Path) -> dict[str, tuple[bytes, int, int]]:
    """Each file's bytes, mode and owner: what must not change."""
    return {str(path): (path.read_bytes(), stat.S_IMODE(path.stat().st_mode), path.stat().st_uid) for path in paths}


def user_file(tmp_path: Path, name: str = ".bashrc", size: int = 4000) -> Path:
    """A file of the user's outside the state folder, as a planted link would aim at."""
    path = tmp_path / "home" / name
    path.write_bytes(b"export PATH=$HOME/bin:$PATH\n" * (size // 28))
    path.chmod(0o644)
    return path


# --- an XSHARE_HOME another account made, or others can write ------------------------------------------


@posix_only
@as_root
def test_a_state_folder_another_account_made_is_refused_in_one_line(capsys, tmp_path: Path, transcript: Path,
                                                                    monkeypatch):
    root = transcript.parents[2]
    clean, usual = report(capsys, root)
    shared = tmp_path / "team-scratch"
    (shared / "logs").mkdir(parents=True)
    bashrc = user_file(tmp_path)
    (shared / "logs" / "hook.log").symlink_to(bashrc)  # what the other account planted
    for path in (shared, shared / "logs", shared / "logs" / "hook.log"):
        os.lchown(path, NOBODY, NOBODY)
    before = snapshot(bashrc)
    monkeypatch.setenv("XSHARE_HOME", str(shared))
    hook_on(transcript, "Stop")
    log.log("a line the hook would log")
    figures, err = report(capsys, root)
    assert figures == clean, "measured in memory, as a clean run"
    assert err == [f"xshare: {private.NOT_OURS}; nothing is remembered after this run", *usual]
    assert snapshot(bashrc) == before
    assert sorted(path.name for path in shared.rglob("*")) == ["hook.log", "logs"], "nothing written there"


@posix_only
@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o775])
def test_a_state_folder_others_can_write_is_refused_and_keeps_its_modes(capsys, tmp_path: Path, transcript: Path,
                                                                        monkeypatch, mode: int):
    root = transcript.parents[2]
    clean, usual = report(capsys, root)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    notes = scratch / "notes.txt"
    notes.write_text("someone's notes")
    notes.chmod(0o666)
    scratch.chmod(mode)
    monkeypatch.setenv("XSHARE_HOME", str(scratch))
    hook_on(transcript, "Stop")
    figures, err = report(capsys, root)
    assert figures == clean
    assert err == [f"xshare: {private.NOT_OURS}; nothing is remembered after this run", *usual]
    assert main(["mark", "a change"]) == 1 and main(["html", "--claude-root", str(root)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"xshare: could not store the mark: {private.NOT_OURS}",
                                                    f"xshare: {private.NOT_OURS}, or give --output"]
    assert stat.S_IMODE(scratch.stat().st_mode) == mode, "a shared folder's modes (and sticky bit) are kept"
    assert stat.S_IMODE(notes.stat().st_mode) == 0o666 and sorted(os.listdir(scratch)) == ["notes.txt"]


# --- links planted inside the state folder ------------------------------------------------------------


def plant(link: Path, target: Path, hard: bool = False) -> None:
    """What another process puts in place of a state file (replacing one xshare wrote)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    os.link(target, link) if hard else link.symlink_to(target)


@posix_only
@pytest.mark.parametrize("hard", [False, True], ids=["symlink", "hard link"])
def test_a_link_planted_as_the_hooks_log_is_never_written_or_cut(tmp_path: Path, hard: bool):
    bashrc = user_file(tmp_path, size=(1 << 20) + 4000)  # over the log's 1 MB: rotation would cut it
    before = snapshot(bashrc)
    plant(state_dir() / "logs" / "hook.log", bashrc, hard)
    log.log("what went wrong")
    assert snapshot(bashrc) == before


@posix_only
def test_links_planted_at_every_state_file_are_refused_and_the_figures_stand(capfd, tmp_path: Path,
                                                                           transcript: Path, monkeypatch):
    root = transcript.parents[2]
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "clean-home"))
    clean, _ = report(capfd, root)
    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "xshare-home"))  # empty: every count is made and kept again
    aimed = {name: user_file(tmp_path, name) for name in ("counts", "history", "line", "page", "index")}
    plant(tokens.store_path(), aimed["counts"])
    plant(history_path(), aimed["history"])
    plant(line_file(transcript.stem), aimed["line"])
    plant(html_file(transcript.stem), aimed["page"])
    plant(html_file("x").parent / "index.html", aimed["index"])
    before = snapshot(*aimed.values())
    code = main(["report", "--all", "--json", "--claude-root", str(root)])  # the history is read and added to
    captured = capfd.readouterr()
    hook_on(transcript, "Stop")
    assert code == 0 and "Traceback" not in captured.err
    figures = json.loads(captured.out)
    figures["window"].pop("until")
    figures.pop("counter"), figures.pop("counter_note")  # remembered counts here, counted in the clean run
    assert figures == clean
    said = [line for line in captured.err.splitlines() if "a link" in line]
    # the report's own counter (one a request, made in the state folder it runs in) meets the planted store
    assert said == [f"xshare: the token count store {tokens.store_path().name} is a link; left alone, counts are "
                    "not kept",
                    f"xshare: could not add to the history ({private.LINK_REFUSED}); these "
                    "sessions are remembered only while their transcripts last"]
    warned: list[str] = []  # the count store as a fresh process meets it
    store = count_store.CountStore(tokens.store_path(), warn=warned.append)
    store.put(b"a text counted", 3)
    store.flush()
    assert warned == [f"the token count store {tokens.store_path().name} is a link; left alone, counts are not kept"]
    assert main(["html", transcript.stem, "--claude-root", str(root)]) == 1
    assert main(["html", "--index", "--claude-root", str(root)]) == 1
    err = capfd.readouterr().err.splitlines()
    assert sum(private.LINK_REFUSED in line for line in err) >= 2 and not any(
        "Traceback" in line for line in err)
    assert snapshot(*aimed.values()) == before
    assert all(path.is_symlink() for path in (history_path(), line_file(transcript.stem), html_file(transcript.stem)))


@posix_only
def test_a_folder_inside_the_state_folder_that_is_a_link_is_never_written_into(capsys, tmp_path: Path,
                                                                              transcript: Path):
    documents = tmp_path / "home" / "Documents"
    documents.mkdir()
    state_dir().mkdir()
    (state_dir() / "html").symlink_to(documents)
    (state_dir() / "live").symlink_to(documents)
    hook_on(transcript, "Stop")
    assert main(["html", transcript.stem, "--claude-root", str(transcript.parents[2])]) == 1
    err = capsys.readouterr().err
    assert private.LINK_REFUSED in err and "Traceback" not in err
    assert list(documents.iterdir()) == []


# --- an XSHARE_HOME naming a folder xshare did not make -------------------------------------------------


@posix_only
def test_a_folder_of_the_users_keeps_its_modes_and_only_what_xshare_makes_is_private(
        capsys, tmp_path: Path, transcript: Path, monkeypatch):
    clean, usual = report(capsys, transcript.parents[2])
    project = tmp_path / "home" / "project"
    (project / "logs").mkdir(parents=True)  # a name xshare uses too, but the folder holds more than xshare's
    (project / "logs" / "build.log").write_text("the user's build log")
    (project / "README").write_text("the user's")
    for path, mode in ((project, 0o755), (project / "logs", 0o755), (project / "README", 0o644),
                       (project / "logs" / "build.log", 0o644)):
        path.chmod(mode)
    before = {str(path): stat.S_IMODE(path.stat().st_mode) for path in (project, *project.rglob("*"))}
    monkeypatch.setenv("XSHARE_HOME", str(project))
    hook_on(transcript, "Stop")
    figures, err = report(capsys, transcript.parents[2])
    assert figures == clean
    assert {path: stat.S_IMODE(Path(path).stat().st_mode) for path in before} == before
    assert stat.S_IMODE((project / "live").stat().st_mode) == 0o700, "what xshare made is private"
    assert line_file(transcript.stem).is_file() and err == usual


# --- an XSHARE_HOME blank, relative or of no such user ---------------------------------------------------


@pytest.mark.parametrize("given", ["", "   ", "state", "./xs", "~no-such-user-xshare/state"])
def test_an_xshare_home_that_is_no_full_path_is_refused_and_nothing_lands_in_the_current_folder(
        capsys, tmp_path: Path, transcript: Path, monkeypatch, given: str):
    root = transcript.parents[2]
    clean, usual = report(capsys, root)
    here = tmp_path / "where-a-command-ran"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("XSHARE_HOME", given)
    hook_on(transcript, "Stop")
    figures, err = report(capsys, root)
    assert figures == clean
    assert err == [f"xshare: {NOT_ABSOLUTE}; nothing is remembered after this run", *usual]
    assert os.environ["XSHARE_HOME"] == given, "the user's setting is left as it was"
    assert main(["mark", "a change"]) == 1
    assert NOT_ABSOLUTE in capsys.readouterr().err
    assert list(here.iterdir()) == []
