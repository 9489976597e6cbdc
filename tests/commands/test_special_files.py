"""Issue 29, special files and hostile sizes: a file xshare reads that is a device, a FIFO, a file that
never ends though stat calls it regular, or holds numbers past any price; each is refused in one line or
read no further than its size when the read began."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from xshare.measure.prices import HIGHEST_RATE, LARGEST_PRICE_FILE

REPO = Path(__file__).resolve().parents[2]


def xshare(*argv: str, home: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """The CLI in its own process, so that a read that never ends fails the test instead of hanging it."""
    env = {**os.environ, "XSHARE_HOME": str(home), "XSHARE_NO_BACKGROUND": "1", "XSHARE_WORKER": "0"}
    return subprocess.run([sys.executable, "-m", "xshare", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_prices_on_a_fifo_is_refused_not_waited_on(tmp_path: Path):
    fifo = tmp_path / "prices.json"
    os.mkfifo(fifo)
    done = xshare("report", "--demo", "--prices", str(fifo), home=tmp_path / "state")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "xshare: could not read the --prices file: not a regular file"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_prices_on_a_device_is_refused_before_reading_it(tmp_path: Path):
    done = xshare("report", "--demo", "--prices", "/dev/zero", home=tmp_path / "state")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "xshare: could not read the --prices file: not a regular file"


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="no /proc")
def test_prices_linked_to_a_file_that_never_ends_is_read_no_further_than_the_cap(tmp_path: Path):
    link = tmp_path / "prices.json"
    link.symlink_to("/proc/self/pagemap")  # a regular file by stat, of size 0, that reads on and on
    done = xshare("report", "--demo", "--prices", str(link), home=tmp_path / "state")
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    assert "the --prices file" in done.stderr and "Traceback" not in done.stderr


def test_prices_over_the_cap_is_refused_in_one_line(capsys, tmp_path: Path):
    path = tmp_path / "prices.json"
    text = json.dumps({"models": {"glm-4.6": {"input": 0.6, "output": 2.2}}}) + " " * LARGEST_PRICE_FILE
    path.write_text(text)
    code, out, err = run(capsys, "report", "--demo", "--prices", str(path))
    assert code == 2 and out == ""
    assert err.strip() == f"xshare: the --prices file is over {LARGEST_PRICE_FILE >> 20} MB: not a price table"
    assert path.read_text() == text


@pytest.mark.parametrize("rate", [1e308, HIGHEST_RATE * 10])
def test_a_rate_past_any_price_is_refused_in_one_line(capsys, tmp_path: Path, rate: float):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"claude-opus-4-6": {"input": rate, "output": rate}}}))
    code, out, err = run(capsys, "report", "--demo", "--prices", str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "model 'claude-opus-4-6' needs \"input\" and \"output\" as numbers" in err


def test_the_highest_rate_is_priced(capsys, tmp_path: Path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"claude-opus-4-6": {"input": HIGHEST_RATE, "output": HIGHEST_RATE}}}))
    code, out, _ = run(capsys, "report", "--demo", "--json", "--prices", str(path))
    dollars = json.loads(out)["dollars"]
    assert code == 0 and dollars["prices"]["prices_file"]["models"] == ["claude-opus-4-6"] and dollars["dollars"] > 1e3


# --- a transcript that never ends: read no further than its size when the read began ----------------------

NEVER_ENDS = Path("/proc/self/pagemap")  # a regular file by stat, of size 0, that reads on and on
needs_pagemap = pytest.mark.skipif(not NEVER_ENDS.exists(), reason="no /proc/self/pagemap")


def claude_root_with_a_link(tmp_path: Path) -> tuple[Path, Path]:
    """The demo's transcripts, and beside them a session whose transcript is a link to NEVER_ENDS."""
    from xshare.demo import write_demo_corpus

    root = write_demo_corpus(tmp_path / "claude")
    link = next(root.iterdir()) / "0b7f9e0c-1a2b-4c3d-8e9f-a0b1c2d3e4f5.jsonl"
    link.symlink_to(NEVER_ENDS)
    return root, link


@needs_pagemap
def test_session_path_of_a_transcript_that_never_ends_answers(tmp_path: Path):
    _, link = claude_root_with_a_link(tmp_path)
    done = xshare("session", str(link), "--json", home=tmp_path / "state")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["api_calls"] == 0  # its stated size is 0: nothing in it was read


@needs_pagemap
def test_the_report_measures_the_rest_beside_a_transcript_that_never_ends(tmp_path: Path):
    root, link = claude_root_with_a_link(tmp_path)
    flags = ["report", "--all", "--json", "--no-history", "--claude-root", str(root)]
    beside = json.loads(xshare(*flags, home=tmp_path / "state").stdout)
    link.unlink()
    alone = json.loads(xshare(*flags, home=tmp_path / "state2").stdout)
    figures = ("api_calls", "prompt_tokens_billed", "exploration_share_of_context")
    measured = beside["groups"]["claude-code/interactive"]
    assert [measured[key] for key in figures] == [alone["groups"]["claude-code/interactive"][key] for key in figures]
    assert measured["api_calls"] > 0 and measured["sessions_with_api_calls"] == 6  # the demo's, all of them


