"""The tests' layout holds (issue 32): their folders mirror the package's (tests/agents/<name>/ for one agent's
tests, tests/report/ for xshare/report/, ...), each a package so that two folders may each hold a test_reader.py;
one naming scheme inside an agent's folder; the tests that drive a real host live with their agent."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "xshare"
SUPPORT = TESTS / "support"  # the shared fixtures and fake servers (and their own tests): no package folder
# the tests over the whole: the layouts, the README's commands, every view agreeing, corpus-wide checks, the first
# five minutes; a new one here is a choice, made by adding it to this list
WHOLE = {"test_corpus_agents.py", "test_corpus_claude.py", "test_corpus_prices.py", "test_first_five_minutes.py",
         "test_layout.py", "test_layout_of_tests.py", "test_readme_commands.py", "test_views_agree.py"}
# test_<role>[_<aspect>].py in an agent's folder; the last four drive the agent's real CLI (marker realhost)
READER_ROLES = {"reader"}
HOST_ROLES = {"realhost", "tui", "subagents", "wire"}


def folders_under_tests() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*") if path.is_dir() and path.name != "__pycache__")


def agent_folders() -> list[Path]:
    return [folder for folder in folders_under_tests()
            if folder.parent == TESTS / "agents" and folder.name != "common"]


def test_every_test_folder_mirrors_a_package_folder():
    for folder in folders_under_tests():
        if folder == SUPPORT:
            continue
        assert (PACKAGE / folder.relative_to(TESTS)).is_dir(), f"{folder.relative_to(TESTS)} is no folder of xshare/"


def test_every_test_folder_is_a_package():
    """Two folders' test_reader.py are tests.agents.codex.test_reader and tests.agents.gemini.test_reader."""
    for folder in [TESTS, *folders_under_tests()]:
        assert (folder / "__init__.py").is_file(), f"{folder.relative_to(TESTS.parent)} has no __init__.py"


def test_only_the_tests_over_the_whole_are_at_the_top():
    top = {path.name for path in TESTS.glob("test_*.py")}
    assert top == WHOLE, f"move into the folder of the package part they test: {sorted(top - WHOLE)}"


def test_no_file_name_repeats_its_folder():
    """tests/report/test_periods.py, not tests/report/test_report_periods.py."""
    for folder in folders_under_tests():
        for path in folder.glob("test_*.py"):
            assert not path.stem.startswith(f"test_{folder.name}"), path.relative_to(TESTS)


@pytest.mark.parametrize("folder", agent_folders(), ids=lambda folder: folder.name)
def test_an_agents_tests_go_by_one_naming_scheme(folder: Path):
    for path in folder.glob("test_*.py"):
        role = path.stem.removeprefix("test_").split("_")[0]
        assert role in READER_ROLES | HOST_ROLES, f"{path.relative_to(TESTS)}: test_<role>[_<aspect>].py, a role of " \
            f"{sorted(READER_ROLES | HOST_ROLES)}"
        drives_a_host = "pytest.mark.realhost" in path.read_text(encoding="utf-8")
        assert drives_a_host == (role in HOST_ROLES), f"{path.relative_to(TESTS)}: marked realhost iff its role is " \
            f"one of {sorted(HOST_ROLES)}"


def test_the_real_host_tests_live_with_their_agent():
    agents = set(agent_folders())
    for path in TESTS.rglob("test_*.py"):
        if path.parent not in agents and path != Path(__file__).resolve():
            assert "pytest.mark.realhost" not in path.read_text(encoding="utf-8"), path.relative_to(TESTS)
