"""The demo's three invented sessions on the todo-api project: a bug hunt, a feature, a long session."""

from __future__ import annotations

import json
import re
from pathlib import Path

from xshare.demo.projects import SQLITE_STORE, STORE_TAG_EDITS, TODO_LOG, FakeRepo
from xshare.demo.steps import demo_time, docstring_steps, play
from xshare.demo.writer import TranscriptWriter, text, thinking, tool_use


def bug_hunt(base: Path, p: FakeRepo, sid: str) -> None:
    """Exploration-heavy: Read/Grep/Glob, read-only Bash, parallel reads, an Explore subagent, a small fix."""
    w = TranscriptWriter(sid, p.root, start=demo_time(3, 9, 12), slug="quiet-tracing-heron")
    w.hook_success("Branch main. 0 uncommitted files. Last CI run on main: passed.")
    w.user('Mobile bug: a todo created with due "2026-11-04T23:30:00-05:00" is listed as due 2026-11-05. '
           "Find out why before changing anything.")
    w.file_history_snapshot()
    dates, bad = "todo_api/dates.py", "    return stamp.astimezone().date()"
    at, top = p.line_of(dates, bad), p.line_of(dates, "def parse_due")
    history = "".join(s + "\n" for s in TODO_LOG if " dates:" in s)
    show = (f"commit e07f6c2\nAuthor: Dana Whitfield <dana@example.org>\nDate:   Wed Oct 21 16:02:11 2026 +0200\n\n"
            "    dates: accept ISO timestamps from the mobile client\n\n    The iOS app sends due as a full "
            "timestamp with the device's offset.\n\ndiff --git a/todo_api/dates.py b/todo_api/dates.py\n"
            "index 3b1f0c2..8d7e4a9 100644\n--- a/todo_api/dates.py\n+++ b/todo_api/dates.py\n@@ -1,6 +1,6 @@\n"
            ' """Due days: parsing what clients send, and the calendar arithmetic reminders need."""\n \n'
            "-from datetime import date, timedelta\n+from datetime import date, datetime, timedelta\n \n"
            f' WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")\n'
            f"@@ -{at - 4},4 +{at - 4},7 @@ def parse_due(value: str | None, today: date | None = None) -> date | "
            "None:\n         return next_weekday(today, WEEKDAYS.index(word))\n-    return date.fromisoformat(value)\n"
            "+    if len(value) == 10:\n+        return date.fromisoformat(value)\n"
            '+    stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))\n' f"+{bad}\n")
    play(w, p, [
        ("glob", "**/*.py", "Let me get the layout first."),
        ("bash", "git log --oneline -12", "Recent history"),
        ("read", "todo_api/app.py", None),
        ("grep", "parse_due", "Where is the due value parsed?"),
        ("read", dates, None),
        ("grep", r"astimezone|tzinfo|utcnow", None, "content"),
        ("read", "todo_api/models.py", "Todo.from_dict parses due on every load and create; checking that path."),
        ("read", "todo_api/storage.py", None, 1, 90),
        ("bash", "rg -n due tests/", "Find due-date tests"),
        ("read", "tests/test_dates.py", None),
        ("read", "tests/fixtures/todos.json", "The fixtures might hold timestamp dues."),
        ("bash", f"cd {p.root} && git log --oneline -3 -- {dates}", "History of dates.py", history),
        ("bash", "git show e07f6c2 -- todo_api/dates.py", "The commit that added timestamps", show),
        ("bash", f"sed -n '{top},{at}p' {dates}", "Show parse_due"),
        ("bash", "ls tests", "List tests"),
    ], hooks=True)
    a, b = w.call(text("Checking what the API reference promises, and the project notes."),
                  tool_use("Read", {"file_path": p.abs("docs/api.md"), "limit": 60}),
                  tool_use("Read", {"file_path": p.abs("CLAUDE.md")}))
    w.read_result(b, p.abs("CLAUDE.md"), p.files["CLAUDE.md"])  # results may come back out of order
    w.read_result(a, p.abs("docs/api.md"), p.files["docs/api.md"], limit=60)
    ask = "List every place in /home/dev/todo-api that turns a due value into a date, with file:line."
    task = {"description": "Find due-date conversions", "prompt": ask, "subagent_type": "Explore"}
    tid = w.use("Task", task, say="An Explore agent can sweep for other conversions while I reproduce.")
    sub = TranscriptWriter(sid, p.root, start=w.now, sidechain=True, agent_id="a" + w.hex_id(16),
                           model="claude-haiku-4-5-20251001", system_tokens=9_500, slug=w.slug)
    sub.user(ask)
    m, s = "todo_api/models.py", "todo_api/storage.py"
    found = (f"- {dates}:{at} `stamp.astimezone().date()` uses the server's zone (the only zone conversion)\n"
             f"- {dates}:{at - 2} `date.fromisoformat` for plain days\n"
             f"- {m}:{p.line_of(m, 'due=parse_due')} `Todo.from_dict` (create, update and every load)\n"
             f"- {m}:{p.line_of(m, 'remind_on=parse_due')} `Reminder.from_dict`, same path\n"
             f"- {s}:{p.line_of(s, 'model.from_dict(raw)')} loads stored days through from_dict")
    play(sub, p, [
        ("grep", r"parse_due|fromisoformat|astimezone", None, "content"), ("read", s, None),
        ("bash", "grep -rn fromisoformat todo_api", "Find ISO parsing"), ("read", m, None, 1, 80),
        ("glob", "**/*.toml", None), ("bash", "grep -rn TZ .", "Look for TZ settings", ""), ("say", found, None),
    ])
    first = next(r for r in sub.rows if isinstance(r, dict) and r["type"] == "assistant")
    shown = {k: first[k] for k in ("type", "timestamp", "message", "requestId", "uuid")}
    w.progress({"message": shown, "normalizedMessages": [], "type": "agent_progress", "prompt": ask,
                "agentId": sub.agent_id}, tid)
    w.task_result(tid, sub, found, prompt=ask, agent_type="Explore")
    sub.write(base / sid / "subagents" / f"agent-{sub.agent_id}.jsonl")
    meta = json.dumps({"agentType": "Explore", "description": task["description"], "toolUseId": tid})
    (base / sid / "subagents" / f"agent-{sub.agent_id}.meta.json").write_text(meta, encoding="utf-8")
    repro = ("TZ=Asia/Tokyo python -c 'from todo_api.dates import parse_due; "
             "print(parse_due(\"2026-11-04T23:30-05:00\"))'")
    play(w, p, [
        ("bash", repro, "Reproduce with a far-east server zone", "2026-11-05\n"),
        ("bash", f"git blame -L {at},{at} {dates}", "Who added the conversion",
         f"e07f6c2 (Dana Whitfield 2026-10-21 16:02:11 +0200 {at}) {bad}\n"),
        ("say", f"`parse_due` converts a timestamp to the server's zone before taking the day ({dates}:{at}, "
                "e07f6c2), so 23:30 at -05:00 becomes the next day on any server east of the client. CLAUDE.md "
                "and docs/api.md both say days are never shifted between zones; `stamp.date()` keeps the "
                "client's day.", None),
    ])
    w.turn_duration()
    w.user("Good find. Fix it and add a regression test.")
    w.file_history_snapshot()
    play(w, p, [
        ("edit", dates, None, bad, "    return stamp.date()  # the client's calendar day, whatever the server zone"),
        ("edit", "tests/test_dates.py", "Adding the regression test.", "def test_overdue():",
         'def test_timestamp_keeps_the_client_day():\n    assert parse_due("2026-11-04T23:30:00-05:00") == '
         "date(2026, 11, 4)\n\n\ndef test_overdue():"),
        ("bash", "pytest -q", "Run the tests", None),
        ("say", "Fixed: `parse_due` keeps the client's calendar day, with a regression test.", None),
    ])
    w.turn_duration()
    w.last_prompt("Good find. Fix it and add a regression test.")
    w.ai_title("Due dates shift a day for negative UTC offsets")
    w.write(base / f"{sid}.jsonl")
    p.log.insert(0, "3f1d8a2 fix: due timestamps keep the client's calendar day")  # committed by hand later


