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

from xshare.demo.projects import DOCSTRINGS, SQLITE_STORE, TALLY_FILES, TODO_FILES, TODO_LOG, FakeRepo
from xshare.demo.writer import TranscriptWriter, project_dir_name, text, thinking, tool_use


def _run(w: TranscriptWriter, p: FakeRepo, steps: list[tuple[Any, ...]], *, hooks: bool = False) -> list[str]:
    """Play (kind, arg, say, *extra) steps, one API call each, results derived from the fake repo:
    read (offset, limit), grep (mode), glob, bash (output or callable or None, exit code), edit (old, new),
    write (content), say (final text)."""
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
        else:
            w.write_result(tid, path, more[0], p.files.get(arg))
            p.files[arg] = more[0]
    return ids


def _at(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 11, day, hour, minute, 7, tzinfo=timezone.utc)


def _docstrings(rel: str, p: FakeRepo) -> list[tuple[Any, ...]]:
    """Edit steps adding a docstring under each public def of a file that lacks one."""
    found = re.finditer(r"^( *)def ([a-z]\w*)\(.*:$\n(?! *\"\"\")", p.files[rel], re.M)
    return [("edit", rel, None, m[0][:-1], f'{m[0][:-1]}\n{m[1]}    """{DOCSTRINGS[m[2]]}"""')
            for m in found if m[2] in DOCSTRINGS]


