"""Two invented projects for the demo corpus: their files, git logs and command output.

todo-api (a FastAPI service; generated modules in xshare.demo.todo_api, the hand-written storage core here)
and tally (a Go command-line tool, xshare.demo.tally). FakeRepo answers the read-only commands the
sessions run against them.
"""

from __future__ import annotations

import json
import random
import re
import shlex

from xshare.demo.tally import BROKEN, MAIN, PARSE, README, REPORT, TALLY_LOG
from xshare.demo.tally_tests import PARSE_TEST, REPORT_TEST
from xshare.demo.todo_api import (
    APP_HEAD,
    DATES,
    MODELS_HEAD,
    RESOURCES,
    ROUTE_DOCS,
    py_docs,
    py_model,
    py_routes,
    py_store_methods,
)
from xshare.demo.todo_api_tests import API_TESTS_HEAD, STORE_TESTS_HEAD, TEST_DATES, py_api_tests, py_store_tests

GO_TEST_OK = ("?   \tgithub.com/example/tally\t[no test files]\n"
              "ok  \tgithub.com/example/tally/internal/entry\t0.006s\n"
              "ok  \tgithub.com/example/tally/internal/report\t0.004s\n")
TALLY_GIT_LOG = ["7d3a5c1 report: budgets per project (-budget)", "e48b9f2 entry: Check for overlaps (-check)",
                 "8e21b07 report: WriteJSON indents its output", "3c9f1e2 report: sort by hours, ties by key",
                 "b6d04a9 entry: #tags after the activity", "71fa2c8 main: -since and -until",
                 "d90e3b5 report: -by weekday", "2a7c6e1 entry: Filter by project and days",
                 "c4b81f0 testdata: November log", "5e09d37 report: tabwriter table with a total line",
                 "f02c6d5 initial commit"]
