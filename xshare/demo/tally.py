"""The invented Go tool tally (hours of a time log): hand-written sources; log and test tables generated."""

from __future__ import annotations

from datetime import datetime

PROJECTS = ("tally", "todo-api", "infra", "reading")
ACTIVITIES = ("standup", "code review", "parser work", "release prep", "docs", "bug triage")


def _line(i: int) -> str:
    start = 8 * 60 + i % 6 * 120 + i * 15 % 60  # six entries a day, two hours apart, 25-74 minutes long
    end, tags = start + 25 + i * 37 % 50, " #oncall" * (i % 7 == 3) + " #review" * (i % 11 == 5)
    return (f"2026-11-{1 + i // 6:02d} {start // 60:02d}:{start % 60:02d}-{end // 60:02d}:{end % 60:02d}"
            f" {PROJECTS[i * 7 % 4]} {ACTIVITIES[i % 6]}{tags}")


TALLY_LOG = [_line(i) for i in range(180)]
MAIN = """// Command tally totals the hours of a plain-text time log.
//
//	tally [-by project|day|activity|weekday] [-project NAME] [-since DAY] [-until DAY] [-json] [-budget FILE] FILE
//	tally -check 12h FILE
package main

import (
\t"flag"
\t"fmt"
\t"os"
\t"time"

\t"github.com/example/tally/internal/entry"
\t"github.com/example/tally/internal/report"
)

var groupings = map[string]func([]entry.Entry) []report.Row{
\t"project":  report.ByProject,
\t"day":      report.ByDay,
\t"activity": report.ByActivity,
\t"weekday":  report.ByWeekday,
}

func main() {
\tby := flag.String("by", "project", "group by project, day, activity or weekday")
\tproject := flag.String("project", "", "only entries of this project")
\tsince := flag.String("since", "", "only entries on or after this day (YYYY-MM-DD)")
\tuntil := flag.String("until", "", "only entries before this day (YYYY-MM-DD)")
\tasJSON := flag.Bool("json", false, "print JSON instead of a table")
\tcheck := flag.Duration("check", 0, "only report entries that overlap, end before they start or last longer")
\tbudget := flag.String("budget", "", "warn about projects over the hours in this file (\\"project hours\\" lines)")
\tflag.Usage = func() {
\t\tfmt.Fprintln(os.Stderr, "usage: tally [flags] FILE")
\t\tflag.PrintDefaults()
\t}
\tflag.Parse()
\tif flag.NArg() != 1 {
\t\tflag.Usage()
\t\tos.Exit(2)
\t}
\tgroup, ok := groupings[*by]
\tif !ok {
\t\tfail(fmt.Errorf("unknown grouping %q", *by))
\t}
\tentries, err := entry.ParseFile(flag.Arg(0))
\tif err != nil {
\t\tfail(err)
\t}
\tif *check > 0 {
\t\tproblems := entry.Check(entries, *check)
\t\tfor _, p := range problems {
\t\t\tfmt.Println(p)
\t\t}
\t\tif len(problems) > 0 {
\t\t\tos.Exit(1)
\t\t}
\t\treturn
\t}
\tfilter := entry.Filter{Project: *project}
\tif filter.Since, err = day(*since); err != nil {
\t\tfail(err)
\t}
\tif filter.Until, err = day(*until); err != nil {
\t\tfail(err)
\t}
\trows := group(filter.Apply(entries))
\tif *asJSON {
\t\terr = report.WriteJSON(os.Stdout, rows)
\t} else {
\t\terr = report.WriteTable(os.Stdout, rows)
\t}
\tif err != nil {
\t\tfail(err)
\t}
\tif *budget != "" {
\t\twarnOver(*budget, report.ByProject(filter.Apply(entries)))
\t}
}

// warnOver prints a warning on stderr for each project over its budget.
func warnOver(path string, rows []report.Row) {
\tfh, err := os.Open(path)
\tif err != nil {
\t\tfail(err)
\t}
\tdefer fh.Close()
\tb, err := report.ParseBudget(fh)
\tif err != nil {
\t\tfail(err)
\t}
\tfor _, r := range b.Over(rows) {
\t\tfmt.Fprintf(os.Stderr, "tally: %s is %.1fh over budget\\n", r.Key, r.Hours)
\t}
}

// day parses an optional YYYY-MM-DD flag value; empty means no bound.
func day(s string) (time.Time, error) {
\tif s == "" {
\t\treturn time.Time{}, nil
\t}
\treturn time.Parse("2006-01-02", s)
}

func fail(err error) {
\tfmt.Fprintln(os.Stderr, "tally:", err)
\tos.Exit(1)
}
"""
PARSE = """// Package entry reads time-log lines such as
//
//\t2026-11-02 09:00-10:30 tally parser work #review
//
// into entries: a start and an end on one day, a project, an activity and optional #tags.
package entry

import (
\t"bufio"
\t"fmt"
\t"os"
\t"sort"
\t"strings"
\t"time"
)

const layout = "2006-01-02 15:04"

// Entry is one line of the log.
type Entry struct {
\tProject, Activity string
\tTags              []string
\tStart, End        time.Time
}

// Duration is the time between start and end.
func (e Entry) Duration() time.Duration { return e.End.Sub(e.Start) }

// HasTag reports whether the entry carries #tag.
func (e Entry) HasTag(tag string) bool {
\tfor _, t := range e.Tags {
\t\tif t == tag {
\t\t\treturn true
\t\t}
\t}
\treturn false
}

// ParseLine parses one line: day, start-end, project, then activity words and #tags.
func ParseLine(line string) (Entry, error) {
\tf := strings.Fields(line)
\tspan := strings.SplitN(f[1], "-", 2)
\tstart, err := time.Parse(layout, f[0]+" "+span[0])
\tif err != nil {
\t\treturn Entry{}, err
\t}
\tend, err := time.Parse(layout, f[0]+" "+span[1])
\tif err != nil {
\t\treturn Entry{}, err
\t}
\te := Entry{Project: f[2], Start: start, End: end}
\tvar words []string
\tfor _, w := range f[3:] {
\t\tif strings.HasPrefix(w, "#") {
\t\t\te.Tags = append(e.Tags, w[1:])
\t\t} else {
\t\t\twords = append(words, w)
\t\t}
\t}
\te.Activity = strings.Join(words, " ")
\treturn e, nil
}

// ParseFile parses every line of a log, skipping blank lines and # comments.
func ParseFile(path string) ([]Entry, error) {
\tfh, err := os.Open(path)
\tif err != nil {
\t\treturn nil, err
\t}
\tdefer fh.Close()
\tvar out []Entry
\tsc := bufio.NewScanner(fh)
\tfor n := 1; sc.Scan(); n++ {
\t\tline := strings.TrimSpace(sc.Text())
\t\tif line == "" || strings.HasPrefix(line, "#") {
\t\t\tcontinue
\t\t}
\t\te, err := ParseLine(line)
\t\tif err != nil {
\t\t\treturn nil, fmt.Errorf("%s:%d: %w", path, n, err)
\t\t}
\t\tout = append(out, e)
\t}
\treturn out, sc.Err()
}

// Filter selects entries; its zero fields match everything.
type Filter struct {
\tProject      string
\tSince, Until time.Time
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Entry) bool {
\tif f.Project != "" && e.Project != f.Project {
\t\treturn false
\t}
\tif !f.Since.IsZero() && e.Start.Before(f.Since) {
\t\treturn false
\t}
\treturn f.Until.IsZero() || e.Start.Before(f.Until)
}

// Apply returns the matching entries, in order.
func (f Filter) Apply(entries []Entry) []Entry {
\tvar out []Entry
\tfor _, e := range entries {
\t\tif f.Match(e) {
\t\t\tout = append(out, e)
\t\t}
\t}
\treturn out
}

// Problem is something wrong with an entry that still parsed.
type Problem struct {
\tEntry  Entry
\tReason string
}

func (p Problem) String() string {
\treturn p.Entry.Start.Format(layout) + " " + p.Entry.Project + ": " + p.Reason
}

// Check reports entries that end before they start, last longer than limit, or overlap the one before.
func Check(entries []Entry, limit time.Duration) []Problem {
\tsorted := append([]Entry(nil), entries...)
\tsort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
\tvar out []Problem
\tfor i, e := range sorted {
\t\tswitch {
\t\tcase e.End.Before(e.Start):
\t\t\tout = append(out, Problem{e, "ends before it starts"})
\t\tcase e.Duration() > limit:
\t\t\tout = append(out, Problem{e, fmt.Sprintf("lasts %v, more than %v", e.Duration(), limit)})
\t\t}
\t\tif i > 0 && e.Start.Before(sorted[i-1].End) {
\t\t\tprev := sorted[i-1]
\t\t\tout = append(out, Problem{e, "overlaps " + prev.Start.Format("15:04") + " " + prev.Project})
\t\t}
\t}
\treturn out
}
"""
GROUPS = {"ByProject": ("project", "e.Project"), "ByDay": ("day", 'e.Start.Format("2006-01-02")'),
          "ByActivity": ("activity", "e.Activity"), "ByWeekday": ("weekday", "e.Start.Weekday().String()")}
