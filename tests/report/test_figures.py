"""Impossible figures, rows files and the history as input (issue 18): one plausibility rule for every
agent's usage, for rows files and for the history; the newest version of a session given twice; files
that are not regular files; a history read without its lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from agent_fixtures import Counted, codex_session, codex_token_count, codex_usage, openclaw_session
from hermes_fixtures import HermesDb, call, read_result

from xshare.agents.claude_code.usage import call_usage
from xshare.agents.codex import reader as codex
from xshare.agents.hermes.state_db import measure_hermes
from xshare.agents.openclaw import reader as openclaw
from xshare.cli import main
from xshare.measure import plausible
from xshare.measure.count_store import CountStore
from xshare.measure.ledger import CATEGORIES
from xshare.report import history
from xshare.report.rows import read_rows

REPO = Path(__file__).resolve().parents[2]


def session_row(session_id: str, calls: int, last: str, machine: str = "m1", exploration: int = 100) -> dict:
    """A rows-file row as `collect --rows` writes it (invented figures that add up)."""
    billed = dict.fromkeys(CATEGORIES, 0) | {"exploration": exploration * calls, "conversation": 50 * calls}
    context = sum(billed.values())
    return {"id": session_id, "agent": "claude-code", "source": "interactive", "parent": None, "model": "m",
            "started_at": "2026-11-01T09:00:00Z", "last_activity": last, "api_calls": calls,
            "prompt_tokens_billed": context, "context_tokens": context,
            "exploration_share_of_context": billed["exploration"] / context, "billed_tokens": billed,
            "first_time_tokens": dict.fromkeys(CATEGORIES, 10), "usage": {"input": 5, "output": 7},
            "tokenizer": "o200k_base", "method": 5, "machine": machine}


def hermes_session(path: Path, tokens: tuple[int, int, int, int]) -> Path:
    db = HermesDb(path, 22)
    db.session("s1", "cli", tokens=tokens, api_calls=2)
    db.message("s1", "user", "where is the config read?")
    db.message("s1", "assistant", None, tool_calls=[call("read_file", {"path": "config.py"}, "c1")])
    db.message("s1", "tool", read_result("1|import os\n2|CONFIG = os.environ['X']"), tool_call_id="c1")
    db.message("s1", "assistant", "config.py line 2 reads it.")
    return db.close()


def write(path: Path, rows: list) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def rollup_json(capsys, *files: Path) -> tuple[int, dict, str]:
    code = main(["report", "--all", "--json", "--from-rows", *map(str, files)])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else {}, captured.err


def figures(data: dict) -> dict:
    return {key: value for key, value in data.items() if key not in ("window", "rollup", "sources")}


# --- the rule itself --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [True, False, 1.0, 5.5, "12", float("nan"), float("inf"), -1, 10 ** 12, [3], {}])
def test_a_count_is_an_int_within_its_limit(value: object):
    assert plausible.count(value) is None


def test_counts_that_are_plausible():
    assert plausible.count(None) == 0 and plausible.count(0) == 0
    assert plausible.count(plausible.MAX_TOKENS) == plausible.MAX_TOKENS
    assert plausible.call_counts([60_000_000, 60_000_000, 5], prompt_parts=2) is None  # a prompt no call carries
    assert plausible.call_counts([60_000_000, 5], prompt_parts=1) == [60_000_000, 5]


def test_claude_calls_whose_parts_add_up_past_one_call_are_refused():
    usage = {"input_tokens": 5, "cache_read_input_tokens": 60_000_000, "cache_creation_input_tokens": 60_000_000}
    assert call_usage(usage) is None
    assert call_usage({**usage, "cache_creation_input_tokens": 1000}) is not None


# --- agents' calls ------------------------------------------------------------------------------------


def test_a_codex_call_billed_1e12_is_refused_and_the_rest_measured(tmp_path: Path):
    path, _ = codex_session(tmp_path / "clean")
    clean = codex.read(path, Counted(len, "chars"), Counter())[0]
    lines = path.read_text().splitlines()
    huge = codex_usage(10 ** 12, 0, 5)
    total = {name: 10 ** 13 for name in huge}  # a new running total: a new request
    lines.insert(-1, json.dumps(codex_token_count(total, huge, 13)))
    path.write_text("\n".join(lines) + "\n")
    problems: Counter = Counter()
    row = codex.read(path, Counted(len, "chars"), problems)[0]
    assert problems == {"codex calls with impossible token counts (not counted, no cap applied)": 1}
    assert row == clean


@pytest.mark.parametrize("bad", [10 ** 12, -4000, "6900", 6900.0, True])
def test_an_openclaw_call_with_an_impossible_count_is_no_call(tmp_path: Path, bad: object):
    path, _ = openclaw_session(tmp_path / "a")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    entries[-1]["message"]["usage"]["cacheRead"] = bad
    write(path, entries)
    problems: Counter = Counter()
    row = openclaw.read(path, Counted(len, "chars"), problems)[0]
    entries[-1]["message"]["usage"] = {"input": 0, "output": 0}  # the clean equivalent: a call billed nothing
    clean = openclaw.read(write(path, entries), Counted(len, "chars"), Counter())[0]
    assert problems == {"openclaw calls with impossible token counts (not counted, no cap applied)": 1}
    assert row == clean and row["api_calls"] == 2


def test_a_hermes_session_with_an_impossible_count_is_counted_without_its_bill(tmp_path: Path):
    path = hermes_session(tmp_path / "state.db", tokens=(10 ** 12, 0, 0, 10))
    rows, problems = measure_hermes([path], Counted(len, "chars"))
    clean_rows, clean_problems = measure_hermes([hermes_session(tmp_path / "clean.db", tokens=(0, 0, 0, 0))],
                                                Counted(len, "chars"))
    assert problems["Hermes sessions with impossible token counts (counted without their bill, no cap applied)"] == 1
    assert rows[0]["prompt_tokens_billed"] == 0
    assert {k: v for k, v in rows[0].items() if k != "usage"} == {k: v for k, v in clean_rows[0].items()
                                                                   if k != "usage"}


# --- rows files --------------------------------------------------------------------------------------


def test_the_newest_version_of_a_session_wins_in_any_order(tmp_path: Path, capsys):
    last_night = write(tmp_path / "a.jsonl", [session_row("s1", 8, "2026-11-01T20:00:00Z"),
                                             session_row("s2", 3, "2026-11-01T09:30:00Z")])
    tonight = write(tmp_path / "b.jsonl", [session_row("s2", 3, "2026-11-01T09:30:00Z"),
                                          session_row("s1", 14, "2026-11-02T20:00:00Z")])
    both = write(tmp_path / "c.jsonl", [*map(json.loads, tonight.read_text().splitlines()),
                                        *map(json.loads, last_night.read_text().splitlines())])
    results = [rollup_json(capsys, *files) for files in ((last_night, tonight), (tonight, last_night), (both,))]
    assert all(code == 0 for code, _, _ in results)
    assert all(data["groups"]["claude-code/interactive"]["api_calls"] == 14 + 3 for _, data, _ in results)
    assert figures(results[0][1]) == figures(results[1][1]) == figures(results[2][1])
    assert results[0][1]["rollup"]["duplicate_rows"] == 2 and "given twice, counted once: 2" in results[0][2]


def test_with_the_same_last_activity_the_version_with_more_calls_wins(tmp_path: Path, capsys):
    early = write(tmp_path / "a.jsonl", [session_row("s1", 14, "2026-11-01T20:00:00Z")])
    late = write(tmp_path / "b.jsonl", [session_row("s1", 8, "2026-11-01T20:00:00Z")])
    for files in ((late, early), (early, late)):
        assert rollup_json(capsys, *files)[1]["groups"]["claude-code/interactive"]["api_calls"] == 14


IMPOSSIBLE = [
    {"exploration_share_of_context": 0.5, "prompt_tokens_billed": -964},
    {"context_tokens": 1e300},
    {"api_calls": True},
    {"prompt_tokens_billed": "4000"},
    {"api_calls": 1.0},
    {"billed_tokens": dict.fromkeys(CATEGORIES, 10 ** 9)},  # far more than the context
    {"exploration_share_of_context": 5.0},
    {"machine": ["m1", "m2"]},
    {"person": {"name": "x"}},
    {"source": ["interactive"]},
    {"tokenizer": {"o200k": 1}},
    {"first_time_tokens": {**dict.fromkeys(CATEGORIES, 0), "shell": -1}},
    {"unrecorded_calls": 99},  # more than the session made
]


def test_rows_with_impossible_figures_or_wrong_types_are_left_out(tmp_path: Path, capsys):
    good = [session_row("s1", 5, "2026-11-01T10:00:00Z"), session_row("s2", 7, "2026-11-01T11:00:00Z")]
    clean = write(tmp_path / "clean.jsonl", good)
    bad = [{**session_row(f"b{index}", 4, "2026-11-01T12:00:00Z"), **change} for index, change in enumerate(IMPOSSIBLE)]
    mixed = write(tmp_path / "mixed.jsonl", [good[0], *bad, '{"id": "x", "agent": "a", "api_calls": NaN}', good[1]])
    code, data, err = rollup_json(capsys, mixed)
    assert code == 0 and figures(data) == figures(rollup_json(capsys, clean)[1])
    assert data["rollup"]["impossible_rows"] == len(IMPOSSIBLE) and data["rollup"]["unreadable_lines"] == 1
    lines = [line for line in err.splitlines() if "impossible" in line]
    assert len(lines) == 1 and f"left out: {len(IMPOSSIBLE)} (" in lines[0] and "Traceback" not in err


def test_a_huge_line_is_skipped_without_holding_it(tmp_path: Path, capsys):
    path = tmp_path / "rows.jsonl"
    with path.open("w") as handle:
        handle.write(json.dumps(session_row("s1", 5, "2026-11-01T10:00:00Z")) + "\n")
        handle.write('{"id": "' + "x" * (5 << 20) + '"}\n')
        handle.write(json.dumps(session_row("s2", 7, "2026-11-01T11:00:00Z")) + "\n")
    code, data, err = rollup_json(capsys, path)
    assert code == 0 and data["sessions"] == 2 and data["rollup"]["unreadable_lines"] == 1


def test_collect_drops_an_impossible_recorded_row_and_says_so(tmp_path: Path, capsys):
    path = write(tmp_path / "rows.jsonl", [session_row("s1", 5, "2026-11-01T10:00:00Z"),
                                          {**session_row("s2", 5, "2026-11-01T10:00:00Z"), "agent": ["x"]},
                                          {**session_row("s3", 5, "2026-11-01T10:00:00Z"), "context_tokens": -1}])
    assert [row["id"] for row in read_rows(path)] == ["s1"]
    assert "2 unreadable lines dropped" in capsys.readouterr().err


# --- files that are not regular files ----------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_from_rows_on_a_fifo_and_dev_zero_says_so_and_does_not_hang(tmp_path: Path):
    good = write(tmp_path / "rows.jsonl", [session_row("s1", 5, "2026-11-01T10:00:00Z")])
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "xshare", "report", "--all", "--json", "--from-rows", str(fifo), "/dev/zero",
            str(good)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO,
                          env={**os.environ, "XSHARE_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and json.loads(done.stdout)["sessions"] == 1
    refused = [line for line in done.stderr.splitlines() if "not a regular file" in line]
    assert len(refused) == 2 and "Traceback" not in done.stderr


FIFO_STATE = """
import os, sys
from pathlib import Path
from xshare.report import history
from xshare.measure.count_store import CountStore
said = []
store = CountStore(Path(sys.argv[1]), said.append)
assert store.get(b"some text") is None
store.put(b"some text", 2)
store.flush()
print(len(said), len(history.recall()), history.remember([{"id": "s", "agent": "a"}]))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_count_store_or_the_history_does_not_hang(tmp_path: Path):
    home = tmp_path / "home"
    (home / "history").mkdir(parents=True)
    os.mkfifo(home / "history" / "sessions.jsonl")
    os.mkfifo(tmp_path / "counts.bin")
    done = subprocess.run([sys.executable, "-c", FIFO_STATE, str(tmp_path / "counts.bin")], capture_output=True,
                          text=True, timeout=60, cwd=REPO, env={**os.environ, "XSHARE_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0", "0"]  # the store said so once; no history read, none added
    assert "could not read the history (not a regular file)" in done.stderr
    assert "could not add to the history (not a regular file)" in done.stderr


FIFO_LIVE = """
import json, sys
from pathlib import Path
from xshare.live import session_state
from xshare.agents.claude_code import rows_cache
from xshare.state.paths import line_file
from xshare.live.status_render import render
print(render({"session_id": "s1", "transcript_path": sys.argv[1]}, update=False))
print(session_state.is_current(Path(sys.argv[1]), "s1"), len(rows_cache.load("chars/4", {"x"})))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_live_summary_or_the_rows_cache_does_not_hang(tmp_path: Path):
    """The status line and the hook read the live summary, the report its rows cache: a FIFO in their place
    is refused as missing (the line says it is measuring the session, or the cache is read again), never
    waited on."""
    home = tmp_path / "home"
    (home / "live").mkdir(parents=True)
    (home / "cache").mkdir()
    os.mkfifo(home / "cache" / "claude-rows.jsonl")
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("{}\n")
    env = {**os.environ, "XSHARE_HOME": str(home)}
    line = subprocess.run([sys.executable, "-c", "from xshare.state.paths import line_file; print(line_file('s1'))"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=60).stdout.strip()
    os.mkfifo(line)
    done = subprocess.run([sys.executable, "-c", FIFO_LIVE, str(transcript)], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    shown, checked = done.stdout.splitlines()
    assert shown.startswith("explore: measuring this session")
    assert checked == "False 0"


def test_a_count_store_that_is_a_folder_is_said_once_and_counts_still_work(tmp_path: Path):
    said: list[str] = []
    (tmp_path / "counts.bin").mkdir()
    store = CountStore(tmp_path / "counts.bin", said.append)
    store.put(b"abc", 1)
    assert store.get(b"abc") == 1
    store.flush()
    assert len(said) == 1 and "not a regular file" in said[0]


# --- the history ----------------------------------------------------------------------------------


def remembered(tmp_path: Path, rows: list) -> Path:
    path = history.history_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return write(path, rows)


def test_history_lines_with_wrong_types_or_impossible_counts_are_skipped_and_said(tmp_path: Path, capsys):
    good = [session_row("s1", 5, "2026-11-01T10:00:00Z"), session_row("s2", 7, "2026-11-01T11:00:00Z")]
    bad = [{**session_row(f"b{index}", 4, "2026-11-01T12:00:00Z"), **change} for index, change in enumerate(IMPOSSIBLE)]
    remembered(tmp_path, [good[0], *bad, {**good[1], "billed_tokens": "lots"}, good[1]])
    found = history.recall()
    assert sorted(found) == [("claude-code", "s1"), ("claude-code", "s2")]
    assert found[("claude-code", "s2")] == good[1]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{len(IMPOSSIBLE) + 1} lines with impossible figures" in err


def test_a_report_with_a_broken_history_line_still_runs_and_sums_only_good_rows(tmp_path: Path, capsys,
                                                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))  # no transcripts: the history alone
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    good = [session_row("s1", 5, "2026-11-01T10:00:00Z"), session_row("s2", 7, "2026-11-01T11:00:00Z")]
    remembered(tmp_path, good)
    assert main(["report", "--all", "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    remembered(tmp_path, [good[0], {**good[1], "id": "n", "context_tokens": -10 ** 9}, {**good[0], "id": "t",
               "api_calls": "many"}, good[1]])
    assert main(["report", "--all", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["sessions"] == clean["sessions"] == 2 and data["groups"] == clean["groups"]
    assert "2 lines with impossible figures" in captured.err and "Traceback" not in captured.err


def test_reading_the_history_needs_no_lock(tmp_path: Path, capsys):
    rows = [session_row(f"s{index}", 5, "2026-11-01T10:00:00Z") for index in range(3)]
    remembered(tmp_path, rows)
    lock = history.history_path().with_name("sessions.lock")
    lock.mkdir()  # a lock that cannot be created, as in a read-only state folder
    assert len(history.recall()) == 3
    assert history.remember([session_row("s9", 1, "2026-11-02T10:00:00Z")]) == 0  # writing still locks
    assert "could not add to the history" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_state_folder_keeps_every_remembered_session(tmp_path: Path):
    rows = [session_row(f"s{index}", 5, "2026-11-01T10:00:00Z") for index in range(3)]
    folder = remembered(tmp_path, rows).parent
    folder.chmod(0o500)
    try:
        assert len(history.recall()) == 3
    finally:
        folder.chmod(0o700)


# --- the report's own caches --------------------------------------------------------------------------


def test_a_cache_entry_with_wrong_types_is_read_again(tmp_path: Path, capsys):
    path, _ = codex_session(tmp_path / "codex")
    argv = ["report", "--all", "--json", "--no-history", "--codex-home", str(tmp_path / "codex")]
    assert main(argv) == 0
    clean = json.loads(capsys.readouterr().out)
    cache = next((Path(os.environ["XSHARE_HOME"])).rglob("*codex*.json"))
    data = json.loads(cache.read_text())
    for entry in data["entries"].values():
        entry[1][0]["api_calls"] = -3
        entry[1][0]["machine"] = {"x": 1}
    cache.write_text(json.dumps(data))
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["groups"] == clean["groups"]