NOT_FOUND = '''

class NotFound(KeyError):
    """No row has that id; the API answers 404."""

    def __str__(self) -> str:
        table, row_id = self.args
        return f"no {table[:-1]} with id {row_id}"
'''
JSON_STORE = '''"""Persistence: every table in one JSON file, rewritten atomically after each change."""

import json
import os
import tempfile
import threading
from datetime import date
from pathlib import Path

from .dates import is_overdue
from .models import Comment, Member, Reminder, Todo, TodoList, ValidationError

SCHEMA_VERSION = 3
MODELS = {"todos": Todo, "lists": TodoList, "comments": Comment, "reminders": Reminder, "members": Member}
''' + NOT_FOUND + '''

class Store:
    """Every table in memory; each change is written back to `path` before it returns."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self.rows: dict[str, dict[int, object]] = {table: {} for table in MODELS}
        self.next_id = dict.fromkeys(MODELS, 1)
        if self.path.exists():
            self._load(json.loads(self.path.read_text()))

    def _load(self, data: dict | list) -> None:
        if isinstance(data, list):  # version 1 files held a bare list of todos
            data = {"version": 1, "todos": data}
        for table, model in MODELS.items():
            for raw in data.get(table, []):
                row = model.from_dict(raw)
                self.rows[table][row.id] = row
            stored = data.get("next_id", {}).get(table)
            self.next_id[table] = stored or max(self.rows[table], default=0) + 1

    def save(self) -> None:
        """Write to a temporary file beside `path`, then move it into place."""
        data = {"version": SCHEMA_VERSION, "next_id": self.next_id}
        data.update({table: [row.to_dict() for row in rows.values()] for table, rows in self.rows.items()})
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".todos-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2)
        os.replace(tmp, self.path)

    def _select(self, table: str, **equal) -> list:
        rows = [
            row
            for row in self.rows[table].values()
            if all(value is None or getattr(row, key) == value for key, value in equal.items())
        ]
        if table == "todos":
            return sorted(rows, key=lambda todo: (todo.due is None, todo.due, todo.id))
        return sorted(rows, key=lambda row: row.id)

    def _get(self, table: str, row_id: int):
        try:
            return self.rows[table][row_id]
        except KeyError:
            raise NotFound(table, row_id) from None

    def _insert(self, table: str, payload: dict):
        with self.lock:
            try:
                row = MODELS[table].from_dict({**payload, "id": self.next_id[table]})
            except KeyError as missing:
                raise ValidationError(missing.args[0], "is required") from None
            row.validate()
            self.rows[table][row.id] = row
            self.next_id[table] += 1
            self.save()
        return row

    def _replace(self, table: str, row):
        with self.lock:
            self.rows[table][row.id] = row
            self.save()
        return row

    def _delete(self, table: str, row_id: int) -> None:
        with self.lock:
            self._get(table, row_id)
            del self.rows[table][row_id]
            self.save()

'''
SQLITE_CORE = '''"""Persistence: one SQLite database with a table per model (stdlib sqlite3 only)."""

import json
import sqlite3
import threading
from dataclasses import fields
from datetime import date
from pathlib import Path

from .dates import is_overdue
from .models import Comment, Member, Reminder, Todo, TodoList, ValidationError

MODELS = {"todos": Todo, "lists": TodoList, "comments": Comment, "reminders": Reminder, "members": Member}
JSON_COLUMNS = {"tags"}
''' + NOT_FOUND + '''

def _encode(value):
    """A Python value as SQLite stores it: days as YYYY-MM-DD text."""
    if isinstance(value, date):
        return value.isoformat()
    return value


class Store:
    """Rows live in SQLite; every change is its own transaction."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        for table, model in MODELS.items():
            columns = ", ".join(f.name for f in fields(model) if f.name != "id")
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY AUTOINCREMENT, {columns})")

    def _row(self, table: str, record: sqlite3.Row):
        raw = {key: json.loads(record[key]) if key in JSON_COLUMNS else record[key] for key in record.keys()}
        return MODELS[table].from_dict(raw)

    def _values(self, row) -> dict:
        return {f.name: _encode(getattr(row, f.name)) for f in fields(row) if f.name != "id"}

    def _select(self, table: str, **equal) -> list:
        where = {key: _encode(value) for key, value in equal.items() if value is not None}
        sql = f"SELECT * FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(f"{key} = ?" for key in where)
        sql += " ORDER BY due IS NULL, due, id" if table == "todos" else " ORDER BY id"
        return [self._row(table, record) for record in self.db.execute(sql, list(where.values()))]

    def _get(self, table: str, row_id: int):
        record = self.db.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,)).fetchone()
        if record is None:
            raise NotFound(table, row_id)
        return self._row(table, record)

    def _insert(self, table: str, payload: dict):
        try:
            row = MODELS[table].from_dict({**payload, "id": 0})
        except KeyError as missing:
            raise ValidationError(missing.args[0], "is required") from None
        row.validate()
        values = self._values(row)
        sql = f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})"
        with self.lock, self.db:
            cursor = self.db.execute(sql, list(values.values()))
        return self._get(table, cursor.lastrowid)

    def _replace(self, table: str, row):
        values = self._values(row)
        assignments = ", ".join(f"{key} = ?" for key in values)
        with self.lock, self.db:
            self.db.execute(f"UPDATE {table} SET {assignments} WHERE id = ?", [*values.values(), row.id])
        return row

    def _delete(self, table: str, row_id: int) -> None:
        with self.lock, self.db:
            if self.db.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,)).rowcount == 0:
                raise NotFound(table, row_id)

'''
STORE_VIEWS = '''
    # --- views over todos ---------------------------------------------------------------------

    def overdue(self, today: date) -> list[Todo]:
        """Open todos due before `today`, the most overdue first."""
        return [todo for todo in self.list_todos(done=False) if is_overdue(todo.due, today)]

    def search(self, text: str) -> list[Todo]:
        """Todos whose title or notes contain `text`, ignoring case."""
        needle = text.casefold()
        return [todo for todo in self.list_todos() if needle in f"{todo.title}\\n{todo.notes}".casefold()]

    def stats(self, today: date) -> dict:
        """Counts for the dashboard."""
        todos = self.list_todos()
        return {
            "todos": len(todos),
            "done": sum(todo.done for todo in todos),
            "overdue": len(self.overdue(today)),
            "lists": len(self.list_lists(archived=False)),
        }
'''
# the feature session's MultiEdit on storage.py (a `tag` filter); the SQLite rewrite keeps it
STORE_TAG_EDITS = [
    ('"""Todos matching the given values (soonest due first, undated last); None matches anything."""',
     '"""Todos matching the given values and carrying `tag` (soonest due first); None matches anything."""'),
    ("def list_todos(self, done: bool | None = None, list_id: int | None = None) -> list[Todo]:",
     "def list_todos(self, done: bool | None = None, list_id: int | None = None, tag: str | None = None)"
     " -> list[Todo]:"),
    ('        return self._select("todos", done=done, list_id=list_id)',
     '        rows = self._select("todos", done=done, list_id=list_id)\n'
     "        return [todo for todo in rows if tag is None or tag in todo.tags]"),
]
SQLITE_STORE = SQLITE_CORE + "".join(py_store_methods(*r) for r in RESOURCES) + STORE_VIEWS.lstrip("\n")
for _old, _new in STORE_TAG_EDITS:
    SQLITE_STORE = SQLITE_STORE.replace(_old, _new, 1)