REPORT = """// Package report groups time-log entries and writes the totals as a table or as JSON.
package report

import (
\t"bufio"
\t"encoding/json"
\t"fmt"
\t"io"
\t"sort"
\t"strconv"
\t"strings"
\t"text/tabwriter"
\t"time"

\t"github.com/example/tally/internal/entry"
)

// Row is the total of one group.
type Row struct {
\tKey     string        `json:"key"`
\tTotal   time.Duration `json:"-"`
\tHours   float64       `json:"hours"`
\tEntries int           `json:"entries"`
}

// group sums durations under key(e); rows come out largest first, ties by key.
func group(entries []entry.Entry, key func(entry.Entry) string) []Row {
\tindex := map[string]int{}
\tvar rows []Row
\tfor _, e := range entries {
\t\tk := key(e)
\t\ti, seen := index[k]
\t\tif !seen {
\t\t\ti = len(rows)
\t\t\tindex[k] = i
\t\t\trows = append(rows, Row{Key: k})
\t\t}
\t\trows[i].Total += e.Duration()
\t\trows[i].Entries++
\t}
\tfor i := range rows {
\t\trows[i].Hours = rows[i].Total.Hours()
\t}
\tsort.SliceStable(rows, func(i, j int) bool {
\t\tif rows[i].Total != rows[j].Total {
\t\t\treturn rows[i].Total > rows[j].Total
\t\t}
\t\treturn rows[i].Key < rows[j].Key
\t})
\treturn rows
}

""" + "".join(f"""// {name} sums the time spent per {what}, largest first.
func {name}(entries []entry.Entry) []Row {{
\treturn group(entries, func(e entry.Entry) string {{ return {key} }})
}}

""" for name, (what, key) in GROUPS.items()) + """// WriteTable writes rows as an aligned table with a total line.
func WriteTable(w io.Writer, rows []Row) error {
\ttw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
\tvar total time.Duration
\tfor _, r := range rows {
\t\tfmt.Fprintf(tw, "%s\\t%.2fh\\t%d\\t\\n", r.Key, r.Hours, r.Entries)
\t\ttotal += r.Total
\t}
\tfmt.Fprintf(tw, "total\\t%.2fh\\t\\t\\n", total.Hours())
\treturn tw.Flush()
}

// WriteJSON writes rows as an indented JSON array.
func WriteJSON(w io.Writer, rows []Row) error {
\tenc := json.NewEncoder(w)
\tenc.SetIndent("", "  ")
\treturn enc.Encode(rows)
}

// Budget is the hours each project may use in the period a report covers.
type Budget map[string]float64

// Over returns the rows whose hours exceed their budget, with Hours set to the excess.
func (b Budget) Over(rows []Row) []Row {
\tvar out []Row
\tfor _, r := range rows {
\t\tif limit, ok := b[r.Key]; ok && r.Hours > limit {
\t\t\tr.Hours -= limit
\t\t\tout = append(out, r)
\t\t}
\t}
\treturn out
}

// ParseBudget reads "project hours" lines such as "tally 40"; blank lines and # comments are skipped.
func ParseBudget(r io.Reader) (Budget, error) {
\tb := Budget{}
\tsc := bufio.NewScanner(r)
\tfor n := 1; sc.Scan(); n++ {
\t\tf := strings.Fields(sc.Text())
\t\tif len(f) == 0 || strings.HasPrefix(f[0], "#") {
\t\t\tcontinue
\t\t}
\t\tif len(f) != 2 {
\t\t\treturn nil, fmt.Errorf("budget line %d: want \\"project hours\\", got %q", n, sc.Text())
\t\t}
\t\thours, err := strconv.ParseFloat(f[1], 64)
\t\tif err != nil {
\t\t\treturn nil, fmt.Errorf("budget line %d: %w", n, err)
\t\t}
\t\tb[f[0]] = hours
\t}
\treturn b, sc.Err()
}
"""


