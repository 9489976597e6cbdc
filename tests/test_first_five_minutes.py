"""Issue 21, the first five minutes: the demo's deliberate oddities labelled, status-line formats checked at
install, marks in one format and removable, the install files (LICENSE, plugin.json) truthful."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.commands.test_cli import run
from xshare.cli import main
from xshare.demo.corpus import DELIBERATE_ODDITIES
from xshare.live import status_render as statusline
from xshare.report.periods import marks_path, read_marks

REPO = Path(__file__).resolve().parents[1]


# --- finding 2: the demo's warnings say they are on purpose --------------------------------------------


def test_every_warning_of_the_demo_says_it_is_on_purpose(capsys):
    code, out, err = run(capsys, "report", "--demo")
    lines = err.splitlines()
    assert code == 0 and out.startswith("Exploration share") and "Traceback" not in err
    assert len(lines) == len(DELIBERATE_ODDITIES)  # both oddities still reported, as on any machine
    assert all(line.startswith("xshare: ") and "(on purpose: " in line for line in lines)


def test_the_same_oddity_outside_the_demo_is_not_called_deliberate(capsys, tmp_path: Path):
    project = tmp_path / "projects" / "-home-u-app"
    project.mkdir(parents=True)
    good = {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-11-30T10:00:00Z",
            "message": {"role": "user", "content": "hello"}}
    (project / "s1.jsonl").write_text(json.dumps(good) + "\n{not json\n" + json.dumps(good | {"uuid": "u2"}) + "\n")
    code, _, err = run(capsys, "report", "--all", "--no-history", "--claude-root", str(tmp_path / "projects"))
    assert "malformed lines skipped: 1" in err and "on purpose" not in err and "Traceback" not in err


def test_the_demo_figures_are_those_of_a_run_without_the_labels(capsys):
    """The labels change stderr only: the JSON report is the same figures twice over."""
    first = json.loads(run(capsys, "report", "--demo", "--json")[1])
    second = json.loads(run(capsys, "report", "--demo", "--json")[1])
    assert first["groups"] == second["groups"] and first["groups"]["claude-code/interactive"]["sessions"] == 6


# --- finding 7: status-line formats are checked at install ----------------------------------------------


@pytest.mark.parametrize(("flags", "said"), [
    (("--format", "{bogus} x"), "unknown field {bogus}"),
    (("--line2", "{last} · {nope}"), "unknown field {nope}"),
    (("--format", "explore {} calls"), "a field needs a name"),
    (("--format", "explore {context"), "not a format"),
    (("--format", "{calls:d}"), "not a format"),
])
def test_a_format_that_cannot_render_is_refused_with_the_fields(capsys, isolated_home: Path, flags, said):
    code, out, err = run(capsys, "statusline", "install", *flags)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert said in err and "the fields are " in err and "{context}" not in err.split("the fields are")[1]
    assert all(name in err.split("the fields are")[1].split() for name in ("context", "behind", "tokenizer"))
    assert not (isolated_home / ".claude" / "settings.json").exists()  # nothing written


def test_a_format_of_known_fields_installs(capsys, isolated_home: Path):
    code, out, _ = run(capsys, "statusline", "install", "--format", "explore {context} · {calls} calls{behind}",
                       "--line2", "{tokenizer} {last}")
    assert code == 0 and out.startswith("installed in ")
    assert "{behind}" in (isolated_home / ".claude" / "settings.json").read_text()


def test_every_field_a_format_may_name_renders(tmp_path: Path):
    every = " ".join("{" + name + "}" for name in statusline.FIELD_NAMES)
    assert statusline.format_problem(every) is None and statusline.format_problem(statusline.DEFAULT_FORMAT) is None
    assert set(statusline.FIELD_NAMES) >= {"context", "bill", "calib", "calls", "behind", "tokenizer", "rebuilt"}


def test_a_bad_format_already_in_settings_names_the_field_on_the_line(capsys, monkeypatch: pytest.MonkeyPatch):
    saved = {"exploration_share_of_context": 0.2, "api_calls": 3, "tokenizer": "o200k_base"}
    monkeypatch.setattr(statusline, "read_regular", lambda path: json.dumps(saved).encode())
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"session_id": "s"}')))
    assert statusline.main(["--format", "{bogus}", "--no-catch-up"]) == 0
    assert capsys.readouterr().out == "explore: unknown field {bogus}\n"


# --- finding 9: marks in one format, and removable ------------------------------------------------------


def test_a_mark_prints_the_same_when_made_and_when_listed(capsys):
    made = run(capsys, "mark", "--at", "2026-11-20T08:15:42.123456+00:00", "a CLAUDE.md rule")[1]
    listed = run(capsys, "mark")[1]
    assert made == "marked 2026-11-20 08:15 UTC  a CLAUDE.md rule\n"
    assert listed == "1  2026-11-20 08:15 UTC  a CLAUDE.md rule\n"


def test_a_mark_made_now_is_listed_as_it_was_printed(capsys):
    made = run(capsys, "mark", "added", "an", "index")[1]
    assert made.startswith(f"marked {datetime.now(timezone.utc):%Y-%m-%d}")
    assert run(capsys, "mark")[1] == "1  " + made.removeprefix("marked ")


def test_remove_a_mark_by_its_number_and_correct_one(capsys):
    for at, label in (("2026-11-01", "first"), ("2026-11-10", "wrong date"), ("2026-11-20", "third")):
        assert run(capsys, "mark", "--at", at, label)[0] == 0
    code, out, _ = run(capsys, "mark", "--remove", "2")
    assert code == 0 and out == "removed 2026-11-10 00:00 UTC  wrong date\n"
    assert run(capsys, "mark", "--at", "2026-11-12", "right date")[0] == 0  # the correction: mark again
    assert [mark["label"] for mark in read_marks()] == ["first", "right date", "third"]


@pytest.mark.parametrize("argv", [("--remove", "3"), ("--remove", "0"), ("--remove", "1", "label"),
                                  ("--remove", "1", "--at", "2026-11-01")])
def test_a_remove_that_cannot_be_done_is_refused_in_one_line(capsys, argv):
    run(capsys, "mark", "--at", "2026-11-01", "one")
    run(capsys, "mark", "--at", "2026-11-02", "two")
    before = marks_path().read_bytes()
    code, out, err = run(capsys, "mark", *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert marks_path().read_bytes() == before


def test_no_marks_is_said_and_remove_says_there_are_none(capsys):
    code, out, err = run(capsys, "mark")
    assert code == 0 and out == "" and "no marks yet" in err
    code, _, err = run(capsys, "mark", "--remove", "1")
    assert code == 2 and "there are no marks" in err


def test_mark_help_says_how_to_remove_and_correct(capsys):
    with pytest.raises(SystemExit):
        main(["mark", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--remove" in text and "To correct one, remove it and mark again" in text


# --- finding 10: installing -------------------------------------------------------------------------------


def test_the_license_is_the_mit_licence_the_manifests_name():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Copyright (c) " in text and "the xshare authors" in text
    assert "Permission is hereby granted, free of charge" in text and 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    assert json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["license"] == "MIT"
    assert 'license = { text = "MIT" }' in (REPO / "pyproject.toml").read_text()


def test_no_manifest_names_an_invented_home():
    for name in ("plugin.json", "marketplace.json"):
        text = (REPO / ".claude-plugin" / name).read_text()
        assert "http" not in text.replace("https://json.schemastore.org/", ""), name
    readme = (REPO / "README.md").read_text()
    assert "<owner>/xshare" not in readme and "/plugin marketplace add /path/to/xshare" in readme


class RecordingContext:
    """What Hermes's PluginContext offers a plugin; records which registrations the plugin made."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self.calls.append(name)


