"""A report's --json as figures two runs of the same history must agree on: without the moment it ran and which
counter counted (a run that resumes or remembers counts fewer texts, with the same figures)."""

from __future__ import annotations

import json


def figures(report_json: str) -> dict:
    found = json.loads(report_json)
    found["window"].pop("until")
    for said in ("counter", "counter_note"):
        found.pop(said)
    return found


def report_json(capsys, *flags: str) -> tuple[int, str, str]:
    """`xshare report --all --json FLAGS` run in this process: its exit code, stdout and stderr."""
    from xshare.cli import main

    code = main(["report", "--all", "--json", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def resumes_as_a_fresh_report(capsys, monkeypatch, reading, flags: tuple[str, ...], files: int, kept: int,
                              fresh_home) -> None:
    """After a report interrupted with `kept` of `files` measured: the next reads only the rest (`reading(monkeypatch)`
    lists what it reads), with the figures a report in a fresh state folder gives after reading every file."""
    read = reading(monkeypatch)
    code, out, _ = report_json(capsys, *flags)
    assert code == 0 and len(read) == files - kept  # the rest only
    resumed = figures(out)

    monkeypatch.setenv("XSHARE_HOME", str(fresh_home))
    read = reading(monkeypatch)
    code, out, _ = report_json(capsys, *flags)
    assert code == 0 and len(read) == files
    assert figures(out) == resumed and resumed["sessions"] == files
