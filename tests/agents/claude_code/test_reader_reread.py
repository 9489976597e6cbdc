"""Re-sent reads: the files Claude Code re-sends after a compaction, a category of their own, counted in
the form they were sent (a Read call and its line-numbered result), beside exploration, never in it."""

from __future__ import annotations

import json
from pathlib import Path

from agent_fixtures import Counted
from claude_2_1_fixtures import NewSession, Provider, chars

from xshare.agents.claude_code.reread import reread_texts
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe

SOURCE = "def retry(times):\n    for attempt in range(times):\n        yield attempt\n"


def file_attachment(path: str = "/home/dev/app/retry.py", content: str = SOURCE, start: int = 1) -> dict:
    """A `file` attachment in 2.1.332's shape (invented content)."""
    lines = content.split("\n")
    return {"type": "file", "filename": path, "displayPath": Path(path).name,
            "content": {"type": "text", "file": {"filePath": path, "content": content, "numLines": len(lines),
                                                 "startLine": start, "totalLines": len(lines)}},
            "savedCopyFraming": {"enveloped": False}}


def test_the_texts_are_the_read_call_and_its_numbered_result_as_sent():
    called, result = reread_texts(file_attachment(), "2.1.332")
    assert called == ('<system-reminder>\nCalled the Read tool with the following input: '
                      '{"file_path":"/home/dev/app/retry.py"}\n</system-reminder>')
    assert result == ("<system-reminder>\nResult of calling the Read tool:\n1\tdef retry(times):\n"
                      "2\t    for attempt in range(times):\n3\t        yield attempt\n4\t\n</system-reminder>")


def test_a_partial_read_keeps_its_line_numbers_and_old_versions_use_the_arrow_form():
    _, result = reread_texts(file_attachment(content="x = 1\ny = 2", start=40), "2.1.332")
    assert "\n40\tx = 1\n41\ty = 2\n" in result
    _, old = reread_texts(file_attachment(content="x = 1"), "2.1.11")
    assert "\n     1\u2192x = 1\n" in old


def test_other_attachments_are_not_re_sent_reads():
    image = file_attachment()
    image["content"] = {"type": "image", "file": {"base64": "AAAA", "type": "image/png"}}
    memory = {"type": "nested_memory", "path": "/home/dev/app/CLAUDE.md",
              "content": {"type": "Project", "content": "Use tabs."}}
    for attachment in (image, memory, {"type": "file", "filename": "x", "content": "not a dict"},
                       {"type": "hook_additional_context", "content": ["a hook said this"]}):
        assert reread_texts(attachment, "2.1.332") == []


def a_compacted_session(tmp_path: Path) -> tuple[Path, int]:
    """A read, /compact, the file re-sent as an attachment, two more calls; returns the file and the
    chars/4 size of the re-sent read."""
    session = NewSession(Provider())
    session.user("look at the retry helper")
    tool = session.call("", ("Read", {"file_path": "/home/dev/app/retry.py"}))
    session.result(tool, "\n".join(f"{n}\t{line}" for n, line in enumerate(SOURCE.split("\n"), 1)))
    session.call("It retries.")
    session.compact("<summary>The user read the retry helper.</summary>")
    session.rows.append(session._envelope("attachment", {"attachment": file_attachment()}))
    memory = {"type": "nested_memory", "path": "/home/dev/app/CLAUDE.md",
              "content": {"type": "Project", "content": "Use tabs."}}
    session.rows.append(session._envelope("attachment", {"attachment": memory}))
    sent = sum(chars(text) for text in reread_texts(file_attachment(), "2.1.332"))
    session.context += sent
    session.user("and now?")
    session.call("Still fine.")
    session.call("Done.")
    return session.write(tmp_path / "projects" / "-home-dev-app" / f"{session.session_id}.jsonl"), sent


def test_a_re_sent_read_is_its_own_category_and_stays_out_of_the_headline(tmp_path: Path):
    path, sent = a_compacted_session(tmp_path)
    transcript = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    transcript.catch_up()
    row = transcript.row()
    assert row["first_time_tokens"]["reread"] == sent
    assert row["billed_tokens"]["reread"] == 2 * sent  # present on both calls after the compaction
    # the CLAUDE.md attachment is still injected context, and exploration only holds the Read itself
    assert row["billed_tokens"]["injected"] > 0
    assert row["exploration_share_of_context"] == row["billed_tokens"]["exploration"] / row["context_tokens"]
    assert row["reread_share_of_context"] == 2 * sent / row["context_tokens"]
    assert row["reread_share_of_prompt"] == 2 * sent / row["prompt_tokens_billed"]