def test_the_hermes_plugin_replaces_no_tool_so_the_readme_can_say_answer_no():
    from xshare import hermes_plugin

    context = RecordingContext()
    hermes_plugin.register(context)
    assert "register_command" in context.calls and "register_cli_command" in context.calls
    assert set(context.calls) <= {"register_hook", "register_command", "register_cli_command"}  # no tool, no llm
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "Allow this plugin to replace built-in tools" in readme
    assert "hermes plugins enable xshare --no-allow-tool-override" in readme


def test_ci_run_says_it_installs_system_packages_and_can_be_told_not_to():
    script = (REPO / ".ci" / "run").read_text()
    apt_lines = [line for line in script.splitlines() if line.startswith("if ") and "apt-get" in line]
    assert len(apt_lines) == 3 and all('"${XSHARE_SKIP_APT:-0}" != 1' in line for line in apt_lines)
    readme = " ".join((REPO / "README.md").read_text().split())
    assert "XSHARE_SKIP_APT=1 .ci/run" in readme
    assert all(package in readme for package in ("`chromium`", "`tmux`", "`prometheus`"))


# --- finding 11: the HTML index reads at 1280 and 390 px; -o says what else it wrote --------------------


def test_a_table_shows_a_uuid_by_its_first_8_characters_and_a_long_name_cut():
    from xshare.html.index_page import SHOWN_ID, short_id

    assert short_id("1eaa61cb-668e-483a-b3ef-9fb0c5bfd87e") == "1eaa61cb"
    assert short_id("20261130_101500_ab12cd") == "20261130_101500_" [: SHOWN_ID - 1] + "\u2026"
    assert short_id("ses_short") == "ses_short"