def feature(base: Path, p: FakeRepo, sid: str) -> None:
    """Edit-heavy: Edit/MultiEdit/Write, a failing then passing pytest, an Edit error, skills, reminders."""
    w = TranscriptWriter(sid, p.root, start=demo_time(5, 14, 3), slug="brisk-folding-otter")
    w.hook_success("Branch main. 0 uncommitted files. Python 3.12.7 in .venv.")
    w.skill_listing({"commit": "Write a conventional commit for the staged changes",
                     "test-runner": "Run the test suite and summarise failures"})
    w.user('Add tags: POST accepts "tags", GET /todos?tag=x filters, tags are stored. With tests.',
           reminder="The user opened the file /home/dev/todo-api/todo_api/models.py in the IDE.")
    w.file_history_snapshot()
    w.nested_memory(p.abs("CLAUDE.md"), p.files["CLAUDE.md"])
    m, s, app = "todo_api/models.py", "todo_api/storage.py", "todo_api/app.py"
    at = p.line_of(s, "def list_todos")
    play(w, p, [
        ("read", m, None, 1, 80),
        ("edit", m, "Adding a tags field to Todo.", "import dataclass\n", "import dataclass, field\n"),
        ("edit", m, None, '    notes: str = ""\n',
         '    notes: str = ""\n    tags: list[str] = field(default_factory=list)\n'),
        ("edit", m, None, '            "notes": self.notes,\n',
         '            "notes": self.notes,\n            "tags": self.tags,\n'),
        ("edit", m, None, '            notes=str(raw.get("notes", "")),\n',
         '            notes=str(raw.get("notes", "")),\n            tags=list(raw.get("tags", [])),\n'),
        ("grep", r"def list_todos|def _select", "Where does the store filter todos?", "content"),
        ("read", s, None, at - 6, 30),
        ("multi", s, "Storage filters by tag.", STORE_TAG_EDITS),
    ])
    test = ('from test_api import client\n\n\ndef test_filter_by_tag():\n'
            '    client.post("/todos", json={"title": "standup", "tags": ["work"]})\n'
            '    got = client.get("/todos", params={"tag": "work"}).json()\n'
            '    assert [t["title"] for t in got] == ["standup"]\n\n\n'
            "def test_tags_round_trip():\n"
            '    made = client.post("/todos", json={"title": "pay rent", "tags": ["home", "monthly"]}).json()\n'
            '    assert client.get(f"/todos/{made[\'id\']}").json()["tags"] == ["home", "monthly"]\n')
    conftest = ("import pytest\n\nfrom todo_api import app as app_module\n"
                "from todo_api.storage import Store\n\n\n@pytest.fixture(autouse=True)\n"
                "def fresh_store(tmp_path, monkeypatch):\n"
                '    monkeypatch.setattr(app_module, "store", Store(str(tmp_path / "todos.json")))\n')
    leak = {"test_filter_by_tag": "AssertionError: assert ['standup', 'standup'] == ['standup']"}
    row = "| `notes` | string | `\"\"` | at most 2000 characters |\n"
    play(w, p, [
        ("read", app, None),
        ("edit", app, None, "    list_id: int | None = None,\n    limit",
         "    list_id: int | None = None,\n    tag: str | None = None,\n    limit"),
        ("edit", app, None, "store.list_todos(done=done, list_id=list_id)",
         "store.list_todos(done=done, list_id=list_id, tag=tag)"),
        ("read", "tests/test_api.py", "Now the tests; first how the API tests are set up.", 1, 40),
        ("write", "tests/test_tags.py", None, test),
        ("bash", "pytest -q", "Run the tests", lambda: p.pytest(leak), 1),
        ("read", app, "State leaks between runs through the module-level store.", 10, 6),
        ("write", "tests/conftest.py", None, conftest),
        ("bash", "pytest -q", "Run the tests again", None),
    ])
    for n in (2, 3):
        dots = "." * n
        w.progress({"type": "bash_progress", "output": dots, "fullOutput": dots, "elapsedTimeSeconds": n,
                    "totalLines": 1})
    glued = "".join(w.lines()[-2:])
    del w.rows[-2:]
    w.raw(glued)  # two lines written without a newline between them: one malformed line
    doc = ("- Due dates are", "- Todos carry optional tags; `GET /todos?tag=work` filters.\n- Due dates are")
    edit = {"file_path": p.abs("CLAUDE.md"), "old_string": doc[0], "new_string": doc[1], "replace_all": False}
    tid = w.use("Edit", edit, say="Noting the filter in CLAUDE.md and docs/api.md.")
    err = "File has not been read yet. Read it first before writing to it."
    w.tool_result(tid, f"<tool_use_error>{err}</tool_use_error>", f"Error: {err}", is_error=True)
    play(w, p, [("read", "CLAUDE.md", None), ("edit", "CLAUDE.md", None, *doc),
                ("grep", r"\| `notes`|filters `done`", None, "content"),
                ("read", "docs/api.md", None, 14, 30),
                ("multi", "docs/api.md", None, [
                    (row, row + "| `tags` | list of strings | `[]` | filter with `?tag=` |\n"),
                    ("filters `done`, `list_id`;", "filters `done`, `list_id`, `tag`;")]),
                ("bash", "ruff check .", "Lint", "All checks passed!\n"),
                ("say", "Tags are stored, returned and filterable with `?tag=`; tests and ruff pass.", None)])
    w.turn_duration()
    w.idle(7)
    w.user("<command-name>/commit</command-name>\n<command-message>commit</command-message>\n"
           "<command-args></command-args>")
    w.meta("Base directory for this skill: /home/dev/.claude/skills/commit\n\n"
           "Read the staged diff, write one conventional commit message and commit.")
    status = (" M CLAUDE.md\n M docs/api.md\n M todo_api/app.py\n M todo_api/models.py\n M todo_api/storage.py\n"
              "?? tests/conftest.py\n?? tests/test_tags.py\n")
    play(w, p, [
        ("bash", "git status --short", "Check the tree", status),
        ("bash", 'git add -A && git commit -m "feat: tags on todos with ?tag= filter"', "Commit",
         "[main 6f2c9e4] feat: tags on todos with ?tag= filter\n"
         " 7 files changed, 41 insertions(+), 6 deletions(-)\n create mode 100644 tests/conftest.py\n"
         " create mode 100644 tests/test_tags.py\n"),
        ("say", "Committed as 6f2c9e4.", None),
    ])
    p.log.insert(0, "6f2c9e4 feat: tags on todos with ?tag= filter")
    w.turn_duration()
    w.last_prompt("/commit")
    w.ai_title("Tags for todos")
    w.write(base / f"{sid}.jsonl")


