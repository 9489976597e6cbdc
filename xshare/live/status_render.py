"""Claude Code's status line: render the running exploration share from the state the hook saved.

It never loads a tokenizer and never reads transcript history: one small JSON file and one stat. Run
as `python3 -I -S xshare/statusline.py` (the entry point that runs this) with Claude Code's status-line JSON on
stdin; it imports only the standard library (not typing), xshare.state, xshare.printing and live/catch_up.py, so a
refresh costs little more than starting Python. On any problem it prints a short fallback and exits 0 (an empty
line or an error blanks the status line).
"""

from __future__ import annotations

import json
import os
import re  # json imports it already: free
import sys

from xshare.live.catch_up import kick
from xshare.printing import columns_set, pct, printable, usage_kinds
from xshare.state.paths import line_file
from xshare.state.private import read_regular, writable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (a few ms of every refresh); checkers see True
if TYPE_CHECKING:
    from xshare.live.summary import LiveSummary

DEFAULT_FORMAT = "explore {context} of context · {bill} of bill · calib {calib} · {calls} calls{window}{behind}"
# the second line: what to act on (a rebuild just caused, a /compact that pays), then what fills the context
# and the last call;
# `--line2 ""` (install --no-line2) switches it off
DEFAULT_LINE2 = "{rebuilt} · {nudge} · {fill} · {last}"
SEPARATOR = " · "  # between fields: a line too wide loses whole fields from the right
_ANSI = re.compile(r"\033\[[0-9;]*m")
# a share is shown only while the recorded context is within the bill and this allowance: measure/ledger.py's
# 1 + ROUNDING_ALLOWANCE (not imported: the line loads no ledger; tests/live/test_status_render.py holds them equal)
SUPPORTED_CALIBRATION = 1.01
# the spec's reading thresholds: under 10 %, 10 to 30 %, 30 % or more
_COLOURS = ((0.10, "32"), (0.30, "33"), (float("inf"), "31"))


def _share(value: object, estimate: bool, colour: bool) -> str:
    if not isinstance(value, (int, float)):
        return "?"
    text = f"{'≈' if estimate else ''}{pct(value)}"
    if not colour:
        return text
    code = next(code for limit, code in _COLOURS if value < limit)
    return f"\033[{code}m{text}\033[0m"


def _n(value: object) -> str:
    """A token count in a few characters: 980, 45.2k, 1.3M."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "?"
    if abs(value) < 1000:
        return f"{value:.0f}"
    if abs(value) < 999_500:
        return f"{value / 1000:.1f}k"
    return f"{value / 1e6:.1f}M"


def _n_calls(value: object) -> str:
    """The call count with thousands separators; anything else the summary holds, escaped."""
    return f"{value:,}" if isinstance(value, int) else printable(value)


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour and text else text


def _kinds(usage: dict) -> str:
    """Usage by kind, in the status line's short words: read, write, fresh, out."""
    return usage_kinds(usage, ("read", "write", "fresh", "out"), _n)


# `{fill}`: the last call's context in the six groups, the ledger's rarer categories as "other"
FILL_GROUPS = (("explore", ("exploration",)), ("edits", ("edit",)), ("shell", ("shell",)),
               ("chat", ("conversation",)), ("injected", ("injected",)), ("overhead", ("overhead",)),
               ("other", ("web", "other", "reread", "neuralmind", "inherited")))


def fill_field(context: object, prompt: object = None) -> str:
    """What filled the last call's context, by group: 'context now 84.2k: explore 41%, edits 8%, ...'. The
    size is the prompt the call was billed for (what the API counted); the shares are of what xshare counted in
    it by category. Empty groups are left out; those under half a percent join "other", which reads <1%, never
    0%, when it is that small itself."""
    if not isinstance(context, dict):
        return ""
    counts = {name: sum(value for key in keys if isinstance(value := context.get(key, 0), int)) for name, keys in
              FILL_GROUPS}
    total = sum(counts.values())
    if total <= 0:
        return ""
    for name in [name for name, count in counts.items() if name != "other" and count / total < 0.005]:
        counts["other"] += counts.pop(name)  # a group too small to show a percent: one "other", not many <1%
    parts = [f"{name} {'<1%' if count / total < 0.005 else f'{count / total:.0%}'}"
             for name, count in counts.items() if count > 0]
    size = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt > 0 else total
    return f"context now {_n(size)}: {', '.join(parts)}"