def _bug_hunt(base: Path, p: FakeRepo, sid: str) -> None:
    """Exploration-heavy: Read/Grep/Glob, read-only Bash, parallel reads, an Explore subagent, a small fix."""
    w = TranscriptWriter(sid, p.root, start=_at(3, 9, 12), slug="quiet-tracing-heron")
    w.hook_success("Branch main. 0 uncommitted files. Last CI run on main: passed.")
    w.user('Mobile bug: a todo created with due "2026-11-04T23:30:00-05:00" is listed as due 2026-11-05. '
           "Find out why before changing anything.")
    w.file_history_snapshot()
    _run(w, p, [
        ("glob", "**/*.py", "Let me get the layout first."),
        ("bash", "git log --oneline -8", "Recent history"),
        ("read", "todo_api/app.py", None),
        ("grep", "parse_due", "Where is the due value parsed?"),
        ("read", "todo_api/dates.py", None),
        ("grep", r"astimezone|tzinfo|utcnow", None, "content"),
        ("read", "todo_api/storage.py", "Storage re-parses due on load; checking that path too."),
        ("bash", "rg -n due tests/", "Find due-date tests"),
        ("read", "tests/test_dates.py", None),
        ("read", "tests/fixtures/todos.json", "The fixtures might hold timestamp dues."),
        ("bash", "cd /home/dev/todo-api && git log --oneline -3 -- todo_api/dates.py", "History of dates.py",
         "e07f6c2 dates: accept ISO timestamps from the mobile client\n4e1d2a9 initial commit\n"),
        ("bash", "sed -n '4,11p' todo_api/dates.py", "Show parse_due"),
        ("bash", "ls tests", "List tests"),
    ], hooks=True)
    a, b = w.call(text("Checking the model and the project notes together."),
                  tool_use("Read", {"file_path": p.abs("todo_api/models.py")}),
                  tool_use("Read", {"file_path": p.abs("CLAUDE.md")}))
    w.read_result(b, p.abs("CLAUDE.md"), p.files["CLAUDE.md"])  # results may come back out of order
    w.read_result(a, p.abs("todo_api/models.py"), p.files["todo_api/models.py"])
    ask = "List every place in /home/dev/todo-api that turns a due value into a date, with file:line."
    task = {"description": "Find due-date conversions", "prompt": ask, "subagent_type": "Explore"}
    tid = w.use("Task", task, say="An Explore agent can sweep for other conversions while I reproduce.")
    sub = TranscriptWriter(sid, p.root, start=w.now, sidechain=True, agent_id="a" + w.hex_id(16),
                           model="claude-haiku-4-5-20251001", system_tokens=9_500, slug=w.slug)
    sub.user(ask)
    found = ("- todo_api/dates.py:11 `stamp.astimezone().date()` uses the server's zone (the only one)\n"
             "- todo_api/dates.py:10 `date.fromisoformat` for plain days\n"
             "- todo_api/storage.py:13 re-parses stored days\n- todo_api/app.py:17 parses request values")
    _run(sub, p, [
        ("grep", "due", None, "content"), ("read", "todo_api/storage.py", None),
        ("bash", "grep -rn fromisoformat todo_api", "Find ISO parsing"), ("read", "todo_api/app.py", None),
        ("glob", "**/*.toml", None), ("bash", "grep -rn TZ .", "Look for TZ settings"), ("say", found, None),
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
        ("bash", "git blame -L 11,11 todo_api/dates.py", "Who added the conversion",
         "e07f6c2 (Dana Whitfield 2026-10-21 16:02:11 +0200 11)     return stamp.astimezone().date()\n"),
        ("say", "`parse_due` converts a timestamp to the server's zone before taking the day (dates.py:11, "
                "e07f6c2), so 23:30 at -05:00 becomes the next day. `stamp.date()` keeps the client's day.",
         None),
    ])
    w.turn_duration()
    w.user("Good find. Fix it and add a regression test.")
    w.file_history_snapshot()
    _run(w, p, [
        ("edit", "todo_api/dates.py", None, "    return stamp.astimezone().date()",
         "    return stamp.date()  # the client's calendar day, whatever the server zone"),
        ("edit", "tests/test_dates.py", "Adding the regression test.", "def test_overdue():",
         'def test_timestamp_keeps_client_day():\n    assert parse_due("2026-11-04T23:30:00-05:00") == '
         "date(2026, 11, 4)\n\n\ndef test_overdue():"),
        ("bash", "pytest -q", "Run the tests", None),
        ("say", "Fixed: `parse_due` keeps the client's calendar day, with a regression test.", None),
    ])
    w.turn_duration()
    w.last_prompt("Good find. Fix it and add a regression test.")
    w.ai_title("Due dates shift a day for negative UTC offsets")
    w.write(base / f"{sid}.jsonl")


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
    m = "todo_api/models.py"
    _run(w, p, [
        ("read", m, None),
        ("edit", m, "Adding a tags field.", "import dataclass\n", "import dataclass, field\n"),
        ("edit", m, None, "    due: date | None = None\n",
         "    due: date | None = None\n    tags: list[str] = field(default_factory=list)\n"),
        ("edit", m, None, '"due": due}', '"due": due, "tags": self.tags}'),
        ("read", "todo_api/storage.py", None),
    ])
    rel, path = "todo_api/storage.py", p.abs("todo_api/storage.py")
    edits = [{"old_string": o, "new_string": n, "replace_all": False} for o, n in [
        ('parse_due(raw["due"]))', 'parse_due(raw["due"]), raw.get("tags", []))'),
        ("def add(self, title: str, due=None)", "def add(self, title: str, due=None, tags=())"),
        ("title, due=due)", "title, due=due, tags=list(tags))")]]
    tid = w.use("MultiEdit", {"file_path": path, "edits": edits}, say="Storage has to load and save tags.")
    original = p.files[rel]
    for e in edits:
        p.files[rel] = p.files[rel].replace(e["old_string"], e["new_string"], 1)
    done = "\n".join(f'{i}. Replaced "{e["old_string"]}" with "{e["new_string"]}"'
                     for i, e in enumerate(edits, 1))
    w.tool_result(tid, f"Applied {len(edits)} edits to {path}:\n{done}", {
        "filePath": path, "edits": edits, "originalFileContents": original, "structuredPatch": [],
        "userModified": False})
    old_list = "    return [t.to_dict() for t in store.all() if done is None or t.done == done]"
    new_list = ("    items = [t for t in store.all() if done is None or t.done == done]\n"
                "    return [t.to_dict() for t in items if tag is None or tag in t.tags]")
    test = ('from test_api import client\n\n\ndef test_filter_by_tag():\n'
            '    client.post("/todos", json={"title": "standup", "tags": ["work"]})\n'
            '    got = client.get("/todos", params={"tag": "work"}).json()\n'
            '    assert [t["title"] for t in got] == ["standup"]\n')
    conftest = ("import pytest\n\nfrom todo_api import app as app_module\n"
                "from todo_api.storage import Store\n\n\n@pytest.fixture(autouse=True)\n"
                "def fresh_store(tmp_path, monkeypatch):\n"
                '    monkeypatch.setattr(app_module, "store", Store(str(tmp_path / "todos.json")))\n')
    leak = {"test_filter_by_tag": "AssertionError: assert ['standup', 'standup'] == ['standup']"}
    _run(w, p, [
        ("read", "todo_api/app.py", None),
        ("edit", "todo_api/app.py", None, "(done: bool | None = None)",
         "(done: bool | None = None, tag: str | None = None)"),
        ("edit", "todo_api/app.py", None, old_list, new_list),
        ("edit", "todo_api/app.py", None, 'due=parse_due(payload.get("due")))',
         'due=parse_due(payload.get("due")), tags=payload.get("tags", []))'),
        ("write", "tests/test_tags.py", "Now the tests.", test),
        ("bash", "pytest -q", "Run the tests", lambda: p.pytest(leak), 1),
        ("read", "todo_api/app.py", "State leaks between runs through the module-level store.", 5, 3),
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
    tid = w.use("Edit", edit, say="Noting the filter in CLAUDE.md.")
    err = "File has not been read yet. Read it first before writing to it."
    w.tool_result(tid, f"<tool_use_error>{err}</tool_use_error>", f"Error: {err}", is_error=True)
    _run(w, p, [("read", "CLAUDE.md", None), ("edit", "CLAUDE.md", None, *doc),
                ("bash", "ruff check .", "Lint", "All checks passed!\n"),
                ("say", "Tags are stored, returned and filterable with `?tag=`; tests and ruff pass.", None)])
    w.turn_duration()
    w.idle(7)
    w.user("<command-name>/commit</command-name>\n<command-message>commit</command-message>\n"
           "<command-args></command-args>")
    w.meta("Base directory for this skill: /home/dev/.claude/skills/commit\n\n"
           "Read the staged diff, write one conventional commit message and commit.")
    status = (" M CLAUDE.md\n M todo_api/app.py\n M todo_api/models.py\n M todo_api/storage.py\n"
              "?? tests/conftest.py\n?? tests/test_tags.py\n")
    _run(w, p, [
        ("bash", "git status --short", "Check the tree", status),
        ("bash", 'git add -A && git commit -m "feat: tags on todos with ?tag= filter"', "Commit",
         "[main 6f2c9e4] feat: tags on todos with ?tag= filter\n"
         " 6 files changed, 24 insertions(+), 5 deletions(-)\n"),
        ("say", "Committed as 6f2c9e4.", None),
    ])
    w.turn_duration()
    w.last_prompt("/commit")
    w.ai_title("Tags for todos")
    w.write(base / f"{sid}.jsonl")


def _web(base: Path, g: FakeRepo, sid: str) -> None:
    """WebSearch/WebFetch, an MCP tool, TodoWrite, NeuralMind blocks, an API error and a <synthetic> row."""
    w = TranscriptWriter(sid, g.root, start=_at(9, 16, 20), model="claude-opus-4-6",
                         slug="amber-counting-wren")
    ask = "Add a --week flag that totals per ISO week. Check how Go numbers weeks at New Year."
    w.queue_operation("enqueue", ask)
    w.queue_operation("dequeue")
    w.hook_success("Go 1.23.3; module github.com/example/tally; 3 packages.")
    snips = "\n\n".join(f"{f}\n```go\n{g.sh(f'sed -n {r}p {f}')}```" for f, r in [
        ("internal/report/report.go", "'11,14'"), ("main.go", "'10,17'")])
    block = f"<neuralmind>\nCode matching this prompt (2 snippets):\n\n{snips}\n</neuralmind>"
    w.user(ask, blocks=[text(block)])
    w.file_history_snapshot()
    todos = [{"content": c, "status": "pending", "activeForm": c + "..."}
             for c in ("Check ISO week rules", "Add ByWeek", "Wire --week")]
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
    by_week = ("// ByWeek sums time per ISO week.\nfunc ByWeek(entries []entry.Entry) string {\n"
               "\tvar b strings.Builder\n\tfor _, e := range entries {\n\t\ty, wk := e.Start.ISOWeek()\n"
               '\t\tfmt.Fprintf(&b, "%d-W%02d %s\\n", y, wk, e.End.Sub(e.Start))\n'
               "\t}\n\treturn b.String()\n}\n\n")
    flag = ('\tif len(os.Args) > 2 && os.Args[2] == "--week" {\n\t\tfmt.Print(report.ByWeek(entries))\n'
            "\t\treturn\n\t}\n")
    _run(w, g, [
        ("read", "internal/report/report.go", None),
        ("edit", "internal/report/report.go", "Adding ByWeek.", "// ByProject", by_week + "// ByProject"),
        ("read", "main.go", None),
        ("edit", "main.go", None, "\tfmt.Print(report.ByProject", flag + "\tfmt.Print(report.ByProject"),
        ("bash", "go build ./... && go vet ./...", "Build and vet", ""),
        ("bash", "go test ./...", "Run tests", None),
    ])
    done = [dict(t, status="completed") for t in todos]
    w.tool_result(w.use("TodoWrite", {"todos": done}), ok, {"oldTodos": doing, "newTodos": done})
    w.call(text("`tally log.txt --week` prints per ISO week (2026-W45); early January days count toward the "
                "previous year's last week, as ISO 8601 says."))
    w.turn_duration()
    w.user("Entries that cross midnight (23:00-01:00) come out negative. Handle that.")
    code = g.sh("sed -n 16,24p internal/entry/parse.go")
    w.hook_context([f"<neuralmind>\nCode matching this prompt (1 snippet):\n\ninternal/entry/parse.go\n"
                    f"```go\n{code}```\n</neuralmind>"])
    w.file_history_snapshot()
    w.synthetic('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                api_error_status=529)
    _run(w, g, [
        ("read", "internal/entry/parse.go", None),
        ("bash", "sed -n '1,60p' testdata/nov.log", "Sample entries"),
        ("edit", "internal/entry/parse.go", "An end before the start means the next day.",
         "\treturn Entry{Project", "\tif end.Before(start) {\n\t\tend = end.Add(24 * time.Hour)\n\t}\n"
         "\treturn Entry{Project"),
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
    first = _run(w, p, [("read", f, None) for f in sorted(p.files) if f.endswith(".py")])
    typo = {"test_missing_todo": "TypeError: Store.save() missing 1 required positional argument: 'todo'"}
    _run(w, p, [
        ("grep", r"store\.", "Who calls the store?", "content"),
        ("bash", "git status --short", "Tree state", ""),
        ("bash", "wc -l todo_api/app.py todo_api/storage.py", "Sizes"),
        ("write", "todo_api/storage.py", "Rewriting the store on sqlite3.", SQLITE_STORE),
        ("bash", "pytest -q", "Run the tests", lambda: p.pytest(typo), 1),
        ("edit", "todo_api/app.py", None, "    store.save()\n", "    store.save(todo)\n"),
        ("bash", "pytest -q", "Run the tests again", None),
        ("say", "Store runs on sqlite3 with the same methods; `save` now takes the todo it writes.", None),
    ])
    w.turn_duration()
    w.user("Add docstrings to every public function in todo_api/ and run ruff.")
    for rel in ("todo_api/models.py", "todo_api/dates.py", "todo_api/storage.py", "todo_api/app.py"):
        _run(w, p, [("read", rel, None), *_docstrings(rel, p)])
    _run(w, p, [("bash", "ruff check . && ruff format --check .", "Lint", "All checks passed!\n"),
                ("say", "Docstrings added to all public functions; ruff is clean.", None)])
    w.turn_duration()
    w.idle(42)
    w.microcompact(first[:7], attachment_uuids=[hook])
    w.user("Back. Add created_at (UTC, ISO 8601) to the API output.")
    w.file_history_snapshot()
    m = "todo_api/models.py"
    field = "    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))\n"
    _run(w, p, [
        ("read", m, None),
        ("edit", m, None, "from datetime import date\n", "from datetime import UTC, date, datetime\n"),
        ("edit", m, None, "    tags: list[str] = field(default_factory=list)\n",
         "    tags: list[str] = field(default_factory=list)\n" + field),
        ("edit", m, None, '"tags": self.tags}', '"tags": self.tags, "created": self.created_at.isoformat()}'),
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
    summary = ("1. Requests: Store on sqlite3 with the same methods; docstrings on public functions; "
               "created_at in API output.\n2. Files: todo_api/storage.py (sqlite3, save(todo)), "
               "todo_api/app.py, todo_api/models.py.\n3. Errors: save() signature mismatch, fixed.\n"
               "4. All tests pass.")
    ac.call(thinking(""), text(f"<analysis>\nThree requests, all done.\n</analysis>\n<summary>\n{summary}\n"
                               "</summary>"))
    ac.write(base / sid / "subagents" / f"agent-{ac.agent_id}.jsonl")
    w.advance_to(ac.now)
    w.compact(f"This session continues an earlier conversation. Summary of the earlier part:\n\n{summary}")
    w.user("<local-command-stdout>Compacted.</local-command-stdout>")
    w.user("Write a CHANGELOG entry for 0.4.0 and bump the version.")
    w.file_history_snapshot()
    log = ("# Changelog\n\n## 0.4.0 (2026-11-12)\n\n- Storage moved to SQLite.\n"
           "- Todos carry tags (`?tag=` filter) and `created_at`.\n- Due timestamps keep the client's day.\n")
    _run(w, p, [
        ("read", "todo_api/__init__.py", None),
        ("edit", "todo_api/__init__.py", None, '__version__ = "0.3.1"', '__version__ = "0.4.0"'),
        ("bash", "git log --oneline -6", "Recent commits"),
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
    panic = ("panic: runtime error: index out of range [1] with length 1\n\ngoroutine 1 [running]:\n"
             "github.com/example/tally/internal/entry.ParseLine(...)\n"
             "\t/home/dev/tally/internal/entry/parse.go:18\nexit status 2\n")
    _run(w, g, [("bash", "go run . testdata/nov.log", "Reproduce", panic, 2),
                ("bash", "cat testdata/nov.log", "Look at the log"),
                ("read", "internal/entry/parse.go", None), ("grep", r"SplitN|Fields", None),
                ("read", "main.go", None)])
    ask = "Check every Go file under /home/dev/tally for indexing into split results without a length check."
    task = {"description": "Audit unchecked indexing", "prompt": ask, "subagent_type": "general-purpose"}
    tid = w.use("Task", task, say="While I fix the parser, an agent can audit the rest.")
    sub = TranscriptWriter(sid, g.root, version="1.0.38", start=w.now, sidechain=True, system_tokens=9_000)
    sub.user(ask)
    audit = ("Unchecked: internal/entry/parse.go:18 span[1] (panics on '09:00' without an end) and "
             "f[0..2] on short lines; main.go:11 os.Args[1]. report.go is safe.")
    _run(sub, g, [("grep", r"\[[0-9]\]", None, "content"), ("read", "internal/report/report.go", None),
                  ("bash", "grep -rn Args main.go", "Check argument use"), ("say", audit, None)])
    w.absorb(sub)
    w.task_result(tid, sub, audit, prompt=ask, agent_type="general-purpose")
    check = ('\tif len(f) < 3 || !strings.Contains(f[1], "-") {\n'
             '\t\treturn Entry{}, fmt.Errorf("bad line: %q", line)\n\t}\n')
    _run(w, g, [
        ("edit", "internal/entry/parse.go", None, "\tspan := strings", check + "\tspan := strings"),
        ("edit", "internal/entry/parse.go", None, '\t"bufio"\n', '\t"bufio"\n\t"fmt"\n'),
        ("bash", "go test ./...", "Run tests", None),
        ("bash", "go run . testdata/nov.log", "Run on the log",
         'tally: bad line: "2026-11-01 17:30 tally release prep"\n', 1),
        ("say", "No more panic: malformed lines are reported. Your log has an entry with no end time "
                "(2026-11-01 17:30).", None),
    ])
    w.write(base / f"{sid}.jsonl")


def _gateway(base: Path, g: FakeRepo, sid: str) -> None:
    """Via a third-party gateway (no requestId, no caching); the file is cut mid-line, still being written."""
    w = TranscriptWriter(sid, g.root, start=_at(20, 18, 5), model="glm-4.6", gateway=True,
                         system_tokens=12_000)
    ask = "Add a --csv flag that prints project,hours rows."
    w.queue_operation("enqueue", ask)
    w.queue_operation("dequeue")
    w.user(ask)
    w.file_history_snapshot()
    _run(w, g, [("read", "main.go", None), ("read", "internal/report/report.go", None),
                ("grep", "ByProject", None, "content"), ("bash", "go test ./...", "Baseline tests", None)])
    edit = {"file_path": g.abs("internal/report/report.go"), "old_string": "// ByProject",
            "new_string": "// CSV writes project,hours rows.\n// ByProject"}
    w.call(text("I'll add report.CSV next to ByProject."), tool_use("Edit", edit))
    w.write(base / f"{sid}.jsonl", cut_last_line=len(w.lines()[-1]) // 2)


def write_demo_corpus(root: Path) -> Path:
    """Write a small, deterministic Claude Code config root under `root`; returns `root/projects`."""
    projects = Path(root) / "projects"
    todo = FakeRepo("/home/dev/todo-api", TODO_FILES, TODO_LOG)
    tally = FakeRepo("/home/dev/tally", TALLY_FILES, ["3c9f1e2 report: sort by hours", "f02c6d5 initial commit"])
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
