"""OpenCode (sst/opencode): every session in one SQLite database, opencode.db, in OpenCode's data folder
($XDG_DATA_HOME/opencode, default ~/.local/share/opencode; other release channels: opencode-<channel>.db).
Checked against the corpus's database (1.17.x) and the real OpenCode 1.18.33 run offline
(tests/agents/opencode/test_realhost.py).

What is recorded. Tables `session` (id, parent_id: a subagent's child session, times), `message` (one row
per message, its fields as JSON in `data`) and `part` (the message's pieces, JSON in `data`: `text`,
`reasoning`, `step-start`, `step-finish`, `tool`, `compaction`, ...). Only these three are read, read-only
(the database also holds accounts and credentials: never touched). A session with a parent is
`opencode/subagent` (the `task` tool's child), the others `opencode/interactive`.

Usage. One API call = one `step-finish` part (an assistant message can hold several steps; the message's
own `tokens` are its last step's, so they are not used). Its `tokens` are `{input, output, reasoning,
cache: {read, write}}`, and `input` excludes both cache reads and cache writes: OpenCode's getUsage()
(packages/opencode/src/session/session.ts; session/index.ts before) stores `input = inputTokens -
cacheRead - cacheWrite` since AI SDK v6 made inputTokens include cached tokens for every provider (and,
before it, subtracted them for every provider but Anthropic and Bedrock, whose inputTokens already
excluded them). So prompt billed = input + cache.read + cache.write; cache write is counted as 5-minute
writes (OpenCode does not say which); output = output + reasoning.

Presence and compaction. A step's reasoning, text and tool calls are its call's output; its tool results
(`state.output`, or `state.error`) are present from the next step. A `compaction` part starts a
compaction: the summary message that follows (`summary: true`) is billed on the whole history, then
everything before it is dropped and the summary stays. Tool outputs OpenCode prunes from old turns are left
to the billing cap (each step's bill), which drops the oldest context first.

Title requests. OpenCode names a new top-level session with one more request (no tools, about 600 prompt
tokens: SessionPrompt.ensureTitle, on the first prompt of a session with no parent and the default title
"New session - <time>"). The provider bills it; OpenCode records its usage nowhere (not in the steps, nor
in the session's totals). So it is not counted: a session that was given a title that way says so in its
`unseen_calls` ({"opencode_title": 1}, agents/common/unseen.py), and the report names them.

Unknown. OpenCode before 1.2 kept JSON files under storage/ instead: they are not read (said on stderr). A
part type or message role this reader does not know is counted on stderr (the billing cap still bounds
what each step carried).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare.agents.common import opencode_tables, same_file
from xshare.agents.common.counting import TokenCounter
from xshare.agents.opencode.tools import TOOLS
from xshare.measure.row import SessionRow

AGENT = "opencode"
NAME = "OpenCode"
FLAG = "opencode_db"
KIND = "database"
TITLE = "opencode_title"  # the row's unseen_calls key (agents/common/unseen.py): its title request, recorded nowhere
FORK = opencode_tables.Fork(NAME, "opencode", TOOLS, TITLE)
UNKNOWN_PART, UNKNOWN_ROLE = FORK.unknown_part, FORK.unknown_role


default_homes, describe, discover = FORK.default_homes, FORK.describe, FORK.discover


def unread(homes: list[Path]) -> list[str]:
    """What is there but not read: OpenCode's pre-1.2 JSON storage."""
    found = same_file.unique(home for home in homes if (home / "storage" / "session").is_dir())
    return ["OpenCode JSON storage (before 1.2) found but not read"] * len(found)


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """Every session's row in one OpenCode database; problems are counted, never raised."""
    return opencode_tables.read(path, FORK, counter, problems, ledgers)
