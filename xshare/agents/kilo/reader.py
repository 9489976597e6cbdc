"""Kilo CLI (`@kilocode/cli`, Kilo-Org/kilocode, a fork of OpenCode): every session in one SQLite database,
kilo.db, in Kilo's data folder ($XDG_DATA_HOME/kilo, default ~/.local/share/kilo; a release channel other
than latest/beta/prod: kilo-<channel>.db; $KILO_DB may name another file, which can be given to --kilo-db).
Checked against the real Kilo CLI 7.7.7 (`@kilocode/cli` with `@kilocode/cli-linux-x64`, pinned in .ci/run)
run offline against a fake Chat Completions server (tests/agents/kilo/test_realhost.py).

What is recorded: OpenCode's tables, read as OpenCode's are (agents/common/opencode_tables.py). `session`
(id, parent_id: a `task` subagent's child session, title, times, and the session's token totals, not read),
`message` and `part` (JSON in `data`; parts `text`, `step-start`, `tool` with `state.input`/`output`/`error`,
`step-finish` with `tokens{total, input, output, reasoning, cache{read, write}}`). 7.7.7 stores `input`
without the cache reads (a step billed 11,098 prompt tokens, half cached, recorded input 5,549 and cache.read
5,549), so prompt billed = input + cache.read + cache.write, as for OpenCode. Kilo adds its own tables
(kilo_board, session_context_epoch, ...; accounts and credentials too): never read.

Title requests. Like OpenCode, Kilo names a new top-level session with one more request without tools,
whose usage no step and no session total records. It is not awaited: against the fake server `kilo run`
exited before sending it in some runs, and in others after it was billed but before the title was stored
(the session kept "New session - <time>"), so a default title does not prove there was none: every
top-level session says up to one in its `unseen_calls` ({"kilo_title": 1}), and the report names them.

Unknown. A part type or message role this reader does not know is counted on stderr (the billing cap still
bounds what each step carried); a database without these tables is said and skipped.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare.agents.common import opencode_tables
from xshare.agents.common.counting import TokenCounter
from xshare.agents.kilo.tools import TOOLS
from xshare.measure.row import SessionRow

AGENT = "kilo"
NAME = "Kilo CLI"
FLAG = "kilo_db"
KIND = "database"
TITLE = "kilo_title"  # the row's unseen_calls key (agents/common/unseen.py): its title request, recorded nowhere
FORK = opencode_tables.Fork(NAME, "kilo", TOOLS, TITLE, title_may_be_lost=True)
# where it keeps its databases: its data folder, as OpenCode and its forks do
default_homes, describe, discover = FORK.default_homes, FORK.describe, FORK.discover


def read(path: Path, counter: TokenCounter, problems: Counter, ledgers: dict | None = None) -> list[SessionRow]:
    """Every session's row in one Kilo CLI database; problems are counted, never raised."""
    return opencode_tables.read(path, FORK, counter, problems, ledgers)
