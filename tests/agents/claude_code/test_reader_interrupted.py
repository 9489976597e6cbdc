"""Ctrl-C while Claude Code's transcripts are read one after another (a small history: no workers): the rows
of those read before it are cached and said so, exit 130, and the next report reads only the rest, with an
uninterrupted report's figures. (tests/commands/test_report_interrupted.py types Ctrl-C into a terminal while
workers read a large one.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from big_history import write_big_history
from report_figures import report_json, resumes_as_a_fresh_report

from xshare.agents.claude_code import many

FILES = 6
READ = many.read_file  # the reader itself, each test's wrapper around it


def reading(monkeypatch: pytest.MonkeyPatch, stop_at: int | None = None) -> list[Path]:
    """The transcripts measured from now on; with `stop_at`, Ctrl-C lands while that one is read."""
    read: list[Path] = []

    def counted(file, current, copied=(), detail=False, earlier=None):
        if len(read) == stop_at:
            raise KeyboardInterrupt
        read.append(file.path)
        return READ(file, current, copied, detail, earlier)

    monkeypatch.setattr(many, "read_file", counted)
    return read


def test_ctrl_c_keeps_the_transcripts_read_and_the_next_report_reads_the_rest(tmp_path, monkeypatch, capsys):
    write_big_history(tmp_path / "claude", sessions=FILES, reads=2, lines=20)
    root = tmp_path / "claude"
    read = reading(monkeypatch, stop_at=2)
    code, out, err = report_json(capsys, "--claude-root", str(root))
    assert code == 130 and out == "" and "Traceback" not in err
    assert err.strip().endswith("xshare: interrupted: 2 of 6 Claude Code transcripts measured and kept; "
                                "the next report carries on")
    assert len(read) == 2
    resumes_as_a_fresh_report(capsys, monkeypatch, reading, ("--claude-root", str(root)), FILES, 2, tmp_path / "fresh")
