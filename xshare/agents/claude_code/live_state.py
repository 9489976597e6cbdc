"""Claude Code's live state, as the hook keeps it (live/session_state.py writes it): where a session's state
lies, and its row read back from it (fresher than the transcript's last full read), with the calls its
subagent files show it did not record. Light at import: the hook's idle call names these files."""

from __future__ import annotations

from pathlib import Path

from xshare import METHOD_VERSION
from xshare.state.paths import file_name, line_file, live_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without loading typing (the hook's idle call); checkers see True
if TYPE_CHECKING:
    from xshare.measure.row import SessionRow


def state_file(session_id: str) -> Path:
    return live_dir() / f"{file_name(session_id)}.state.json"


class _NothingToCount:
    """The counter of a state read back: no byte is read, so no text is counted; its name is the rows'."""

    fallbacks = 0

    def __init__(self, name: str) -> None:
        self.name = name

    def count(self, text: str) -> int:
        raise AssertionError("a live state read back counts no text")

    def flush(self) -> None:
        pass


def live_row(session_id: str, choice=None) -> SessionRow | None:
    """A session's row from its live state, if the hook keeps one under the current tokenizer (with
    the calls its subagent files' live states and Claude Code's usage totals show it did not record)."""
    from xshare.agents.claude_code.transcript import ClaudeTranscript, describe
    from xshare.measure import tokens
    from xshare.state.store import read_json

    choice = choice or tokens.choose()
    saved = read_json(state_file(session_id))
    if not isinstance(saved, dict) or saved.get("method") != METHOD_VERSION or saved.get("tokenizer") != choice.name:
        return None
    summary_now = read_json(line_file(session_id))
    saved_path = summary_now.get("transcript") if isinstance(summary_now, dict) else None
    path = Path(saved_path) if isinstance(saved_path, str) else Path(f"{session_id}.jsonl")  # a summary of other shape
    file = describe(path)
    try:
        row = ClaudeTranscript.from_state(saved["reader"], file, _NothingToCount(choice.name)).row()
    except (KeyError, TypeError, ValueError):
        return None
    return with_family(row, file, choice, lambda path, choice: None)


def with_family(row: SessionRow, file, choice, member_row) -> SessionRow:
    """A session's row with the calls Claude Code billed but wrote into none of its files, from the
    rows of its subagent files (`member_row(path, choice)`, or their live state when that is None)."""
    if not row.get("cost_state"):
        return row
    from xshare.agents.claude_code.transcript import family_files
    from xshare.agents.claude_code.unrecorded import complete_with_unrecorded

    family: list[SessionRow] = []
    for member in family_files(file):
        member_now = member_row(member.path, choice) or live_row(member.session_id, choice)
        if member_now is not None:
            family.append(member_now)
    return complete_with_unrecorded(row, family)
