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