def test_the_index_table_keeps_whole_ids_as_tooltips_and_hides_detail_on_a_phone(tmp_path: Path):
    from xshare.html.analysis import Linked
    from xshare.html.index_page import sessions_table

    parent = {"id": "1eaa61cb-668e-483a-b3ef-9fb0c5bfd87e", "agent": "claude-code", "source": "interactive",
              "model": "claude-opus-4-6", "started_at": "2026-11-12T10:05:00Z", "api_calls": 43,
              "prompt_tokens_billed": 1_451_782, "exploration_share_of_context": 0.234,
              "exploration_share_of_prompt": 0.22}
    child = {**parent, "id": parent["id"] + "/agent-acompact-b278210dcea95a24", "parent": parent["id"],
             "source": "internal"}
    html = sessions_table([Linked(parent, "p.html"), Linked(child, "c.html")], "Session", nested=True)
    assert f'title="{parent["id"]}">1eaa61cb</span>' in html
    assert 'title="agent-acompact-b278210dcea95a24">acompact</span>' in html  # as short as names it in the table
    assert f'data-session="{parent["id"]}"' in html  # the row still carries the whole id
    header = html.split("</thead>")[0]
    # on a phone the agent and source stand under the id and the start is left to the page; below 1000
    # pixels the model, duration, calls and the share of the billed prompt too
    assert header.count("hide-s") == 2 and header.count("hide-m") == 4
    assert '<span class="show-s note">Claude Code \u00b7 interactive</span>' in html
    assert '<th class="n">Exploration of context</th>' in header  # the headline stays on a phone
    assert 'class="sessions"' in html


def test_the_chart_keeps_mark_labels_above_the_plot_and_the_last_week_inside(tmp_path: Path):
    from xshare.html import chart
    from xshare.measure.ledger import CATEGORIES

    billed = dict.fromkeys(CATEGORIES, 0) | {"exploration": 200, "overhead": 800}
    rows = [{"id": f"s{day}", "agent": "claude-code", "source": "interactive",
             "started_at": f"2026-11-{day:02d}T10:00:00Z", "api_calls": 2, "prompt_tokens_billed": 1000,
             "context_tokens": 1000, "exploration_share_of_context": 0.2, "billed_tokens": billed,
             "first_time_tokens": billed}
            for day in (2, 9, 16, 23)]
    marks = [{"label": "first change", "at": "2026-11-09T00:00:00Z"},
             {"label": "a second change with a long label", "at": "2026-11-23T00:00:00Z"}]
    html = chart.chart_html(rows, marks, {})
    svg = html.split("</svg>")[0]
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    hundred = float(re.search(r'y1="([\d.]+)"[^>]*/><text x="4" y="[\d.]+" font-size="11">100%', svg).group(1))
    labels = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" font-size="11" fill="#7d3c98" text-anchor="(\w+)">', svg)
    assert len(labels) == 2 and all(float(y) < hundred - 8 for _, y, _ in labels)  # no series runs up there
    assert labels[0][1] != labels[1][1]  # neighbours on two rows
    assert labels[1][2] == "end" and float(labels[1][0]) < width  # the right-hand label ends at its line
    last = re.findall(r'<text(?: class="minor")? x="([\d.]+)" y="[\d.]+" font-size="11" '
                      r'text-anchor="middle">W47</text>', svg)
    assert last and float(last[0]) + 25 <= width  # "W47" (and "2026-W47") whole inside the drawing
    assert 'class="trend"' in svg and '<div class="scroll">' in html and "style=" not in html


def test_html_o_says_it_wrote_the_subagent_pages_beside_the_page(capsys, tmp_path: Path):
    out = tmp_path / "site" / "page.html"
    out.parent.mkdir()
    code, printed, err = run(capsys, "html", "--demo", "-o", str(out))
    beside = sorted(path.name for path in out.parent.iterdir() if path != out)
    assert code == 0 and printed.strip().endswith("page.html") and len(beside) == 1
    assert f"wrote {len(beside)} subagent page(s) beside it" in err and "on purpose" not in err


def test_html_index_of_the_demo_labels_its_oddities(capsys, tmp_path: Path):
    out = tmp_path / "index.html"
    code, _, err = run(capsys, "html", "--demo", "--index", "-o", str(out))
    problems = [line for line in err.splitlines() if "lines" in line]
    assert code == 0 and len(problems) == 2 and all("(on purpose: " in line for line in problems)

