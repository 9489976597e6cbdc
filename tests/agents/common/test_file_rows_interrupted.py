"""Ctrl-C while another agent's files are read (agents/common/file_rows.py): the files read before it are
cached and said so, exit 130, and the next report reads only the rest, with an uninterrupted report's figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_fixtures import codex_session
from report_figures import report_json, resumes_as_a_fresh_report

from xshare.agents.codex import reader as codex
from xshare.cli import main

FILES = 5
READ = codex.read  # the reader itself, each test's wrapper around it


def sessions(home: Path) -> Path:
    for number in range(FILES):
        codex_session(home, session_id=f"0190aaaa-1111-7000-8000-00000000000{number}")
    return home


def reading(monkeypatch: pytest.MonkeyPatch, stop_at: int | None = None) -> list[Path]:
    """The files Codex CLI's reader reads from now on; with `stop_at`, Ctrl-C lands while it reads that one."""
    read: list[Path] = []

    def counted(path, counter, problems, ledgers=None):
        if len(read) == stop_at:
            raise KeyboardInterrupt
        read.append(path)
        return READ(path, counter, problems, ledgers)

    monkeypatch.setattr(codex, "read", counted)
    return read


def test_ctrl_c_keeps_the_files_read_and_the_next_report_reads_the_rest(tmp_path, monkeypatch, capsys):
    home = sessions(tmp_path / "codex")
    read = reading(monkeypatch, stop_at=2)
    code, out, err = report_json(capsys, "--codex-home", str(home))
    assert code == 130 and out == ""
    assert err.strip().endswith("xshare: interrupted: 2 of 5 Codex CLI files measured and kept; "
                                "the next report carries on")
    assert len(read) == 2
    resumes_as_a_fresh_report(capsys, monkeypatch, reading, ("--codex-home", str(home)), FILES, 2, tmp_path / "fresh")


def test_with_no_cache_it_says_nothing_was_kept(tmp_path, monkeypatch, capsys):
    home = sessions(tmp_path / "codex")
    reading(monkeypatch, stop_at=3)
    assert main(["report", "--all", "--no-cache", "--codex-home", str(home)]) == 130
    assert capsys.readouterr().err.strip().endswith(
        "xshare: interrupted: 3 of 5 Codex CLI files measured (--no-cache: none kept)")