CLAUDE_MD = """# todo-api

FastAPI service for todos, lists, comments, reminders and the members who own lists. Python 3.12; no
database server.

- Run it with `uvicorn todo_api.app:app --reload`; the HTTP reference is docs/api.md.
- Test with `pytest -q`, lint with `ruff check .`; both pass before every commit.
- Models (todo_api/models.py) validate themselves; storage and routes never re-check fields.
- Due dates are calendar days (YYYY-MM-DD) in the API and on disk; never shift them between time zones.
- Storage (todo_api/storage.py) keeps its method names stable: routes and tests call them directly.
- Conventional commits (`fix:`, `feat:`, `docs:`), one topic per commit.
"""
DOCS_HEAD = """# todo-api HTTP reference

Base URL `http://localhost:8000`. Bodies are JSON. Days are `YYYY-MM-DD` calendar days, the day the
client meant; the server never converts them between time zones. Every error body is `{"detail": "..."}`;
a 422 also names the `field` that broke its rule.

## Views over todos

| Method | Path | Answers |
|--------|------|---------|
| `GET` | `/todos/overdue` | open todos past their due day, each with a `label` such as `2 days late` |
| `GET` | `/todos/search?q=` | todos whose title or notes contain `q`, ignoring case; `limit` (20) |
| `GET` | `/stats` | counts: `todos`, `done`, `overdue`, `lists` (not archived) |
| `GET` | `/health` | `{"status": "ok", "version": "0.3.1"}` |

"""
PYPROJECT = """[project]
name = "todo-api"
version = "0.3.1"
requires-python = ">=3.12"
dependencies = ["fastapi>=0.115", "uvicorn>=0.32"]

[project.optional-dependencies]
test = ["pytest>=8", "httpx>=0.27"]

[tool.ruff]
line-length = 120

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
def service_files(store_core: str, store_views: str, docs_head: str) -> dict[str, str]:
    """The generated modules, tests and API reference, around the given storage core and docs intro."""
    every = {kind: "".join(make(*r) for r in RESOURCES)
             for kind, make in [("model", py_model), ("store", py_store_methods), ("route", py_routes),
                                ("api", py_api_tests), ("storetest", py_store_tests), ("docs", py_docs)]}
    return {"todo_api/dates.py": DATES, "todo_api/models.py": (MODELS_HEAD + every["model"]).rstrip() + "\n",
            "todo_api/storage.py": store_core + every["store"] + store_views.lstrip("\n"),
            "todo_api/app.py": (APP_HEAD + every["route"]).rstrip() + "\n",
            "tests/test_api.py": (API_TESTS_HEAD + every["api"]).rstrip() + "\n",
            "tests/test_storage.py": (STORE_TESTS_HEAD + every["storetest"]).rstrip() + "\n",
            "tests/test_dates.py": TEST_DATES, "docs/api.md": (docs_head + every["docs"]).rstrip() + "\n"}


TITLES = ("buy oat milk", "call the dentist", "fix bike light", "plan team offsite", "pay invoice 114",
          "review slides", "pay rent", "file taxes", "book flights", "renew passport", "water plants")
TODO_FILES = {"CLAUDE.md": CLAUDE_MD, "pyproject.toml": PYPROJECT,
              "todo_api/__init__.py": '"""A small todo-list HTTP API."""\n\n__version__ = "0.3.1"\n',
              **service_files(JSON_STORE, STORE_VIEWS, DOCS_HEAD)}
TODO_FILES["tests/fixtures/todos.json"] = json.dumps([  # a version 1 file: a bare list of todos
    {"id": i, "title": TITLES[i % 11], "done": i % 3 == 0,
     "due": f"2026-{10 + i % 3}-{1 + i * 7 % 28:02d}" if i % 4 else None} for i in range(1, 121)
], indent=2) + "\n"
_SUBJECTS = ["initial commit", "models: Todo dataclass", "storage: JSON file store",
             "api: list, create and patch todos", "tests: cover the todo routes"]
for _cls, _table, *_ in RESOURCES[1:]:
    _SUBJECTS += [f"models: {_cls} with validation", f"storage: {_table} table", f"api: /{_table} routes",
                  f"tests: {_table} routes and storage", f"docs: {_table} in api.md"]
_SUBJECTS += ["storage: atomic writes through a temporary file", "storage: never reuse ids",
              "dates: weekday names and today/tomorrow", "dates: business days skip holidays",
              "api: /todos/overdue with due labels", "api: /todos/search", "api: /stats for the dashboard",
              "dates: accept ISO timestamps from the mobile client", "tests: cover overdue", "chore: release 0.3.1"]
_rng = random.Random("todo-api git log")
TODO_LOG = [f"{'e07f6c2' if 'mobile' in s else format(_rng.getrandbits(28), '07x')} {s}"
            for s in reversed(_SUBJECTS)]
DOCSTRINGS = ROUTE_DOCS


class FakeRepo:
    """A fake repository: files by relative path, a git log, and answers to read-only commands."""

    def __init__(self, root: str, files: dict[str, str], log: list[str]) -> None:
        self.root, self.files, self.log = root, dict(files), list(log)

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def line_of(self, rel: str, needle: str) -> int:
        """The 1-based number of the first line of `rel` containing `needle`."""
        return next(n for n, s in enumerate(self.files[rel].split("\n"), 1) if needle in s)

    def grep(self, pattern: str, under: str = "") -> dict[str, list[tuple[int, str]]]:
        rx = re.compile(pattern)
        hits = {self.abs(f): [(n, s) for n, s in enumerate(c.split("\n"), 1) if rx.search(s)]
                for f, c in sorted(self.files.items()) if f.startswith(under)}
        return {f: h for f, h in hits.items() if h}

    def sh(self, cmd: str) -> str:
        a = shlex.split(cmd.split(" && ")[-1])
        args = [x for x in a[1:] if not x.startswith("-")]
        if a[0] == "cat":
            return "".join(self.files[f] for f in args)
        if a[0] == "sed":  # sed -n 'A,Bp' FILE
            lo, hi = (int(x) for x in args[0].rstrip("p").split(","))
            return "\n".join(self.files[args[1]].split("\n")[lo - 1: hi]) + "\n"
        if a[0] in ("rg", "grep"):
            hits = self.grep(args[0], args[1].lstrip(".") if len(args) > 1 else "")
            return "".join(f"{f[len(self.root) + 1:]}:{n}:{s}\n" for f, h in hits.items() for n, s in h)
        if a[0] == "ls":
            d = args[0].rstrip("/") + "/" if args else ""
            return "\n".join(sorted({f[len(d):].split("/")[0] for f in self.files if f.startswith(d)})) + "\n"
        if a[0] == "wc":
            n = [self.files[f].count("\n") for f in args]
            return "".join(f"{c:>4} {f}\n" for c, f in zip(n, args, strict=True)) + f"{sum(n):>4} total\n"
        if a[0] in ("pytest", "go"):
            return self.pytest() if a[0] == "pytest" else GO_TEST_OK if a[1] == "test" else ""
        return "\n".join(self.log[: int(a[3].lstrip("-"))]) + "\n"  # git log --oneline -N

    def pytest(self, failed: dict[str, str] | None = None) -> str:
        """`pytest -q` output: a dot per test (per parametrized case), the failures, the summary."""
        tests = []
        for f, c in sorted(self.files.items()):
            if f.startswith("tests/test_"):
                for params, name in re.findall(r"(@pytest\.mark\.parametrize\(.*?\n\)\n)?def (test_\w+)", c, re.S):
                    tests += [(f, name)] * max(len(re.findall(r"^        [(\"{]", params, re.M)), 1)
        failed = failed or {}
        dots = "".join("F" if t in failed else "." for _, t in tests)
        out = "".join(f"{dots[i:i + 70]:<72}[{min(i + 70, len(dots)) * 100 // len(dots):>3}%]\n"
                      for i in range(0, len(dots), 70))
        if failed:
            out += "=========================== short test summary info ============================\n"
            out += "".join(f"FAILED {f}::{t} - {failed[t]}\n" for f, t in dict.fromkeys(tests) if t in failed)
            n = dots.count("F")
            return out + f"{n} failed, {len(tests) - n} passed in 1.{len(tests) % 97:02d}s\n"
        return out + f"{len(tests)} passed in 1.{len(tests) % 89:02d}s\n"


TALLY_FILES = {"go.mod": "module github.com/example/tally\n\ngo 1.23\n", "README.md": README, "main.go": MAIN,
               "internal/entry/parse.go": PARSE, "internal/entry/parse_test.go": PARSE_TEST,
               "internal/report/report.go": REPORT, "internal/report/report_test.go": REPORT_TEST,
               "testdata/nov.log": "\n".join(TALLY_LOG[:4] + [BROKEN] + TALLY_LOG[5:]) + "\n"}


def todo_repo() -> FakeRepo:
    return FakeRepo("/home/dev/todo-api", TODO_FILES, TODO_LOG)


def tally_repo() -> FakeRepo:
    return FakeRepo("/home/dev/tally", TALLY_FILES, TALLY_GIT_LOG)
