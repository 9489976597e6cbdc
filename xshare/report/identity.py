"""Anonymous ids for the rows a team rolls up: which machine, and which person, wrote a row.

The machine id is random, created once in the state folder (so it is per user account on a machine),
and says nothing about the host: not its name, address or MAC. A person id cannot be had without
identifying someone, so it is what the user sets in $XSHARE_PERSON (a team's own pseudonym, e.g. a
hash it chose); without it a row carries none and the rollup counts its machine as one person.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator
from typing import TypedDict

from xshare.measure.row import SessionRow
from xshare.state.store import atomic_write, state_dir


def machine_id() -> str | None:
    """The id, created on first use; None when the state folder cannot be written."""
    path = state_dir() / "machine-id"
    try:
        found = path.read_text().strip()
        if found:
            return found
    except OSError:
        pass
    made = uuid.uuid4().hex
    try:
        atomic_write(path, made.encode())
    except OSError:
        return None
    return made


def person_id() -> str | None:
    return os.environ.get("XSHARE_PERSON", "").strip() or None


class Stamp(TypedDict, total=False):
    """What a rows file's row is stamped with (SessionRow's `machine` and `person`)."""

    machine: str | None
    person: str


def stamped(rows: Iterable[SessionRow]) -> Iterator[SessionRow]:
    """The rows with this machine's id and the person's (if set), for a rows file others may pool; one
    at a time, as they are written."""
    ids = Stamp(machine=machine_id())
    person = person_id()
    if person:
        ids["person"] = person
    return ({**row, **ids} for row in rows)