def cache_fields(saved: LiveSummary, colour: bool) -> dict[str, str]:
    """`{last}`, `{session}`, `{nudge}`, `{rebuilds}`, `{rebuilt}`, `{fill}` from what the hook saved."""
    values = {"last": "", "session": "", "nudge": "", "rebuilds": "", "rebuilt": "",
              "fill": ""}
    last, usage = saved.get("last"), saved.get("usage")
    values["fill"] = fill_field(saved.get("last_context"), last.get("prompt") if isinstance(last, dict) else None)
    if isinstance(last, dict) and isinstance(last.get("usage"), dict):
        values["last"] = f"last call {_n(last.get('prompt'))} ({_kinds(last['usage'])})"
    if isinstance(usage, dict):
        values["session"] = f"session {_n(saved.get('weighted'))} weighted ({_kinds(usage)})"
    nudge = saved.get("nudge")
    if isinstance(nudge, dict):
        even = nudge.get("break_even")
        values["nudge"] = _paint(f"/compact now: {_n(nudge.get('fewer'))} fewer per call, pays back in "
                                 f"{printable(even)} call{'' if even == 1 else 's'}", "33", colour)
    rebuild = saved.get("last_rebuild")
    if isinstance(saved.get("rebuilds"), int):
        cause = f" (last: {printable(rebuild.get('cause'))})" if isinstance(rebuild, dict) else ""
        values["rebuilds"] = f"{saved['rebuilds']} cache rebuild{'s' if saved['rebuilds'] != 1 else ''}{cause}"
    if saved.get("rebuild_now") and isinstance(rebuild, dict):
        # the detail names models as the records spelled them: escaped, as every field from the data is
        values["rebuilt"] = _paint(f"cache rebuilt: {printable(rebuild.get('cause'))} "
                                   f"({printable(rebuild.get('detail'))})", "31", colour)
    return values


def fields(payload: dict, saved: LiveSummary | None, colour: bool) -> dict[str, str]:
    """Every value a format string may name, as text."""
    window = payload.get("context_window")
    window = window if isinstance(window, dict) else {}
    used = window.get("used_percentage")
    values = {"window": f" · ctx {used:.0f}%" if isinstance(used, (int, float)) else "", "behind": "",
              "context": "?", "bill": "?", "calib": "?", "calls": "0", "compactions": "0", "tokenizer": "",
              "html": "", "last": "", "session": "", "nudge": "", "rebuilds": "", "rebuilt": "", "fill": ""}
    if not saved:
        return values
    try:
        values.update(cache_fields(saved, colour))
    except (TypeError, ValueError, AttributeError, KeyError):
        pass  # a summary of the wrong shapes: the share still shows, the cache fields stay empty
    estimate = saved.get("tokenizer") != "o200k_base"
    calib = saved.get("recorded_over_billed")
    unsupported = bool(saved.get("unknown_because")) or (
        isinstance(calib, (int, float)) and calib > SUPPORTED_CALIBRATION)  # a summary older than the check too
    values.update(
        context=_share(None if unsupported else saved.get("exploration_share_of_context"), estimate, colour),
        bill=_share(None if unsupported else saved.get("exploration_share_of_prompt"), estimate, colour),
        calib=(f"{calib:.0%}" if isinstance(calib, (int, float)) else "?")
        + (" (the records exceed the bill: shares unknown)" if unsupported else ""),
        calls=_n_calls(saved.get("api_calls", 0)),
        compactions=printable(saved.get("compactions", 0)),
        tokenizer=printable(saved.get("tokenizer", "")),
        html=printable(saved.get("html", "")),
    )
    try:  # the transcript has grown past what the hook has counted: the figures are catching up
        if os.stat(payload.get("transcript_path") or saved["transcript"]).st_size > saved.get("offset", 0):
            values["behind"] = " …"
    except (OSError, KeyError, TypeError):
        pass
    return values


FIELD_NAMES = tuple(fields({}, None, False))  # what --format and --line2 may name, in braces


def format_problem(line_format: str) -> str | None:
    """Why `line_format` would not render, in words (an unknown field, a stray brace); None when it would."""
    try:
        line_format.format(**dict.fromkeys(FIELD_NAMES, ""))
    except KeyError as error:
        return f"unknown field {{{error.args[0]}}}"
    except IndexError:
        return "a field needs a name, e.g. {context}"
    except (ValueError, AttributeError, TypeError) as error:
        return f"not a format xshare can fill ({error})"
    return None


def install_refusal(line_format: str | None, line2: str | None) -> str | None:
    """Why `statusline install` must not write these formats (the line would read "explore: ..." and
    nothing else), with the fields there are; None when both render."""
    for flag, value in (("--format", line_format), ("--line2", line2)):
        if value and (problem := format_problem(value)):
            return f"{flag}: {problem}; the fields are {' '.join(FIELD_NAMES)}; nothing installed"
    return None


# `--fields`: each field with the words it needs alone in another program's line (a bare "41%" says nothing)
LABELLED = {"context": "explore {context} of context", "bill": "explore {bill} of bill", "calib": "calib {calib}",
            "calls": "{calls} calls", "compactions": "{compactions} compactions", "window": "{window}",
            "tokenizer": "tokenizer {tokenizer}", "html": "page {html}"}


def field_list(names: str) -> list[str]:
    """The names of a `--fields` value: commas or spaces between them, braces allowed ("context,fill")."""
    return [name.strip("{}") for name in re.split(r"[,\s]+", names) if name.strip("{}")]


def fields_problem(names: str) -> str | None:
    """Why a `--fields` value names no field or an unknown one, with the fields there are; None when it is fine."""
    wanted = field_list(names)
    unknown = [name for name in wanted if name not in FIELD_NAMES]
    if wanted and not unknown:
        return None
    said = f"unknown field {unknown[0]}" if unknown else "no field named"
    return f"--fields: {said}; the fields are {' '.join(FIELD_NAMES)}"