@needs_pagemap
def test_the_hook_on_a_transcript_that_never_ends_returns(tmp_path: Path):
    _, link = claude_root_with_a_link(tmp_path)
    payload = {"session_id": link.stem, "transcript_path": str(link), "hook_event_name": "PostToolBatch"}
    env = {**os.environ, "XSHARE_HOME": str(tmp_path / "state"), "XSHARE_NO_BACKGROUND": "1", "XSHARE_WORKER": "0"}
    done = subprocess.run([sys.executable, "-m", "xshare", "hook"], input=json.dumps(payload), text=True, env=env,
                          capture_output=True, timeout=60, cwd=REPO)
    assert done.returncode == 0 and done.stdout == ""
    saved = json.loads((tmp_path / "state" / "live" / f"{link.stem}.line.json").read_text())
    assert saved["api_calls"] == 0


@needs_pagemap
def test_every_agents_whole_file_read_stops_at_the_stated_size(tmp_path: Path):
    from xshare.agents.common.sniff import sniff
    from xshare.agents.common.stated import read_stated

    link = tmp_path / "rollout.jsonl"
    link.symlink_to(NEVER_ENDS)
    assert read_stated(link) == b"" and sniff(link) == b""
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(b'{"a": 1}\n' * 10)
    assert read_stated(plain) == plain.read_bytes() and read_stated(plain, 4) == b'{"a"'


# --- a hostile size for the shell lexer: time linear in the command -----------------------------------------

HOSTILE_COMMANDS = {  # each repeated to about 120 KB; a=(...)'s join per "(" made the first take 17 s
    "array assignments": ("x=", "()="), "arrays": ("", "a=("), "extglobs": ("echo ", "!("),
    "arithmetic": ("", "$(("), "backticks": ("`", "\\`"), "substitutions": ("", "$("),
    "process substitutions": ("cat ", "<("), "heredocs": ("cat ", "<<E "), "redirects": ("cat ", "2>x "),
    "pipes": ("", "cat f | "), "tests": ("", "[[ "), "quotes": ("echo ", "''"),
}


def timed(command: str) -> float:
    from xshare.measure.shell_lexer import lex

    start = time.perf_counter()
    lex(command)
    return time.perf_counter() - start


@pytest.mark.parametrize("name", HOSTILE_COMMANDS)
def test_the_shell_lexer_takes_time_linear_in_a_hostile_command(name: str):
    from xshare.measure.classify import explain_command

    head, unit = HOSTILE_COMMANDS[name]
    hostile = head + unit * (120_000 // len(unit))
    plain = "a " * (len(hostile) // 2)  # as long, of plain words: what linear costs on this machine now
    baseline = min(timed(plain) for _ in range(2))
    assert timed(hostile) < 20 * baseline + 1.0, name
    assert explain_command(hostile).category == explain_command(head + unit * 3).category


@needs_pagemap
def test_a_rows_file_that_never_ends_is_read_to_its_stated_size(capsys, tmp_path: Path):
    rows = tmp_path / "rows.jsonl"
    assert run(capsys, "report", "--demo", "--rows", str(rows))[0] == 0
    link = tmp_path / "bob.jsonl"
    link.symlink_to(NEVER_ENDS)
    flags = ["report", "--all", "--json", "--from-rows", str(rows)]
    beside = xshare(*flags, str(link), home=tmp_path / "state")
    alone = xshare(*flags, home=tmp_path / "state2")
    assert beside.returncode == alone.returncode == 0, beside.stderr
    assert json.loads(beside.stdout)["groups"] == json.loads(alone.stdout)["groups"]
    assert json.loads(beside.stdout)["sessions"] == 8  # the demo's


@pytest.mark.parametrize("shape", ["gzip bomb", "never ends"])
def test_a_named_vocabulary_is_read_to_a_cap(tmp_path: Path, shape: str):
    import gzip

    from xshare.measure import tokens

    vocab = tmp_path / "o200k_base.tiktoken.gz"
    if shape == "never ends":
        if not NEVER_ENDS.exists():
            pytest.skip("no /proc/self/pagemap")
        vocab.symlink_to(NEVER_ENDS)
    else:
        vocab.write_bytes(gzip.compress(b"\0" * (4 * tokens.LARGEST_VOCAB), compresslevel=1))
    counter = tokens.Counter(tokens.choose(vocab=str(vocab)))
    assert counter.name == tokens.ESTIMATE
    assert counter.choice.note == f"vocabulary unusable: {vocab.name} is over 16 MB: not the o200k_base vocabulary"
    assert counter.count("abcdefgh") == 2  # measured on, as an estimate


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_rows_file_named_with_escapes_is_named_escaped(capsys, tmp_path: Path):
    rows = tmp_path / "rows.jsonl"
    assert run(capsys, "report", "--demo", "--rows", str(rows))[0] == 0
    odd = tmp_path / "bob\033]52;c;ZXZpbA==\a\n.jsonl"  # a teammate's file, reached by a glob
    os.mkfifo(odd)
    code, out, err = run(capsys, "report", "--all", "--json", "--from-rows", str(rows), str(odd))
    assert code == 0 and json.loads(out)["sessions"] == 8
    assert err == (f"xshare: rows file {tmp_path}/bob[U+001B]]52;c;ZXZpbA==[U+0007][U+000A].jsonl could not be read"
                   " (not a regular file)\n")
