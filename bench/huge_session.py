"""Memory and time of `xshare report` and `xshare session PATH` on one huge session (issue 29): peak RSS must
stay under the goal whatever one file or one text holds, and time grow linearly with the input.

Writes three invented Claude Code transcripts, each alone in its own history, into a temporary folder (never
../shared/corpus), then measures a cold report and `session PATH` of each in fresh processes:
  - short lines: one session of 10M short rows (about 2 GB), a prompt each, every 100th a call,
  - tool calls:  one session of 1,000,000 tool calls (a Read and its small result each),
  - one piece:   one call whose tool result is 48 MB of `ab` repeated, a single pre-tokenizer piece.
`--scale` multiplies every size (0.01 runs in seconds; 1 is the issue's sizes).

    nice python bench/huge_session.py [--scale 0.05] [--only lines|calls|piece] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import process_tree  # noqa: E402

GOAL_MB = 400
SESSION = "5e551011-0000-4000-8000-000000000029"
LINES, CALLS, PIECE_BYTES = 10_000_000, 1_000_000, 48_000_000


def _stamp(number: int) -> str:
    day, hour, minute = 1 + number // 86400 % 28, number // 3600 % 24, number // 60 % 60
    return f"2026-11-{day:02d}T{hour:02d}:{minute:02d}:{number % 60:02d}.000Z"


def _head(kind: str, number: int) -> str:
    return (f'{{"type":"{kind}","uuid":"u-{number:09d}","parentUuid":null,"sessionId":"{SESSION}",'
            f'"timestamp":"{_stamp(number)}","cwd":"/home/dev/big","version":"2.1.100","entrypoint":"cli",'
            '"isSidechain":false,')


def _call(number: int, context: int, content: str) -> str:
    usage = (f'{{"input_tokens":3,"cache_read_input_tokens":{context},"cache_creation_input_tokens":40,'
             '"output_tokens":20}')
    return (_head("assistant", number) + f'"requestId":"req_{number}","message":{{"id":"msg_{number}",'
            f'"role":"assistant","model":"claude-sonnet-4-5","content":{content},"usage":{usage}}}}}\n')


def short_lines(count: int) -> Iterator[str]:
    """Short prompts (a few distinct words each), a call after every 100th."""
    for number in range(count):
        if number % 100 == 99:
            yield _call(number, 3000 + number // 10, '[{"type":"text","text":"ok"}]')
        else:
            yield _head("user", number) + f'"message":{{"role":"user","content":"note {number % 5000}"}}}}\n'


def tool_calls(count: int) -> Iterator[str]:
    """A Read and its result, `count` times: every call a tool id, a request id and two row uuids; each bill
    grows by a little more than the call adds, so no call's messages are trimmed to fit it."""
    for call in range(count):
        read = f'"name":"Read","input":{{"file_path":"src/f{call % 500}.py"}}'
        use = f'[{{"type":"tool_use","id":"toolu_{call:09d}",{read}}}]'
        yield _call(2 * call, 3000 + call * 20, use)
        result = f'[{{"type":"tool_result","tool_use_id":"toolu_{call:09d}","content":"line {call % 700}"}}]'
        yield _head("user", 2 * call + 1) + f'"message":{{"role":"user","content":{result}}}}}\n'


def one_piece(size: int) -> Iterator[str]:
    """One Read whose result is `size` bytes of `ab` repeated: a single piece for o200k's pre-tokenizer."""
    yield _head("user", 0) + '"message":{"role":"user","content":"read the blob"}}\n'
    yield _call(1, 3000, '[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"blob.txt"}}]')
    result = '[{"type":"tool_result","tool_use_id":"toolu_1","content":"' + "ab" * (size // 2) + '"}]'
    yield _head("user", 2) + f'"message":{{"role":"user","content":{result}}}}}\n'
    yield _call(3, 3000 + size // 2, '[{"type":"text","text":"done"}]')


def write(path: Path, rows: Iterator[str]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for row in rows:
            out.write(row)
    return path.stat().st_size


def measure(name: str, folder: Path, rows: Iterator[str]) -> None:
    home, config, state = folder / name / "home", folder / name / "claude", folder / name / "xshare"
    home.mkdir(parents=True, exist_ok=True)
    transcript = config / "projects" / "-home-dev-big" / f"{SESSION}.jsonl"
    size = write(transcript, rows)
    env = {key: value for key, value in os.environ.items()
           if key not in ("HERMES_HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                          "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "XDG_STATE_HOME")}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(config), PYTHONPATH=str(REPO), XSHARE_WORKER="0")
    print(f"{name}: {size / 1e6:,.0f} MB", flush=True)
    for what, command in (("report --all", ["report", "--all"]), ("session PATH", ["session", str(transcript)])):
        shutil.rmtree(state, ignore_errors=True)  # cold: no cache, no remembered counts
        env["XSHARE_HOME"] = str(state)
        seconds, _, peak, code, stderr = process_tree([sys.executable, "-m", "xshare", *command], env)
        verdict = "met" if peak < GOAL_MB else "MISSED"
        failed = f"   FAILED ({code}): {stderr.strip().splitlines()[-1:]}" if code else ""
        print(f"  {what:<14} {seconds:7.1f} s   peak {peak:6.0f} MB   (goal < {GOAL_MB} MB: {verdict}){failed}",
              flush=True)
    shutil.rmtree(folder / name, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.05, help="of the issue's sizes (default 0.05)")
    parser.add_argument("--only", choices=("lines", "calls", "piece"))
    parser.add_argument("--keep", metavar="DIR", help="build under here (default: a temporary folder)")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="xshare-huge-"))
    sessions = {"lines": lambda: short_lines(int(LINES * args.scale)),
                "calls": lambda: tool_calls(int(CALLS * args.scale)),
                "piece": lambda: one_piece(int(PIECE_BYTES * args.scale))}
    try:
        for name, rows in sessions.items():
            if args.only in (None, name):
                measure(name, folder, rows())
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
