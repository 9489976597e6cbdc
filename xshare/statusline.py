"""Claude Code's status line: render the running exploration share from the state the hook saved.

It never loads a tokenizer and never reads transcript history: one small JSON file and one stat. Run
as `python3 -I -S <this file>` with Claude Code's status-line JSON on stdin; it imports only the
standard library and xshare.paths, so a refresh costs little more than starting Python. On any
problem it prints a short fallback and exits 0 (an empty line or an error blanks the status line).
"""

from __future__ import annotations

import json
import os
import sys

if __package__ in (None, ""):  # run as a script: the package sits two folders up
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xshare.paths import line_file  # noqa: E402
from xshare.statusline_update import kick  # noqa: E402

DEFAULT_FORMAT = "explore {context} of context · {bill} of bill · calib {calib} · {calls} calls{window}{behind}"
# the spec's reading thresholds: under 10 %, 10 to 30 %, 30 % or more
_COLOURS = ((0.10, "32"), (0.30, "33"), (float("inf"), "31"))


def _pct(value: object, estimate: bool, colour: bool) -> str:
    if not isinstance(value, (int, float)):
        return "?"
    text = f"{'≈' if estimate else ''}{value:.1%}"
    if not colour:
        return text
    code = next(code for limit, code in _COLOURS if value < limit)
    return f"\033[{code}m{text}\033[0m"


def fields(payload: dict, saved: dict | None, colour: bool) -> dict[str, str]:
    """Every value a format string may name, as text."""
    window = payload.get("context_window") if isinstance(payload.get("context_window"), dict) else {}
    used = window.get("used_percentage")
    values = {"window": f" · ctx {used:.0f}%" if isinstance(used, (int, float)) else "", "behind": "",
              "context": "?", "bill": "?", "calib": "?", "calls": "0", "compactions": "0", "tokenizer": "",
              "html": ""}
    if not saved:
        return values
    estimate = saved.get("tokenizer") != "o200k_base"
    calib = saved.get("recorded_over_billed")
    values.update(
        context=_pct(saved.get("exploration_share_of_context"), estimate, colour),
        bill=_pct(saved.get("exploration_share_of_prompt"), estimate, colour),
        calib=f"{calib:.0%}" if isinstance(calib, (int, float)) else "?",
        calls=f"{saved.get('api_calls', 0):,}",
        compactions=str(saved.get("compactions", 0)),
        tokenizer=str(saved.get("tokenizer", "")),
        html=str(saved.get("html", "")),
    )
    try:  # the transcript has grown past what the hook has counted: the figures are catching up
        if os.stat(payload.get("transcript_path") or saved["transcript"]).st_size > saved.get("offset", 0):
            values["behind"] = " …"
    except (OSError, KeyError, TypeError):
        pass
    return values


def catch_up(payload: dict, saved: dict | None, behind: bool) -> None:
    """No hook may come (the compaction summary is written after the last one): start the update here."""
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not isinstance(transcript, str):
        return
    if behind or (saved is None and os.path.isfile(transcript)):
        kick(session, transcript)


def render(payload: dict, line_format: str = DEFAULT_FORMAT, second: str | None = None,
           colour: bool = True, update: bool = False) -> str:
    session = payload.get("session_id")
    saved = None
    if isinstance(session, str) and session:
        try:
            with open(line_file(session), "rb") as handle:
                saved = json.loads(handle.read())
        except (OSError, ValueError):
            saved = None
    saved = saved if isinstance(saved, dict) else None
    values = fields(payload, saved, colour)
    if update:
        catch_up(payload, saved, bool(values["behind"]))
    if saved is None:
        return f"explore: waiting for the first update{values['window']}"
    lines = [line_format.format(**values)]
    if second:
        lines.append(second.format(**values))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    line_format, second = DEFAULT_FORMAT, None
    if "--format" in args and args.index("--format") + 1 < len(args):
        line_format = args[args.index("--format") + 1]
    if "--line2" in args and args.index("--line2") + 1 < len(args):
        second = args[args.index("--line2") + 1]
    colour = not os.environ.get("NO_COLOR") and "--no-color" not in args
    update = "--no-catch-up" not in args  # start a background update when the ledger is behind
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        text = render(payload if isinstance(payload, dict) else {}, line_format, second, colour, update)
    except Exception as error:  # a status line must never fail: say so briefly instead
        text = f"explore: unavailable ({error.__class__.__name__})"
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