def test_the_session_text_shows_re_sent_reads_beside_exploration(tmp_path: Path, capsys):
    from xshare.cli import main

    path, _ = a_compacted_session(tmp_path)
    assert main(["session", str(path), "--estimate", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert main(["session", str(path), "--estimate"]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("Re-sent reads"))
    assert f"{row['reread_share_of_context']:.1%} of the recorded context" in line
    assert row["reread_share_of_context"] > 0


def test_the_html_summary_shows_re_sent_reads_as_their_own_category(tmp_path: Path, capsys, monkeypatch):
    from xshare.cli import main

    monkeypatch.setenv("XSHARE_HOME", str(tmp_path / "home"))
    path, _ = a_compacted_session(tmp_path)
    assert main(["session", str(path), "--estimate", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    page = tmp_path / "page.html"
    assert main(["html", str(path), "-o", str(page), "--estimate"]) == 0
    html = page.read_text()
    assert 'class="c-reread"' in html and "Re-sent reads" in html
    assert f'<data id="billed-reread" value="{row["billed_tokens"]["reread"]}">' in html
    assert f'<data id="row-reread_share_of_context" value="{row["reread_share_of_context"]!r}">' in html


def test_an_attachment_counts_as_rendered_when_the_row_says_what_was_sent(tmp_path: Path):
    session = NewSession(Provider())
    session.user("hello")
    sent = "<system-reminder>\nThe environment: Linux, bash, /home/dev/app.\n</system-reminder>"
    row = session._envelope("attachment", {"attachment": {"type": "environment", "snapshot": "{}"},
                                           "rendered": [{"content": sent}], "renderedRole": "system"})
    session.rows.append(row)
    reread = session._envelope("attachment", {"attachment": file_attachment(),
                                              "rendered": [{"content": "as sent, verbatim"}]})
    session.rows.append(reread)
    session.call("Hi.")
    transcript = ClaudeTranscript(describe(session.write(tmp_path / "s.jsonl")), Counted(chars, "chars/4"))
    transcript.catch_up()
    first = transcript.row()["first_time_tokens"]
    # the payload alone would have counted nothing; a role-system attachment goes out without its wrapper
    assert first["injected"] == chars("The environment: Linux, bash, /home/dev/app.")
    assert first["reread"] == chars("as sent, verbatim")


def test_messages_a_compaction_preserves_stay_present_after_it(tmp_path: Path):
    """2.1.3xx auto-compaction keeps the running turn (compactMetadata.preservedMessages) and re-sends it
    after the summary; the rest goes."""
    session = NewSession(Provider())
    session.user("an early prompt that the summary replaces " * 5)
    session.call("An early reply.")
    session.user("read the helper")
    prompt_uuid = session.rows[-1]["uuid"]
    tool = session.call("", ("Read", {"file_path": "/home/dev/app/retry.py"}))
    session.result(tool, SOURCE)
    result_uuid = session.rows[-1]["uuid"]
    session.compact("<summary>Earlier work.</summary>")
    boundary = next(row for row in reversed(session.rows) if row.get("subtype") == "compact_boundary")
    boundary["compactMetadata"]["preservedMessages"] = {"uuids": [prompt_uuid, result_uuid]}
    session.context += chars("read the helper") + chars(SOURCE)  # what the provider bills: they were re-sent
    session.call("Done.")
    path = session.write(tmp_path / "s.jsonl")
    transcript = ClaudeTranscript(describe(path), Counted(chars, "chars/4"), detail=True)
    transcript.catch_up()
    transcript.row()  # the last call stays open until its rows have ended: the row settles it
    last = transcript.ledger.call_log[-1]["present"]
    assert last["exploration"] == chars(SOURCE)  # the preserved result (its Read call was not kept)
    summary = next(row for row in session.rows if row.get("isCompactSummary"))["message"]["content"]
    assert last["conversation"] == chars("read the helper") + chars(summary)
    # fed line by line through saved state, the same
    pieces = ClaudeTranscript(describe(path), Counted(chars, "chars/4"))
    for line in path.read_bytes().splitlines(keepends=True):
        pieces.feed(line)
        pieces = ClaudeTranscript.from_state(pieces.to_state(), describe(path), Counted(chars, "chars/4"))
    pieces.finish()
    assert pieces.row()["billed_tokens"] == transcript.row()["billed_tokens"]
