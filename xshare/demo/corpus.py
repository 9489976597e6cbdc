"""The demo corpus: six invented Claude Code sessions over two invented projects."""

from __future__ import annotations

import fnmatch
import json
import random
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from xshare.demo.projects import DOCSTRINGS, SQLITE_STORE, STORE_TAG_EDITS, TODO_LOG, FakeRepo, tally_repo, todo_repo
from xshare.demo.tally import parse_line
from xshare.demo.writer import TranscriptWriter, project_dir_name, text, thinking, tool_use


def _run(w: TranscriptWriter, p: FakeRepo, steps: list[tuple[Any, ...]], *, hooks: bool = False) -> list[str]:
    """Play (kind, arg, say, *extra) steps, one API call each, results derived from the fake repo:
    read (offset, limit), grep (mode), glob, bash (output or callable or None, exit code), edit (old, new),
    multi (list of (old, new)), write (content), say (final text)."""
    ids = []
    for i, (kind, arg, say, *more) in enumerate(steps):
        if kind == "say":
            w.call(text(arg))
            continue
        path, think = p.abs(arg), ("" if i % 3 == 1 and w.version >= "2" else None)
        window = {"offset": more[0], "limit": more[1]} if kind == "read" and more else {}
        mode = more[0] if kind == "grep" and more else "files_with_matches"
        name, inp = {"read": ("Read", {"file_path": path, **window}), "glob": ("Glob", {"pattern": arg}),
                     "grep": ("Grep", {"pattern": arg, "path": p.root, "output_mode": mode}),
                     "bash": ("Bash", {"command": arg, "description": say}),
                     "write": ("Write", {"file_path": path, "content": (more or [""])[0]}),
                     }.get(kind, ("Edit", {}))
        if kind == "edit":
            inp = {"file_path": path, "old_string": more[0], "new_string": more[1], "replace_all": False}
        pairs = more[0] if kind == "multi" else []
        edits = [{"old_string": o, "new_string": n, "replace_all": False} for o, n in pairs]
        if edits:
            name, inp = "MultiEdit", {"file_path": path, "edits": edits}
        missing = [e["old_string"] for e in edits or [inp] if "old_string" in e and e["old_string"] not in p.files[arg]]
        assert not missing, f"{arg}: {missing}"  # every edit must apply to the file as it is now
        tid = w.use(name, inp, say=None if kind == "bash" else say, think=think)
        ids.append(tid)
        if hooks:
            hook = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": f"PostToolUse:{name}"}
            w.progress({**hook, "command": "callback"}, tid)
        if kind == "read":
            w.read_result(tid, path, p.files[arg], **window)
        elif kind == "grep":
            w.grep_result(tid, p.grep(arg), mode=mode)
        elif kind == "glob":
            pattern = arg.replace("**/", "")
            w.glob_result(tid, [p.abs(f) for f in sorted(p.files) if fnmatch.fnmatch(f, pattern)])
        elif kind == "bash":
            out = p.sh(arg) if not more or more[0] is None else more[0]() if callable(more[0]) else more[0]
            w.bash_result(tid, out, exit_code=(more + [0, 0])[1])
        elif kind == "edit":
            w.edit_result(tid, path, more[0], more[1], p.files[arg])
            p.files[arg] = p.files[arg].replace(more[0], more[1], 1)
        elif kind == "multi":
            original = p.files[arg]
            for e in edits:
                p.files[arg] = p.files[arg].replace(e["old_string"], e["new_string"], 1)
            done = "\n".join(f'{k}. Replaced "{e["old_string"]}" with "{e["new_string"]}"'
                             for k, e in enumerate(edits, 1))
            w.tool_result(tid, f"Applied {len(edits)} edits to {path}:\n{done}", {
                "filePath": path, "edits": edits, "originalFileContents": original, "structuredPatch": [],
                "userModified": False})
        else:
            w.write_result(tid, path, more[0], p.files.get(arg))
            p.files[arg] = more[0]
    return ids


def _at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 11, day, hour, minute, 7, tzinfo=timezone.utc)


