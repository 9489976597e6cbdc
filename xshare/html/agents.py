"""The HTML page of a session read into a ledger by its adapter (Hermes, Codex, Gemini CLI, OpenCode,
OpenClaw): the same page as Claude Code's, from the same detailed ledger. The four record the bill per call,
so every section has its data; Hermes records it per session, so its page says it cannot have the cache
sections. Also their sessions' pages for the index."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from xshare.agents.common import counting as session_counter
from xshare.agents.protocol import Found, Looking
from xshare.html.analysis import Linked, from_ledger
from xshare.html.session_page import render_session
from xshare.html.write import page_path, shown_path, unique_page
from xshare.measure.prices import PriceTable
from xshare.sessions.registry import BY_AGENT, REGISTRY
from xshare.state.store import atomic_write


def write_found_page(found: Found, out: Path | None = None, index_href: str | None = None,
                     prices: PriceTable | None = None) -> Path:
    """The page of a session found with its ledger, written to `out` (default: html/ in the state folder),
    with its dollars at `prices`."""
    adapter = BY_AGENT[found.agent]
    assert found.path is not None, "a session found for its page was found in a file"
    current = session_counter.current()
    note = current.choice.note if current else ""
    data = from_ledger(found.ledger, found.row, origin=f"{adapter.origin_label}{shown_path(found.path)}",
                       tokenizer_note=note, problems=dict(found.problems), turn_markers=adapter.turn_markers)
    data.index_href = index_href
    target = out or page_path(found.row["id"])
    atomic_write(target, render_session(data, prices=prices).encode("utf-8"))
    return target


def ledger_pages(looking: Looking, folder: Path, problems: Counter, taken: set[str] | None = None,
                 prices: PriceTable | None = None) -> list[Linked]:
    """Every session of the agents read into a ledger (all but those with transcripts of their own, whose
    pages html/write.py writes), each page written into `folder` under a name not `taken` (a name it takes
    is added); the index's entries."""
    taken = set() if taken is None else taken
    entries = []
    counter = session_counter.use(looking.choice)  # this process's, passed to every reader
    for adapter in REGISTRY:
        if adapter.kind == "transcripts" or looking.given(adapter.agent) == []:
            continue
        for path in adapter.discover(looking.given(adapter.agent)):
            found: Counter = Counter()
            ledgers: dict = {}
            rows = adapter.read(path, counter, found, ledgers)
            problems.update(found)
            for row in rows:
                page = unique_page(folder, row["id"], taken)
                write_found_page(Found(adapter.agent, row, found, path, ledgers.get(row["id"])), page, "index.html",
                                 prices)
                entries.append(Linked(row, page.name))
    return entries
