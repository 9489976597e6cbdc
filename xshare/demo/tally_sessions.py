"""The demo's three invented sessions on the tally project: a legacy hunt, web research, a gateway."""

from __future__ import annotations

import json
from pathlib import Path

from xshare.demo.projects import FakeRepo
from xshare.demo.steps import demo_time, play, weeks_of
from xshare.demo.writer import TranscriptWriter, text, tool_use


def web(base: Path, g: FakeRepo, sid: str) -> None:
    """WebSearch/WebFetch, an MCP tool, TodoWrite, NeuralMind blocks, an API error and a <synthetic> row."""
    w = TranscriptWriter(sid, g.root, start=demo_time(9, 16, 20), model="claude-opus-4-6",
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
    play(w, g, [
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
        ("bash", "go run . -by week testdata/nov.log", "Try it", weeks_of(g.files["testdata/nov.log"])),
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
    play(w, g, [
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


def legacy(base: Path, g: FakeRepo, sid: str) -> None:
    """A 1.0.x session: arrow Read output, no nested cache_creation, null stop_reason, inline sidechain."""
    w = TranscriptWriter(sid, g.root, version="1.0.38", start=demo_time(2, 8, 40), system_tokens=14_500)
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
    play(w, g, [("bash", "go run . testdata/nov.log", "Reproduce", panic, 2),
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
    play(sub, g, [("grep", r"\[[0-9]\]", None, "content"), ("read", "internal/report/report.go", None),
                  ("bash", "grep -rn Arg main.go", "Check argument use"), ("say", audit, None)])
    w.absorb(sub)
    w.task_result(tid, sub, audit, prompt=ask, agent_type="general-purpose")
    check = ('\tif len(f) < 3 || !strings.Contains(f[1], "-") {\n'
             '\t\treturn Entry{}, fmt.Errorf("bad line: %q", line)\n\t}\n')
    play(w, g, [
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


def gateway(base: Path, g: FakeRepo, sid: str) -> None:
    """Via a third-party gateway (no requestId, no caching); the file is cut mid-line, still being written."""
    w = TranscriptWriter(sid, g.root, start=demo_time(20, 18, 5), model="qwen3-coder-30b-local", gateway=True,
                         system_tokens=12_000)
    ask = "Add a -csv flag that prints key,hours,entries rows."
    w.queue_operation("enqueue", ask)
    w.queue_operation("dequeue")
    w.user(ask)
    w.file_history_snapshot()
    play(w, g, [("read", "main.go", None), ("read", "internal/report/report.go", None),
                ("grep", "WriteJSON|WriteTable", None, "content"), ("bash", "go test ./...", "Baseline tests", None)])
    edit = {"file_path": g.abs("internal/report/report.go"), "old_string": "// WriteJSON",
            "new_string": "// WriteCSV writes rows as key,hours,entries lines.\n// WriteJSON"}
    w.call(text("I'll add report.WriteCSV next to WriteJSON."), tool_use("Edit", edit))
    w.write(base / f"{sid}.jsonl", cut_last_line=len(w.lines()[-1]) // 2)