def fields_only(payload: dict, names: list[str], colour: bool = False, update: bool = False) -> str:
    """Only the named fields, labelled, for another status line's custom-command widget: no "explore:"
    prefix, no second line, no width cut (the host lays out its line); empty while nothing is saved yet,
    so the widget hides instead of showing a placeholder."""
    saved = saved_summary(payload)
    values = fields(payload, saved, colour)
    if update:
        catch_up(payload, saved, bool(values["behind"]))
    if saved is None:
        return ""
    return fit(SEPARATOR.join(LABELLED.get(name, "{" + name + "}").format(**values) for name in names), None)


def catch_up(payload: dict, saved: LiveSummary | None, behind: bool) -> None:
    """No hook may come (the compaction summary is written after the last one): start the update here."""
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not isinstance(transcript, str):
        return
    if behind or (saved is None and os.path.isfile(transcript)):
        kick(session, transcript)


def fit(line: str, width: int | None) -> str:
    """The line without empty fields, and without as many fields from the right as it takes to fit
    `width` columns (the terminal would wrap it, or drop it whole)."""
    parts = [part for part in line.split(SEPARATOR) if _ANSI.sub("", part).strip()]
    while width and len(parts) > 1 and len(_ANSI.sub("", SEPARATOR.join(parts))) > width:
        parts.pop()
    text = SEPARATOR.join(parts)
    if width and len(_ANSI.sub("", text)) > width:  # one field, still too wide: cut it, plainly
        text = _ANSI.sub("", text)[: max(1, width - 1)] + "…"
    return text


def terminal_width() -> int | None:
    """COLUMNS (Claude Code sets it), else the terminal's width if any stream is one, else no limit."""
    columns = columns_set()
    if columns:
        return columns
    for stream in (2, 1, 0):
        try:
            return os.get_terminal_size(stream).columns or None
        except OSError:
            continue
    return None


def saved_summary(payload: dict) -> LiveSummary | None:
    """The summary the hook saved for the session the payload names; None if there is none readable."""
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return None
    try:
        saved: LiveSummary | None = json.loads(read_regular(line_file(session)))  # a FIFO is refused, not waited on
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def waiting_for(payload: dict) -> str:
    """What a session with no figures yet waits for, so that a line never says "waiting" with no end."""
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str) or not transcript:
        return "no session_id and transcript_path in the status JSON, nothing to measure"
    if not transcript.endswith(".jsonl"):
        return "the transcript_path is not a Claude Code transcript (.jsonl), nothing to measure"
    if not os.path.isfile(transcript):
        return "waiting for the session's first message (no transcript yet)"
    return "measuring this session (its first update)"


def render(payload: dict, line_format: str = DEFAULT_FORMAT, second: str | None = DEFAULT_LINE2,
           colour: bool = True, update: bool = False, width: int | None = None) -> str:
    saved = saved_summary(payload)
    values = fields(payload, saved, colour)
    if saved is None and (why := writable()):  # checked only while nothing shows: a stat or two
        return f"explore: off, {why}{values['window']}"
    if update:
        catch_up(payload, saved, bool(values["behind"]))
    if saved is None:
        return f"explore: {waiting_for(payload)}{values['window']}"
    lines = [fit(line_format.format(**values), width)]
    if second:
        extra = fit(second.format(**values), width)
        lines += [extra] if extra else []  # nothing to say: no empty row
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    line_format = DEFAULT_FORMAT
    second: str | None = DEFAULT_LINE2
    if "--format" in args and args.index("--format") + 1 < len(args):
        line_format = args[args.index("--format") + 1]
    if "--line2" in args and args.index("--line2") + 1 < len(args):
        second = args[args.index("--line2") + 1]
    if "--no-line2" in args:
        second = None
    colour = not os.environ.get("NO_COLOR") and "--no-color" not in args
    update = "--no-catch-up" not in args  # start a background update when the ledger is behind
    if "--fields" in args:  # plain: the host program colours its own widgets
        return _main_fields(args, update)
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        text = render(payload if isinstance(payload, dict) else {}, line_format, second, colour, update,
                      terminal_width())
    except Exception as error:  # a status line must never fail: say so briefly instead
        problem = format_problem(line_format) or (format_problem(second) if second else None)
        text = f"explore: {problem}" if problem else f"explore: unavailable ({error.__class__.__name__})"
    sys.stdout.write(text + "\n")
    return 0


def _main_fields(args: list[str], update: bool) -> int:
    """`--fields NAMES`: the fields alone; a bad name is said in the widget's place, and the exit is 0 (the
    host would blank its whole line on a failure)."""
    at = args.index("--fields") + 1
    names = args[at] if at < len(args) else ""
    if problem := fields_problem(names):
        sys.stdout.write(f"xshare: {problem}\n")
        return 0
    try:
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
        text = fields_only(payload if isinstance(payload, dict) else {}, field_list(names), False, update)
    except Exception as error:  # a widget must never fail its host's line
        text = f"xshare: unavailable ({error.__class__.__name__})"
    sys.stdout.write(text + "\n")
    return 0
