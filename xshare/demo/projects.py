"""Two invented projects for the demo corpus: their files, git logs and command output."""

from __future__ import annotations

import json
import re
import shlex

TODO_FILES = {
    "CLAUDE.md": "# todo-api\n- Test with `pytest -q`, lint with `ruff check .`.\n"
                 "- Due dates are calendar days (YYYY-MM-DD) in the API and on disk.\n",
    "todo_api/__init__.py": '"""A small todo-list HTTP API."""\n\n__version__ = "0.3.1"\n',
    "todo_api/models.py": """from dataclasses import dataclass
from datetime import date


@dataclass
class Todo:
    id: int
    title: str
    done: bool = False
    due: date | None = None

    def to_dict(self) -> dict:
        due = self.due and self.due.isoformat()
        return {"id": self.id, "title": self.title, "done": self.done, "due": due}
""",
    "todo_api/dates.py": '''from datetime import date, datetime


def parse_due(value: str | None) -> date | None:
    """Accept '2026-11-04' or an ISO timestamp and return the calendar day."""
    if not value:
        return None
    if len(value) == 10:
        return date.fromisoformat(value)
    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return stamp.astimezone().date()


def is_overdue(due: date | None, today: date) -> bool:
    return due is not None and due < today
''',
    "todo_api/storage.py": """import json
from pathlib import Path

from .dates import parse_due
from .models import Todo


class Store:
    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.items: dict[int, Todo] = {}
        for raw in json.loads(self.path.read_text()) if self.path.exists() else []:
            self.items[raw["id"]] = Todo(raw["id"], raw["title"], raw["done"], parse_due(raw["due"]))

    def all(self) -> list[Todo]:
        return sorted(self.items.values(), key=lambda t: (t.due is None, t.due, t.id))

    def get(self, todo_id: int) -> Todo | None:
        return self.items.get(todo_id)

    def add(self, title: str, due=None) -> Todo:
        todo = Todo(len(self.items) + 1, title, due=due)
        self.items[todo.id] = todo
        self.save()
        return todo

    def save(self) -> None:
        self.path.write_text(json.dumps([t.to_dict() for t in self.items.values()], indent=2))
""",
    "todo_api/app.py": """from fastapi import FastAPI, HTTPException

from .dates import parse_due
from .storage import Store

app = FastAPI(title="todo-api")
store = Store("todos.json")


@app.get("/todos")
def list_todos(done: bool | None = None) -> list[dict]:
    return [t.to_dict() for t in store.all() if done is None or t.done == done]


@app.post("/todos", status_code=201)
def create_todo(payload: dict) -> dict:
    return store.add(payload["title"], due=parse_due(payload.get("due"))).to_dict()


@app.patch("/todos/{todo_id}")
def update_todo(todo_id: int, payload: dict) -> dict:
    if (todo := store.get(todo_id)) is None:
        raise HTTPException(404, "todo not found")
    todo.done = bool(payload.get("done", todo.done))
    store.save()
    return todo.to_dict()
""",
    "tests/test_dates.py": """from datetime import date

from todo_api.dates import is_overdue, parse_due


def test_plain_day():
    assert parse_due("2026-11-04") == date(2026, 11, 4)


def test_overdue():
    assert is_overdue(date(2026, 11, 1), date(2026, 11, 2))
""",
    "tests/test_api.py": """from fastapi.testclient import TestClient

from todo_api.app import app

client = TestClient(app)


def test_create_and_list():
    assert client.post("/todos", json={"title": "buy oat milk"}).status_code == 201
    assert any(t["title"] == "buy oat milk" for t in client.get("/todos").json())


def test_missing_todo():
    assert client.patch("/todos/999", json={"done": True}).status_code == 404
""",
}
TALLY_FILES = {
    "main.go": """package main

import (
\t"fmt"
\t"os"

\t"github.com/example/tally/internal/entry"
\t"github.com/example/tally/internal/report"
)

func main() {
\tentries, err := entry.ParseFile(os.Args[1])
\tif err != nil {
\t\tfmt.Fprintln(os.Stderr, "tally:", err)
\t\tos.Exit(1)
\t}
\tfmt.Print(report.ByProject(entries))
}
""",
    "internal/entry/parse.go": """package entry

import (
\t"bufio"
\t"os"
\t"strings"
\t"time"
)

// Entry is one log line: "2026-11-02 09:00-10:30 project note...".
type Entry struct {
\tProject, Note string
\tStart, End    time.Time
}

func ParseLine(line string) (Entry, error) {
\tf := strings.Fields(line)
\tspan := strings.SplitN(f[1], "-", 2)
\tstart, err := time.Parse("2006-01-02 15:04", f[0]+" "+span[0])
\tif err != nil {
\t\treturn Entry{}, err
\t}
\tend, err := time.Parse("2006-01-02 15:04", f[0]+" "+span[1])
\treturn Entry{Project: f[2], Note: strings.Join(f[3:], " "), Start: start, End: end}, err
}

func ParseFile(path string) (out []Entry, err error) {
\tfh, err := os.Open(path)
\tif err != nil {
\t\treturn nil, err
\t}
\tdefer fh.Close()
\tfor sc := bufio.NewScanner(fh); sc.Scan(); {
\t\te, err := ParseLine(sc.Text())
\t\tif err != nil {
\t\t\treturn nil, err
\t\t}
\t\tout = append(out, e)
\t}
\treturn out, nil
}
""",
    "internal/report/report.go": """package report

import (
\t"fmt"
\t"sort"
\t"strings"
\t"time"

\t"github.com/example/tally/internal/entry"
)

// ByProject sums the time spent per project, largest first.
func ByProject(entries []entry.Entry) string {
\ttotal := map[string]time.Duration{}
\tnames := []string{}
\tfor _, e := range entries {
\t\tif _, seen := total[e.Project]; !seen {
\t\t\tnames = append(names, e.Project)
\t\t}
\t\ttotal[e.Project] += e.End.Sub(e.Start)
\t}
\tsort.Slice(names, func(i, j int) bool { return total[names[i]] > total[names[j]] })
\tvar b strings.Builder
\tfor _, n := range names {
\t\tfmt.Fprintf(&b, "%-12s %6.2fh\\n", n, total[n].Hours())
\t}
\treturn b.String()
}
""",
}
TITLES = ("buy oat milk", "call the dentist", "fix bike light", "plan team offsite", "pay invoice 114",
           "review slides", "pay rent", "file taxes", "book flights", "renew passport", "water plants")