def long_session(base: Path, p: FakeRepo, sid: str) -> None:
    """A long 2.1.6x session: idle gaps, an auto microcompaction, /compact with its acompact agent file."""
    w = TranscriptWriter(sid, p.root, version="2.1.62", start=demo_time(12, 10, 5), model="claude-opus-4-6",
                         system_tokens=21_000, slug="patient-sorting-badger")
    hook = w.hook_success("Branch main. 0 uncommitted files. Python 3.12.7 in .venv.")
    w.user("Replace the JSON file store with sqlite3 (stdlib only). Keep Store's methods and tests green.")
    w.file_history_snapshot()
    first = play(w, p, [("read", f, None) for f in ("todo_api/storage.py", "todo_api/models.py", "pyproject.toml",
                                                  "tests/test_storage.py", "tests/conftest.py", "todo_api/app.py",
                                                  "tests/test_tags.py")])
    sql_error = "sqlite3.ProgrammingError: Error binding parameter 7: type 'list' is not supported"
    suites = "".join(p.files[f"tests/test_{s}.py"] for s in ("api", "storage", "tags"))
    broken = {t: sql_error for t in re.findall(r"^def (test_\w+)", suites, re.M)  # every test that stores a todo
              if re.search("todo|tag|overdue|search", t) and not re.search("invalid|missing|unknown", t)}
    json_only = {"test_version_1_files_hold_a_bare_list_of_todos": "sqlite3.DatabaseError: file is not a database",
                 "test_save_leaves_no_temporary_file": "AttributeError: 'Store' object has no attribute 'save'"}
    st, old_tests = "tests/test_storage.py", p.files["tests/test_storage.py"]
    old_tests = old_tests[old_tests.index("def test_version_1"): old_tests.index("def test_a_missing_field")]
    new_test = ('def test_a_new_store_sees_what_an_old_one_wrote(store):\n'
                '    store.add_todo({"title": "review slides", "tags": ["work"]})\n'
                '    assert Store(str(store.path)).list_todos(tag="work")[0].title == "review slides"\n\n\n')
    play(w, p, [
        ("grep", r"store\.", "Who calls the store?", "content"),
        ("bash", "git status --short", "Tree state", ""),
        ("bash", "wc -l todo_api/app.py todo_api/storage.py todo_api/models.py", "Sizes"),
        ("write", "todo_api/storage.py", "Rewriting the store on sqlite3.", SQLITE_STORE),
        ("bash", "pytest -q", "Run the tests", lambda: p.pytest({**broken, **json_only}), 1),
        ("edit", "todo_api/storage.py", "Lists (tags) need encoding as JSON text.",
         "        return value.isoformat()\n    return value\n",
         "        return value.isoformat()\n    if isinstance(value, list):\n        return json.dumps(value)\n"
         "    return value\n"),
        ("bash", "pytest -q", "Run the tests again", lambda: p.pytest(json_only), 1),
        ("edit", st, "Those two tests were about the JSON file; one SQLite round trip replaces them.",
         old_tests, new_test),
        ("bash", "pytest -q", "Run the tests again", None),
        ("say", "Store runs on sqlite3 with the same methods; tags are stored as JSON text, and the two "
                "JSON-file tests became one SQLite round trip.", None),
    ])
    w.turn_duration()
    w.user("Add docstrings to the route handlers in todo_api/app.py (FastAPI shows them in /docs), then ruff.")
    play(w, p, [("read", "todo_api/app.py", None), *docstring_steps("todo_api/app.py", p, 6),
                ("bash", "ruff check . && ruff format --check .", "Lint",
                 f"All checks passed!\n{sum(f.endswith('.py') for f in p.files)} files already formatted\n"),
                ("say", "Every route handler has a docstring now; ruff is clean.", None)])
    w.turn_duration()
    w.idle(42)
    w.microcompact(first, attachment_uuids=[hook])
    w.user("Back. Add created_at (UTC, ISO 8601) to the API output.")
    w.file_history_snapshot()
    m = "todo_api/models.py"
    play(w, p, [
        ("read", m, None, 1, 90),
        ("edit", m, None, "from datetime import date\n", "from datetime import UTC, date, datetime\n"),
        ("edit", m, None, "    tags: list[str] = field(default_factory=list)\n",
         "    tags: list[str] = field(default_factory=list)\n"
         "    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))\n"),
        ("edit", m, None, '            "tags": self.tags,\n',
         '            "tags": self.tags,\n            "created_at": self.created_at.isoformat(),\n'),
        ("edit", m, None, '            tags=list(raw.get("tags", [])),\n',
         '            tags=list(raw.get("tags", [])),\n'
         '            created_at=datetime.fromisoformat(raw.get("created_at") or datetime.now(UTC).isoformat()),\n'),
        ("bash", "pytest -q", "Run the tests", None),
        ("say", "Every todo now carries `created_at` in UTC.", None),
    ])
    w.turn_duration()
    w.meta("<local-command-caveat>Caveat: the messages below were produced by local commands. "
           "Do not respond to them unless the user asks.</local-command-caveat>")
    w.user("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
           "<command-args></command-args>")
    ac = TranscriptWriter(sid, p.root, version=w.version, start=w.now, sidechain=True, model=w.model,
                          agent_id="acompact-" + w.hex_id(16), system_tokens=w.system_tokens, slug=w.slug)
    ac.replay(w)
    ac.user("Summarise the conversation so far for a fresh context: requests, files changed, errors and "
            "fixes, what is pending. Reply with text only; do not call tools.")
    summary = ("1. Requests: Store on sqlite3 with the same methods; docstrings on the route handlers; "
               "created_at in API output.\n2. Files: todo_api/storage.py (sqlite3; lists stored as JSON text), "
               "tests/test_storage.py (JSON-file tests replaced), todo_api/app.py (docstrings), "
               "todo_api/models.py (created_at).\n3. Errors: list binding in sqlite3, fixed in _encode.\n"
               "4. All tests pass.")
    ac.call(thinking(""), text(f"<analysis>\nThree requests, all done.\n</analysis>\n<summary>\n{summary}\n"
                               "</summary>"))
    ac.write(base / sid / "subagents" / f"agent-{ac.agent_id}.jsonl")
    w.advance_to(ac.now)
    w.compact(f"This session continues an earlier conversation. Summary of the earlier part:\n\n{summary}")
    w.user("<local-command-stdout>Compacted.</local-command-stdout>")
    w.user("Write a CHANGELOG entry for 0.4.0 and bump the version.")
    w.file_history_snapshot()
    log = ("# Changelog\n\n## 0.4.0 (2026-11-12)\n\n- Storage moved to SQLite (`todos.db`); JSON files are no "
           "longer read.\n- Todos carry tags (`?tag=` filter) and `created_at`.\n- Due timestamps keep the "
           "client's calendar day.\n- Route handlers are documented in `/docs`.\n")
    play(w, p, [
        ("read", "todo_api/__init__.py", None),
        ("edit", "todo_api/__init__.py", None, '__version__ = "0.3.1"', '__version__ = "0.4.0"'),
        ("bash", "git log --oneline -12", "Recent commits"),
        ("write", "CHANGELOG.md", None, log),
        ("bash", "pytest -q", "Run the tests", None),
        ("say", "Version 0.4.0 with a CHANGELOG entry.", None),
    ])
    w.turn_duration()
    w.idle(12)
    w.user("Run the suite three times to check for flakes.")
    play(w, p, [("bash", "pytest -q -p no:cacheprovider", f"Run {n}", None) for n in ("one", "two", "three")]
         + [("say", "Three clean runs; no flakes.", None)])
    w.turn_duration()
    w.last_prompt("Run the suite three times to check for flakes.")
    w.ai_title("Move todo storage to SQLite")
    w.write(base / f"{sid}.jsonl")
