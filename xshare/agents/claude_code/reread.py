"""Claude Code's attachments in the form it sent them, and its re-sent reads (the `file` attachments).

2.1.3xx writes beside most attachment rows the text it sent for them: `rendered`, a list of
`{"content": text}` (with `renderedRole`). Counted as they are, attachments take exactly their share of
the context (otherwise a few chosen fields of the payload stand for them). Those whose `renderedRole` is
`system` (the environment, the output style, hook output, the agent listing, auto mode...) go out in a
role-`system` turn, without the <system-reminder> wrapper `rendered` shows (2.1.332, seen on the wire),
and are counted without it. Rows without it (older
versions; `session_context`, `prompt_snapshot`) fall back to the payload.

After `/compact` (or an automatic compaction) Claude Code re-sends the files read recently. The transcript
holds each as an `attachment` row of type `file` whose `content.file` has the raw text (`content`,
`startLine`); the request carries it as two reminder blocks, a Read call and its line-numbered result
(observed on the wire with 2.1.332):

    <system-reminder>\\nCalled the Read tool with the following input: {"file_path":"..."}\\n</system-reminder>
    <system-reminder>\\nResult of calling the Read tool:\\n1<TAB>first line\\n...\\n</system-reminder>

Line numbers are `N<TAB>` from 2.1.86 and `<6-wide N>→` before (the Read tool's own formats). The same
attachment carries a file the user @-mentions; it is sent in the same form and counted the same way.
"""

from __future__ import annotations

import json

from xshare.agents.claude_code.content import as_system_turn, version_of
from xshare.measure.ledger import REREAD

INJECTED = "injected"
_TAB_NUMBERS_FROM = (2, 1, 86)  # "compact line-number format"
_CALLED = "<system-reminder>\nCalled the Read tool with the following input: {}\n</system-reminder>"
_RESULT = "<system-reminder>\nResult of calling the Read tool:\n{}\n</system-reminder>"


def _numbered(content: str, start: int, version: tuple[int, ...] | None) -> str:
    tabs = version is None or version >= _TAB_NUMBERS_FROM
    lines = content.split("\n")
    if tabs:
        return "\n".join(f"{start + index}\t{line}" for index, line in enumerate(lines))
    return "\n".join(f"{start + index:>6}\u2192{line}" for index, line in enumerate(lines))


def reread_texts(attachment: dict, version: object = None) -> list[str]:
    """The two blocks a text `file` attachment was sent as; [] for any other attachment (images, memory
    files and the rest stay injected context)."""
    if attachment.get("type") != "file":
        return []
    payload = attachment.get("content")
    file = payload.get("file") if isinstance(payload, dict) and payload.get("type") == "text" else None
    if not isinstance(file, dict) or not isinstance(file.get("content"), str):
        return []
    path = value if isinstance(value := attachment.get("filename"), str) else file.get("filePath")
    given = file.get("startLine")
    start = given if isinstance(given, int) and given > 0 else 1
    called = json.dumps({"file_path": path}, separators=(",", ":"), ensure_ascii=False)
    return [_CALLED.format(called), _RESULT.format(_numbered(file["content"], start, version_of(version)))]


def media_file(attachment: dict) -> tuple[str, dict] | None:
    """An @-mentioned image or PDF (a `file` attachment holding base64): the Read-call reminder it is sent
    after, and the block it goes out as (inside the person's message, 2.1.332); None for anything else."""
    payload = attachment.get("content") if attachment.get("type") == "file" else None
    if not isinstance(payload, dict):
        return None
    file = payload.get("file")
    if not isinstance(file, dict) or not isinstance(file.get("base64"), str):
        return None
    kind = "document" if payload.get("type") == "pdf" else "image"
    media_type = "application/pdf" if kind == "document" else file.get("type")
    path = value if isinstance(value := attachment.get("filename"), str) else file.get("filePath")
    called = json.dumps({"file_path": path}, separators=(",", ":"), ensure_ascii=False)
    return _CALLED.format(called), {"type": kind, "source": {"type": "base64", "media_type": media_type,
                                                              "data": file["base64"]}}


def _rendered(row: dict) -> list[str] | None:
    rendered = row.get("rendered")
    if not isinstance(rendered, list):
        return None
    contents = [item.get("content") for item in rendered if isinstance(item, dict)]
    texts = [text for text in contents if isinstance(text, str) and text]
    # renderedRole "system": sent in a role-system turn, without the wrapper `rendered` shows (2.1.332)
    return [as_system_turn(text) for text in texts] if row.get("renderedRole") == "system" else texts


def sent_texts(row: dict) -> tuple[str, list[str]] | None:
    """(category, texts) of an attachment row as it was sent: its `rendered` texts, else a text file
    rebuilt in its Read form; None when neither is known (the caller reads the payload)."""
    attachment = row.get("attachment")
    if not isinstance(attachment, dict):
        return None
    rebuilt = reread_texts(attachment, row.get("version"))
    category = REREAD if rebuilt else INJECTED
    rendered = _rendered(row)
    if rendered is not None:
        return category, rendered
    return (category, rebuilt) if rebuilt else None
