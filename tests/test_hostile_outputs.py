"""Issue 9, the files, arguments and output part: what xshare writes, which flags it accepts, what it
prints, and how its HTML modules import each other."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import xshare
from xshare.cli import MAX_DAYS, main
from xshare.demo import write_demo_corpus

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
    analysis = imported_modules(PACKAGE / "html_analysis.py")
    page = imported_modules(PACKAGE / "html_page.py")
    assert "xshare.html_analysis" in page  # the page draws what the analysis found
    assert not {"xshare.html", "xshare.html_page"} & analysis
    assert "xshare.html" not in page  # nor does the page reach up to the module that writes it


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
