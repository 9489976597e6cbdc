"""Every agent's sessions on this machine, measured through the registry (sessions/registry.py): one
`Measured` for the report."""

from __future__ import annotations

from xshare.agents.common import progress
from xshare.agents.common.counting import how_counted
from xshare.agents.common.measured import Measured
from xshare.agents.common.packed import PackedRows
from xshare.agents.protocol import Looking
from xshare.sessions import registry


def measure(looking: Looking) -> Measured:
    """Every agent's sessions (or those under the folders and databases named; an agent given none is
    not looked for), all counted by `looking.counter`: an agent counts with the tokenizer the one before it
    ended with (an unusable vocabulary falls back to the estimate once, for the rest). Which counter counted
    the new texts, and why, is said once every agent was measured."""
    result = Measured(tokenizer=looking.choice)
    for adapter in registry.REGISTRY:
        if looking.given(adapter.agent) == []:
            continue  # not looked for (other agents' folders were named): its reader is not even imported
        progress.doing(f"reading {adapter.name} sessions")
        try:
            gathered = adapter.measure(looking)
        except KeyboardInterrupt:
            looking.counter.flush()  # what this process counted is kept, whichever agent it was reading
            raise
        if gathered is None:
            continue
        if isinstance(gathered.rows, PackedRows) and not result.rows:
            result.rows = gathered.rows
        else:
            result.rows += gathered.rows
        result.problems.update(gathered.problems)
        result.tokenizer = gathered.tokenizer
        result.looked_in += gathered.looked_in
        if gathered.found is not None:
            result.sources[adapter.name] = "read" if gathered.found else "not found"
    result.counted_by = how_counted(looking.counter)
    return result

