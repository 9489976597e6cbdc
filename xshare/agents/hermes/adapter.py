"""Hermes as every command sees it (agents/protocol.py): its state.db files, opened read-only, many
sessions a file, measured with the database cache."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from xshare.agents.common.counting import TokenCounter
from xshare.agents.common.file_agent import only_one, read_one
from xshare.agents.common.whole_files import WholeFiles
from xshare.agents.hermes import state_db as hermes
from xshare.agents.hermes.recognise import recognises
from xshare.agents.hermes.rows_cache import measure_hermes
from xshare.agents.protocol import Adapter, Ambiguous, Found, Gathered, Looking
from xshare.measure.row import SessionRow


class Hermes(WholeFiles):
    agent, name, flag = hermes.AGENT, "Hermes", "hermes_db"
    origin_label, turn_markers = "Hermes ", False  # its records mark no turn (its ledger spreads the bill)
    tools = None  # its tool names are measure/classify.py's

    def default_homes(self) -> list[Path]:
        return hermes.default_databases()

    def databases(self, given: list[str] | None) -> list[Path]:
        return [Path(path).expanduser() for path in given] if given is not None else hermes.default_databases()

    def describe(self, given: list[str] | None) -> list[str]:
        if given is None:
            return ["Hermes state.db in $HERMES_HOME or ~/.hermes, and ~/.hermes/profiles/*"]
        return [f"Hermes state.db at {path}" for path in self.databases(given)]

    def discover(self, given: list[str] | None) -> list[Path]:
        return [path for path in self.databases(given) if path.is_file()]

    def unread(self, given: list[str] | None) -> list[str]:
        return []

    def recognises(self, path: Path) -> bool:
        return recognises(path)

    def read(self, path: Path, counter: TokenCounter, problems: Counter,
             ledgers: dict | None = None) -> list[SessionRow]:
        rows = hermes.read_database(path, counter, problems, ledgers=ledgers)
        counter.flush()
        return rows

    def measure(self, looking: Looking) -> Gathered:
        given = looking.given(self.agent)
        databases = self.databases(given)
        rows: list[SessionRow] = []
        problems: Counter = Counter()
        if databases:
            rows, problems = measure_hermes(databases, looking)
        found = None if given == [] else any(path.is_file() for path in databases)
        return Gathered(rows, problems, looking.counter.choice, found, self.describe(given))

    def session_ids(self, looking: Looking) -> list[str]:
        rows, _ = measure_hermes(self.discover(looking.given(self.agent)), replace(looking, since=None))
        return [row["id"] for row in rows]

    def find(self, session_id: str, looking: Looking, problems: Counter,
             detail: bool = False) -> Found | Ambiguous | None:
        """Every database is asked (read-only): two holding the id are refused, not one picked; none named
        (the demo): not looked for."""
        given = looking.given(self.agent)
        if given == []:
            return None
        held: list[Found] = []
        for path in self.databases(given):
            if not path.is_file():
                problems[f"Hermes database {path} not found"] += 1
                continue
            found: Counter = Counter()
            ledgers: dict | None = {} if detail else None
            current = looking.counter.made()
            rows = hermes.read_database(path, current, found, only=session_id, ledgers=ledgers)
            current.flush()
            problems.update(found)
            if rows:
                held.append(Found(self.agent, rows[0], found, path, (ledgers or {}).get(session_id)))
        return only_one(session_id, held)

    def project_names(self, given: list[str] | None, session_ids: list[str]) -> dict[str, str]:
        return {}  # its database records no project folder

    def find_path(self, path: Path, looking: Looking, problems: Counter,
                  detail: bool = False) -> Found | Ambiguous | None:
        return read_one(self, path, looking, problems)


ADAPTER = Hermes()
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
