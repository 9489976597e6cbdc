"""The invented Go tool tally's tests, their tables generated from its time log (xshare/demo/tally.py);
data for the demo corpus, never run."""

from __future__ import annotations

from collections import defaultdict

from xshare.demo.tally import GROUPS, TALLY_LOG, parse_line

CASES = [TALLY_LOG[i] for i in range(0, 180, 5)]
PARSE_TEST = """package entry

import (
\t"strings"
\t"testing"
\t"time"
)

func TestParseLine(t *testing.T) {
\tcases := []struct {
\t\tline, project, activity string
\t\tminutes, tags            int
\t}{
""" + "".join(f'\t\t{{"{c}", "{p}", "{a}", {int((e - s).total_seconds()) // 60}, {n}}},\n'
              for c, (s, e, p, a, n) in ((c, parse_line(c)) for c in CASES)) + """\t}
\tfor _, c := range cases {
\t\te, err := ParseLine(c.line)
\t\tif err != nil {
\t\t\tt.Fatalf("ParseLine(%q): %v", c.line, err)
\t\t}
\t\tif e.Project != c.project || e.Activity != c.activity || len(e.Tags) != c.tags {
\t\t\tt.Errorf("ParseLine(%q) = %+v", c.line, e)
\t\t}
\t\tif got := e.Duration(); got != time.Duration(c.minutes)*time.Minute {
\t\t\tt.Errorf("ParseLine(%q) lasts %v, want %d minutes", c.line, got, c.minutes)
\t\t}
\t}
}

func TestParseLineErrors(t *testing.T) {
\tfor _, line := range []string{
\t\t"2026-11-01 25:00-26:00 tally standup",
\t\t"2026-13-01 08:00-09:00 tally standup",
\t\t"yesterday 08:00-09:00 tally standup",
\t\t"2026-11-01 08:00-9am tally standup",
\t} {
\t\tif _, err := ParseLine(line); err == nil {
\t\t\tt.Errorf("ParseLine(%q) succeeded, want an error", line)
\t\t}
\t}
}

func TestCheck(t *testing.T) {
\tat := func(day, hour, minute int) time.Time { return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC) }
\tgot := Check([]Entry{
\t\t{Project: "infra", Start: at(3, 9, 0), End: at(3, 10, 0)},
\t\t{Project: "tally", Start: at(3, 9, 30), End: at(3, 11, 0)},
\t\t{Project: "reading", Start: at(3, 12, 0), End: at(3, 11, 0)},
\t\t{Project: "tally", Start: at(4, 8, 0), End: at(4, 22, 0)},
\t}, 12*time.Hour)
\tif len(got) != 3 {
\t\tt.Fatalf("got %d problems, want 3: %v", len(got), got)
\t}
\tfor i, want := range []string{"overlaps 09:00 infra", "ends before it starts", "lasts 14h0m0s"} {
\t\tif !strings.Contains(got[i].Reason, want) {
\t\t\tt.Errorf("problem %d = %q, want %q", i, got[i].Reason, want)
\t\t}
\t}
}

func TestFilter(t *testing.T) {
\tday := func(s string) time.Time {
\t\tv, _ := time.Parse("2006-01-02", s)
\t\treturn v
\t}
\te, _ := ParseLine("2026-11-03 09:00-10:00 infra docs #oncall")
\tfor _, c := range []struct {
\t\tf    Filter
\t\twant bool
\t}{
\t\t{Filter{}, true},
\t\t{Filter{Project: "infra"}, true},
\t\t{Filter{Project: "tally"}, false},
\t\t{Filter{Since: day("2026-11-03")}, true},
\t\t{Filter{Until: day("2026-11-03")}, false},
\t\t{Filter{Since: day("2026-11-01"), Until: day("2026-11-04")}, true},
\t} {
\t\tif got := c.f.Match(e); got != c.want {
\t\t\tt.Errorf("%+v.Match = %v, want %v", c.f, got, c.want)
\t\t}
\t}
\tif !e.HasTag("oncall") || e.HasTag("review") {
\t\tt.Errorf("tags = %v", e.Tags)
\t}
}
"""
SAMPLE = [parse_line(TALLY_LOG[i]) for i in range(1, 60, 5)]
KEYS = {"ByProject": lambda s: s[2], "ByDay": lambda s: s[0].strftime("%Y-%m-%d"),
        "ByActivity": lambda s: s[3], "ByWeekday": lambda s: s[0].strftime("%A")}


