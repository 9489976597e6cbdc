"""The protocol's (agents/protocol.py) answers of an agent whose files are read whole into ledgers, a
session's page from its own file alone (Hermes, Codex CLI, Gemini CLI, OpenCode, OpenClaw): no live state,
no subagent files beside a session's, every file read in detail as it is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from xshare.agents.common.counting import TokenCounter
from xshare.agents.protocol import Found, Gathered, Looking
from xshare.measure.row import SessionRow


class WholeFiles:
    """Mixed into an adapter that has `agent`, `discover`, `read`, `measure` and `find`."""

    agent: str

    def discover(self, given: list[str] | None) -> list[Path]:
        raise NotImplementedError

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        raise NotImplementedError

    def measure(self, looking: Looking) -> Gathered | None:
        raise NotImplementedError

    def has_records(self, place: str) -> bool:
        return bool(self.discover([place]))

    def detailed_files(self, looking: Looking) -> list[Path]:
        given = looking.given(self.agent)
        return [] if given == [] else self.discover(given)

    def read_detail(self, path: Path, looking: Looking, problems: Counter,
                    wanted: set[str] | None = None) -> list[Found] | None:
        found: Counter = Counter()
        ledgers: dict = {}
        rows = self.read(path, looking.counter.made(), found, ledgers)
        problems.update(found)
        return [Found(self.agent, row, found, path, ledgers[row["id"]]) for row in rows if row["id"] in ledgers]

    def listed(self, looking: Looking, problems: Counter) -> Iterator[Found]:
        for path in self.detailed_files(looking):
            yield from self.read_detail(path, looking, problems) or []

    def detail(self, found: Found, looking: Looking, problems: Counter) -> Found | None:
        if found.ledger is not None:
            return found
        again = self.find(found.row["id"], looking, problems, detail=True)  # type: ignore[attr-defined]
        return again if isinstance(again, Found) and again.ledger is not None else None

    def latest(self, looking: Looking, problems: Counter) -> Found | None:
        gathered = self.measure(looking)
        if gathered is None:
            return None
        active = [(when, row) for row in gathered.rows if (when := row.get("last_activity"))]
        return Found(self.agent, max(active, key=lambda pair: pair[0])[1]) if active else None

    def live(self, session_id: str, looking: Looking) -> SessionRow | None:
        return None

    def holds(self, path: Path, given: list[str] | None) -> str | None:
        return None  # its records are files it names itself: no output is written into them by a folder's name

    def measure_in_parts(self, looking: Looking, part_bytes: int) -> None:
        self.measure(looking)  # its cache is per file: any part of it is kept as it is written