def _docstrings(rel: str, p: FakeRepo, per_call: int) -> list[tuple[Any, ...]]:
    """MultiEdit steps adding a docstring under each def of a file that lacks one, `per_call` at a time."""
    found = re.finditer(r'^( *)def ([a-z]\w*)\((?:[^()]|\([^()]*\))*\)[^:\n]*:\n(?! *""")', p.files[rel], re.M)
    pairs = [(m[0][:-1], f'{m[0][:-1]}\n{m[1]}    """{DOCSTRINGS[m[2]]}"""') for m in found if m[2] in DOCSTRINGS]
    return [("multi", rel, None, pairs[i:i + per_call]) for i in range(0, len(pairs), per_call)]


def _weeks(log: str) -> str:
    """`tally -by week` on a log: hours and entries per ISO week, largest first, then the total."""
    weeks: dict[str, list[float]] = {}
    for line in log.splitlines():
        start, end, *_ = parse_line(line)
        year, week, _ = start.isocalendar()
        weeks.setdefault(f"{year}-W{week:02d}", []).append((end - start).total_seconds() / 3600)
    rows = sorted(weeks.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    total = sum(map(sum, weeks.values()))
    return "".join(f"{k}  {sum(h):6.2f}h  {len(h):>2}\n" for k, h in rows) + f"   total  {total:6.2f}h\n"


def _bug_hunt(base: Path, p: FakeRepo, sid: str) -> None:
    """Exploration-heavy: Read/Grep/Glob, read-only Bash, parallel reads, an Explore subagent, a small fix."""
    w = TranscriptWriter(sid, p.root, start=_at(3, 9, 12), slug="quiet-tracing-heron")
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
    _run(w, p, [
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
    _run(sub, p, [
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
    _run(w, p, [
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
    _run(w, p, [
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


def _feature(base: Path, p: FakeRepo, sid: str) -> None:
    """Edit-heavy: Edit/MultiEdit/Write, a failing then passing pytest, an Edit error, skills, reminders."""
    w = TranscriptWriter(sid, p.root, start=_at(5, 14, 3), slug="brisk-folding-otter")
    w.hook_success("Branch main. 0 uncommitted files. Python 3.12.7 in .venv.")
    w.skill_listing({"commit": "Write a conventional commit for the staged changes",
                     "test-runner": "Run the test suite and summarise failures"})
    w.user('Add tags: POST accepts "tags", GET /todos?tag=x filters, tags are stored. With tests.',
           reminder="The user opened the file /home/dev/todo-api/todo_api/models.py in the IDE.")
    w.file_history_snapshot()
    w.nested_memory(p.abs("CLAUDE.md"), p.files["CLAUDE.md"])
    m, s, app = "todo_api/models.py", "todo_api/storage.py", "todo_api/app.py"
    at = p.line_of(s, "def list_todos")
    _run(w, p, [
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
    _run(w, p, [
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
    _run(w, p, [("read", "CLAUDE.md", None), ("edit", "CLAUDE.md", None, *doc),
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
    _run(w, p, [
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


def _web(base: Path, g: FakeRepo, sid: str) -> None:
    """WebSearch/WebFetch, an MCP tool, TodoWrite, NeuralMind blocks, an API error and a <synthetic> row."""
    w = TranscriptWriter(sid, g.root, start=_at(9, 16, 20), model="claude-opus-4-6",
                         slug="amber-counting-wren")
    ask = "Add a week grouping that totals per ISO week. Check how Go numbers weeks at New Year."
    w.queue_operation("enqueue", ask)
    w.queue_operation("dequeue")
    w.hook_success("Go 1.23.3; module github.com/example/tally; 3 packages.")
    r, mg, pg = "internal/report/report.go", "main.go", "internal/entry/parse.go"
    by_project = g.line_of(r, "// ByProject")
    snips = "\n\n".join(f"{f}\n```go\n{g.sh(f'sed -n {lo},{hi}p {f}')}```" for f, lo, hi in [
        (r, by_project, by_project + 3), (mg, g.line_of(mg, "var groupings"), g.line_of(mg, "func main"))])
    block = f"<neuralmind>\nCode matching this prompt (2 snippets):\n\n{snips}\n</neuralmind>"
    w.user(ask, blocks=[text(block)])
    w.file_history_snapshot()
    todos = [{"content": c, "status": "pending", "activeForm": c + "..."}
             for c in ("Check ISO week rules", "Add ByWeek", "Wire -by week", "Test ByWeek")]
    ok = "Todos have been modified successfully. Ensure that you continue to use the todo list."
    doing = [dict(t, status="in_progress") for t in todos]
    w.tool_result(w.use("TodoWrite", {"todos": doing}, think=""), ok, {"oldTodos": todos, "newTodos": doing})
    query = "golang time ISOWeek first week of january"
    links = [{"title": "time package - Go Packages", "url": "https://pkg.go.dev/time#Time.ISOWeek"}]
    gist = "ISOWeek returns the ISO 8601 year and week; Jan 1-3 can belong to the previous year's last week."
    results = [{"tool_use_id": "srvtoolu_01" + w.hex_id(22), "content": links}, gist]
    w.tool_result(w.use("WebSearch", {"query": query}),
                  f'Web search results for query: "{query}"\n\nLinks: {json.dumps(links)}\n\n{gist}',
                  {"query": query, "results": results, "durationSeconds": 3.8})
    url, page = links[0]["url"], "ISOWeek() (year, week int): for 2027-01-01 (a Friday) it returns 2026, 53."
    fetched = {"bytes": 48211, "code": 200, "codeText": "OK", "result": page, "durationMs": 912, "url": url}
    w.tool_result(w.use("WebFetch", {"url": url, "prompt": "What does ISOWeek return for 2027-01-01?"}), page,
                  fetched)
    tid = w.use("mcp__github__search_issues", {"owner": "example", "repo": "tally", "query": "week"},
                say="Checking whether anyone asked for this already.")
    issues = [text(json.dumps({"total_count": 1, "items": [{"number": 14, "title": "Weekly totals?"}]}))]
    w.tool_result(tid, issues, issues)
    by_week = ("// ByWeek sums the time spent per ISO week (2026-W45); early January days can belong to the\n"
               "// previous year's last week.\nfunc ByWeek(entries []entry.Entry) []Row {\n"
               "\treturn group(entries, func(e entry.Entry) string {\n\t\ty, wk := e.Start.ISOWeek()\n"
               '\t\treturn fmt.Sprintf("%d-W%02d", y, wk)\n\t})\n}\n\n')
    test = ('func TestByWeekAtNewYear(t *testing.T) {\n\tjan := []entry.Entry{\n'
            '\t\t{Project: "tally", Start: time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC), '
            "End: time.Date(2027, 1, 1, 10, 0, 0, 0, time.UTC)},\n\t}\n"
            '\tcheck(t, ByWeek(jan), []want{{"2026-W53", 1, 1}})\n}\n\n')
    _run(w, g, [
        ("read", r, None),
        ("edit", r, "Adding ByWeek.", "// ByProject", by_week + "// ByProject"),
        ("read", mg, None),
        ("multi", mg, None, [('\t"weekday":  report.ByWeekday,\n', '\t"weekday":  report.ByWeekday,\n'
                              '\t"week":     report.ByWeek,\n'),
                             ("day, activity or weekday", "day, activity, weekday or week")]),
        ("read", "internal/report/report_test.go", "A test for the New Year edge."),
        ("edit", "internal/report/report_test.go", None, "func TestWriteTable", test + "func TestWriteTable"),
        ("bash", "go build ./... && go vet ./...", "Build and vet", ""),
        ("bash", "go test ./...", "Run tests", None),
        ("bash", "go run . -by week testdata/nov.log", "Try it", _weeks(g.files["testdata/nov.log"])),
    ])
    done = [dict(t, status="completed") for t in todos]
    w.tool_result(w.use("TodoWrite", {"todos": done}), ok, {"oldTodos": doing, "newTodos": done})
    w.call(text("`tally -by week log.txt` prints per ISO week (2026-W45); early January days count toward the "
                "previous year's last week, as ISO 8601 says, and a test pins 2027-01-01 to 2026-W53."))
    w.turn_duration()
    w.user("Entries that cross midnight (23:00-01:00) come out negative. Handle that.")
    lo = g.line_of(pg, "func ParseLine")
    code = g.sh(f"sed -n {lo},{lo + 14}p {pg}")
    w.hook_context([f"<neuralmind>\nCode matching this prompt (1 snippet):\n\n{pg}\n"
                    f"```go\n{code}```\n</neuralmind>"])
    w.file_history_snapshot()
    w.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                api_error_status=529)
    _run(w, g, [
        ("read", pg, None),
        ("bash", "sed -n '1,60p' testdata/nov.log", "Sample entries"),
        ("edit", pg, "An end before the start means the next day.",
         "\te := Entry{Project", "\tif end.Before(start) {\n\t\tend = end.Add(24 * time.Hour)\n\t}\n"
         "\te := Entry{Project"),
        ("bash", "go test ./...", "Run tests", None),
    ])
    w.user("[Request interrupted by user]")
    w.synthetic("No response requested.")
    w.last_prompt("Entries that cross midnight (23:00-01:00) come out negative. Handle that.")
    w.ai_title("Weekly totals and overnight entries")
    w.write(base / f"{sid}.jsonl")


def _long(base: Path, p: FakeRepo, sid: str) -> None:
    """A long 2.1.6x session: idle gaps, an auto microcompaction, /compact with its acompact agent file."""
    w = TranscriptWriter(sid, p.root, version="2.1.62", start=_at(12, 10, 5), model="claude-opus-4-6",
                         system_tokens=21_000, slug="patient-sorting-badger")
    hook = w.hook_success("Branch main. 0 uncommitted files. Python 3.12.7 in .venv.")
    w.user("Replace the JSON file store with sqlite3 (stdlib only). Keep Store's methods and tests green.")
    w.file_history_snapshot()
    first = _run(w, p, [("read", f, None) for f in ("todo_api/storage.py", "todo_api/models.py", "pyproject.toml",
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
    _run(w, p, [
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
    _run(w, p, [("read", "todo_api/app.py", None), *_docstrings("todo_api/app.py", p, 6),
                ("bash", "ruff check . && ruff format --check .", "Lint",
                 f"All checks passed!\n{sum(f.endswith('.py') for f in p.files)} files already formatted\n"),
                ("say", "Every route handler has a docstring now; ruff is clean.", None)])
    w.turn_duration()
    w.idle(42)
    w.microcompact(first, attachment_uuids=[hook])
    w.user("Back. Add created_at (UTC, ISO 8601) to the API output.")
    w.file_history_snapshot()
    m = "todo_api/models.py"
    _run(w, p, [
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
    _run(w, p, [
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
    _run(w, p, [("bash", "pytest -q -p no:cacheprovider", f"Run {n}", None) for n in ("one", "two", "three")]
         + [("say", "Three clean runs; no flakes.", None)])
    w.turn_duration()
    w.last_prompt("Run the suite three times to check for flakes.")
    w.ai_title("Move todo storage to SQLite")
    w.write(base / f"{sid}.jsonl")


def _legacy(base: Path, g: FakeRepo, sid: str) -> None:
    """A 1.0.x session: arrow Read output, no nested cache_creation, null stop_reason, inline sidechain."""
    w = TranscriptWriter(sid, g.root, version="1.0.38", start=_at(2, 8, 40), system_tokens=14_500)
    w.raw({"type": "summary", "summary": "Parser panic on short lines", "leafUuid": w.new_uuid()})
    w.user("`tally testdata/nov.log` panics with index out of range since yesterday's entries. Find it.")
    pg, pt = "internal/entry/parse.go", "internal/entry/parse_test.go"
    at = g.line_of(pg, "span[1]")
    panic = ("panic: runtime error: index out of range [1] with length 1\n\ngoroutine 1 [running]:\n"
             "github.com/example/tally/internal/entry.ParseLine({0xc000016180?, 0x24?})\n"
             f"\t/home/dev/tally/{pg}:{at} +0x2f1\n"
             "github.com/example/tally/internal/entry.ParseFile({0x7ffd5b0c1e2a, 0xf})\n"
             f"\t/home/dev/tally/{pg}:{g.line_of(pg, 'e, err := ParseLine(line)')} +0x1a5\n"
             f"main.main()\n\t/home/dev/tally/main.go:{g.line_of('main.go', 'entry.ParseFile')} +0x2d8\n"
             "exit status 2\n")
    _run(w, g, [("bash", "go run . testdata/nov.log", "Reproduce", panic, 2),
                ("bash", "cat testdata/nov.log", "Look at the log"),
                ("read", pg, None), ("grep", r"SplitN|Fields", None),
                ("read", "main.go", None)])
    ask = "Check every Go file under /home/dev/tally for indexing into split results without a length check."
    task = {"description": "Audit unchecked indexing", "prompt": ask, "subagent_type": "general-purpose"}
    tid = w.use("Task", task, say="While I fix the parser, an agent can audit the rest.")
    sub = TranscriptWriter(sid, g.root, version="1.0.38", start=w.now, sidechain=True, system_tokens=9_000)
    sub.user(ask)
    audit = (f"Unchecked: {pg}:{g.line_of(pg, 'span := ')} f[1] and :{at} span[1] (panics on '17:30' without "
             f"an end), :{g.line_of(pg, 'Project: f[2]')} f[2] on short lines. main.go checks flag.NArg() "
             "before flag.Arg(0); ParseBudget in report.go checks len(f) before f[0] and f[1]. Safe elsewhere.")
    _run(sub, g, [("grep", r"\[[0-9]\]", None, "content"), ("read", "internal/report/report.go", None),
                  ("bash", "grep -rn Arg main.go", "Check argument use"), ("say", audit, None)])
    w.absorb(sub)
    w.task_result(tid, sub, audit, prompt=ask, agent_type="general-purpose")
    check = ('\tif len(f) < 3 || !strings.Contains(f[1], "-") {\n'
             '\t\treturn Entry{}, fmt.Errorf("bad line: %q", line)\n\t}\n')
    _run(w, g, [
        ("edit", pg, None, "\tspan := strings", check + "\tspan := strings"),
        ("read", pt, "Adding the short lines to the error cases."),
        ("edit", pt, None, '\t\t"2026-11-01 08:00-9am tally standup",\n',
         '\t\t"2026-11-01 08:00-9am tally standup",\n\t\t"2026-11-01 17:30 tally release prep",\n'
         '\t\t"2026-11-01 08:00-09:00",\n'),
        ("bash", "go test ./...", "Run tests", None),
        ("bash", "go run . testdata/nov.log", "Run on the log",
         'tally: testdata/nov.log:5: bad line: "2026-11-01 17:30 tally release prep"\n', 1),
        ("say", "No more panic: malformed lines are reported with their line number. Your log has an entry "
                "with no end time (testdata/nov.log:5, 2026-11-01 17:30).", None),
    ])
    w.write(base / f"{sid}.jsonl")
    log = g.files["testdata/nov.log"]  # the user adds the missing end time by hand afterwards
    g.files["testdata/nov.log"] = log.replace(" 17:30 tally release prep", " 17:30-18:10 tally release prep")


def _gateway(base: Path, g: FakeRepo, sid: str) -> None:
    """Via a third-party gateway (no requestId, no caching); the file is cut mid-line, still being written."""
    w = TranscriptWriter(sid, g.root, start=_at(20, 18, 5), model="glm-4.6", gateway=True,
                         system_tokens=12_000)
    ask = "Add a -csv flag that prints key,hours,entries rows."
    w.queue_operation("enqueue", ask)
    w.queue_operation("dequeue")
    w.user(ask)
    w.file_history_snapshot()
    _run(w, g, [("read", "main.go", None), ("read", "internal/report/report.go", None),
                ("grep", "WriteJSON|WriteTable", None, "content"), ("bash", "go test ./...", "Baseline tests", None)])
    edit = {"file_path": g.abs("internal/report/report.go"), "old_string": "// WriteJSON",
            "new_string": "// WriteCSV writes rows as key,hours,entries lines.\n// WriteJSON"}
    w.call(text("I'll add report.WriteCSV next to WriteJSON."), tool_use("Edit", edit))
    w.write(base / f"{sid}.jsonl", cut_last_line=len(w.lines()[-1]) // 2)


def write_demo_corpus(root: Path) -> Path:
    """Write a small, deterministic Claude Code config root under `root`; returns `root/projects`."""
    projects = Path(root) / "projects"
    todo, tally = todo_repo(), tally_repo()
    rng = random.Random("xshare-demo-corpus")
    sids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(6)]
    todo_dir, tally_dir = projects / project_dir_name(todo.root), projects / project_dir_name(tally.root)
    _legacy(tally_dir, tally, sids[0])
    _bug_hunt(todo_dir, todo, sids[1])
    _feature(todo_dir, todo, sids[2])
    _web(tally_dir, tally, sids[3])
    _long(todo_dir, todo, sids[4])
    _gateway(tally_dir, tally, sids[5])
    return projects