def _expected(name: str) -> str:
    total: defaultdict[str, int] = defaultdict(int)
    count: defaultdict[str, int] = defaultdict(int)
    for s in SAMPLE:
        total[KEYS[name](s)] += int((s[1] - s[0]).total_seconds()) // 60
        count[KEYS[name](s)] += 1
    rows = sorted(total, key=lambda k: (-total[k], k))
    return "".join(f'\t\t{{"{k}", {total[k] / 60:.2f}, {count[k]}}},\n' for k in rows)


REPORT_TEST = """package report

import (
\t"bytes"
\t"math"
\t"strings"
\t"testing"
\t"time"

\t"github.com/example/tally/internal/entry"
)

func at(day, hour, minute int) time.Time { return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC) }

var sample = []entry.Entry{
""" + "".join(f'\t{{Project: "{p}", Activity: "{a}", Start: at({s.day}, {s.hour}, {s.minute}), '
              f"End: at({e.day}, {e.hour}, {e.minute})}},\n" for s, e, p, a, _ in SAMPLE) + """}

type want struct {
\tkey     string
\thours   float64
\tentries int
}

func check(t *testing.T, got []Row, rows []want) {
\tt.Helper()
\tif len(got) != len(rows) {
\t\tt.Fatalf("got %d rows, want %d: %+v", len(got), len(rows), got)
\t}
\tfor i, w := range rows {
\t\tif got[i].Key != w.key || math.Abs(got[i].Hours-w.hours) > 0.005 || got[i].Entries != w.entries {
\t\t\tt.Errorf("row %d = %+v, want %+v", i, got[i], w)
\t\t}
\t}
}
""" + "".join(f"""
func Test{name}(t *testing.T) {{
\tcheck(t, {name}(sample), []want{{
{_expected(name)}\t}})
}}
""" for name in GROUPS) + """
func TestWriteTableEndsWithTheTotal(t *testing.T) {
\tvar b bytes.Buffer
\tif err := WriteTable(&b, ByProject(sample)); err != nil {
\t\tt.Fatal(err)
\t}
\tlines := strings.Split(strings.TrimSpace(b.String()), "\\n")
\tif !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "total") {
\t\tt.Errorf("last line %q", lines[len(lines)-1])
\t}
}

func TestBudgetOver(t *testing.T) {
\tb, err := ParseBudget(strings.NewReader("# November\\ntally 10\\nreading 100\\n"))
\tif err != nil {
\t\tt.Fatal(err)
\t}
\tover := b.Over([]Row{{Key: "tally", Hours: 12.5}, {Key: "reading", Hours: 3}, {Key: "infra", Hours: 40}})
\tif len(over) != 1 || over[0].Key != "tally" || over[0].Hours != 2.5 {
\t\tt.Errorf("over = %+v", over)
\t}
\tif _, err := ParseBudget(strings.NewReader("tally forty\\n")); err == nil {
\t\tt.Error("a budget without a number parsed")
\t}
}

func TestWriteJSON(t *testing.T) {
\tvar b bytes.Buffer
\tif err := WriteJSON(&b, ByDay(sample)); err != nil {
\t\tt.Fatal(err)
\t}
\tif !strings.Contains(b.String(), `"key": "2026-11-01"`) {
\t\tt.Errorf("JSON: %s", b.String())
\t}
}
"""