TODO_FILES["tests/fixtures/todos.json"] = json.dumps([
    {"id": i, "title": TITLES[i % 11], "done": i % 3 == 0,
     "due": f"2026-{10 + i % 3}-{1 + i * 7 % 28:02d}" if i % 4 else None} for i in range(1, 151)
], indent=2) + "\n"
TALLY_LOG = [f"2026-11-{1 + i // 6:02d} {8 + i % 6 * 2:02d}:{i * 15 % 60:02d}"
        f"-{9 + i % 6 * 2:02d}:{i * 25 % 60:02d}"
        f" {('tally', 'todo-api', 'infra', 'reading')[i * 7 % 4]}"
        f" {('standup', 'code review', 'parser work', 'release prep', 'docs', 'bug triage')[i % 6]}"
        for i in range(180)]
# one line without its end time: the malformed entry the legacy session hunts for
TALLY_FILES["testdata/nov.log"] = "\n".join(TALLY_LOG[:4] + ["2026-11-01 17:30 tally release prep"] + TALLY_LOG[5:])
TALLY_FILES["testdata/nov.log"] += "\n"
TODO_LOG = ["9d41c07 storage: sort by due day, then id", "5be2a13 api: PATCH marks todos done",
             "e07f6c2 dates: accept ISO timestamps from the mobile client", "31a8d9e tests: cover overdue",
             "c2f4b18 api: 404 for unknown todo ids", "7a9e5d0 storage: JSON file store",
             "0b6c3f4 models: Todo dataclass", "4e1d2a9 initial commit"]
GO_TEST_OK = ("?   \tgithub.com/example/tally\t[no test files]\n"
          "ok  \tgithub.com/example/tally/internal/entry\t0.004s\n"
          "ok  \tgithub.com/example/tally/internal/report\t0.003s\n")
DOCSTRINGS = {"to_dict": "JSON-ready view of the todo.", "is_overdue": "True when the due day is before today.",
         "all": "Every todo, soonest due first.", "get": "The todo with this id, or None.",
         "add": "Create a todo and return it.", "save": "Write one todo back.", "list_todos": "List todos.",
         "create_todo": "Create a todo from the request body.", "update_todo": "Mark a todo done or not."}


class FakeRepo:
    """A fake repository: files by relative path, a git log, and answers to read-only commands."""

    def __init__(self, root: str, files: dict[str, str], log: list[str]) -> None:
        self.root, self.files, self.log = root, dict(files), log

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

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
        tests = [(f, t) for f, c in sorted(self.files.items()) if f.startswith("tests/test_")
                 for t in re.findall(r"^def (test_\w+)", c, re.M)]
        failed = failed or {}
        out = "".join("F" if t in failed else "." for _, t in tests).ljust(72) + " [100%]\n"
        if failed:
            out += "=========================== short test summary info ============================\n"
            out += "".join(f"FAILED {f}::{t} - {failed[t]}\n" for f, t in tests if t in failed)
            return out + f"{len(failed)} failed, {len(tests) - len(failed)} passed in 0.61s\n"
        return out + f"{len(tests)} passed in 0.{40 + len(tests)}s\n"



SQLITE_STORE = '''import json
import sqlite3

from .dates import parse_due
from .models import Todo


class Store:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS todos (id INTEGER PRIMARY KEY, title, done, due, tags)")

    def _todo(self, r: tuple) -> Todo:
        return Todo(r[0], r[1], bool(r[2]), parse_due(r[3]), json.loads(r[4]))

    def all(self) -> list[Todo]:
        return [self._todo(r) for r in self.db.execute("SELECT * FROM todos ORDER BY due IS NULL, due, id")]

    def get(self, todo_id: int) -> Todo | None:
        r = self.db.execute("SELECT * FROM todos WHERE id = ?", (todo_id,)).fetchone()
        return r and self._todo(r)

    def add(self, title: str, due=None, tags=()) -> Todo:
        row = (title, due and due.isoformat(), json.dumps(list(tags)))
        cur = self.db.execute("INSERT INTO todos (title, done, due, tags) VALUES (?, 0, ?, ?)", row)
        self.db.commit()
        return Todo(cur.lastrowid, title, due=due, tags=list(tags))

    def save(self, todo: Todo) -> None:
        self.db.execute("UPDATE todos SET done = ? WHERE id = ?", (int(todo.done), todo.id))
        self.db.commit()
'''