def parse_line(line: str) -> tuple[datetime, datetime, str, str, int]:
    """What ParseLine makes of a log line: start, end, project, activity and the number of #tags."""
    day, span, project, *rest = line.split()
    start, end = (datetime.strptime(f"{day} {t}", "%Y-%m-%d %H:%M") for t in span.split("-"))
    return start, end, project, " ".join(w for w in rest if w[0] != "#"), sum(w[0] == "#" for w in rest)


README = """# tally

Totals the hours of a plain-text time log. One entry per line:

    2026-11-02 09:00-10:30 tally parser work #review

a day, a start and an end time on that day, a project, the activity, and optional `#tags`. Blank lines
and lines starting with `#` are skipped.

## Usage

    go install github.com/example/tally@latest
    tally testdata/nov.log                      # hours per project, largest first
    tally -by day -project infra testdata/nov.log
    tally -by activity -since 2026-11-10 -until 2026-11-17 -json testdata/nov.log
    tally -check 12h testdata/nov.log           # overlapping, backwards or over-long entries; exit 1 if any
    tally -budget hours.txt testdata/nov.log    # "project hours" lines; warns on stderr when one is over

Groupings: `project` (the default), `day`, `activity`, `weekday`. `-since` includes its day, `-until`
excludes it. The table ends with a `total` line; `-json` prints `[{"key", "hours", "entries"}]`.

Code: `main.go` (flags, output), `internal/entry` (parsing, filters, checks), `internal/report` (grouping,
writers, budgets); `testdata/nov.log` is a month of entries to try things on. Run `go test ./...` and
`go vet ./...` before pushing.
"""
BROKEN = "2026-11-01 17:30 tally release prep"  # no end time: the line the legacy session hunts for
