"""Issue 28, part 1: no call's modelled context exceeds its bill, and nothing the records show was sent is cut
to make it fit. The first call's bill is not the overhead for ever: a compaction and a model switch say it
anew, context from before the file is `inherited` (shown, never exploration, never overhead), the cache's
re-read prefix vouches for the messages in it, and an estimate (an image, a PDF) gives way before a message
counted to the token. Fixtures: ledgers fed by hand, invented Claude Code 2.1.332 sessions with a simulated
provider that bills what was sent, and, where it is beside the checkout, ../shared/corpus."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from agent_fixtures import Counted
from claude_2_1_fixtures import OVERHEAD, NewSession, Provider, chars

from tests.agents.claude_code.test_reader_context import SentSession, b64, pdf, png, read_row
from tests.conftest import CORPUS, append_in_pieces, needs_corpus
from xshare.agents.claude_code.transcript import ClaudeTranscript, describe
from xshare.measure.fit import INHERITED_MARGIN
from xshare.measure.ledger import CATEGORIES, ROUNDING_ALLOWANCE, ROUNDING_PER_MESSAGE, Ledger, session_row


def row(ledger: Ledger) -> dict:
    return session_row(ledger, session_id="s", agent="claude-code", source="interactive", tokenizer="chars/4")


def cached(read: int) -> dict[str, int]:
    return {"cache_read": read}


# --- the ledger -----------------------------------------------------------------------------------------


def test_what_the_cache_re_read_is_never_trimmed_the_overhead_gives_way():
    ledger = Ledger()
    ledger.add("conversation", 100)
    ledger.call(1100, usage=cached(0))  # overhead 1000
    ledger.add("exploration", 450)
    ledger.call(1550, usage=cached(1100))
    # the next call re-read everything the last one sent, yet billed 50 less: the overhead was over-estimated
    ledger.call(1500, usage=cached(1550))
    present, overhead = ledger.present()
    assert present["conversation"] == 100 and present["exploration"] == 450
    assert overhead == 950
    assert ledger.billed_tokens()["exploration"] == 900
    assert row(ledger)["context_tokens"] == 1100 + 1550 + 1500  # each call's context is its bill


def test_what_the_cache_does_not_vouch_for_gives_way_by_the_excess_oldest_first():
    ledger = Ledger()
    for key in "abc":
        ledger.add("conversation", 100, key=key)
    ledger.call(1300, usage=cached(0))  # overhead 1000
    ledger.add("exploration", 200)
    # the prefix re-read ends after the first message: of the second and third, 150 tokens were cleared or cut
    ledger.call(1350, usage=cached(1100))
    present, overhead = ledger.present()
    assert overhead == 1000
    assert present["conversation"] == 100 + 0 + 50 and present["exploration"] == 200
    assert row(ledger)["context_tokens"] == 1300 + 1350


def test_a_model_switch_lowers_the_overhead_rather_than_drop_messages():
    ledger = Ledger()
    ledger.add("conversation", 100)
    ledger.call(1100, model="claude-haiku-4-5")  # overhead 1000: what the bill exceeds the file by
    ledger.add("exploration", 400)
    ledger.call(900, model="claude-sonnet-4-6")  # another system prompt: 400 of overhead
    present, overhead = ledger.present()
    assert present["exploration"] == 400 and overhead == 400
    assert ledger.billed_tokens()["exploration"] == 400
    ledger.call(1000, model="claude-sonnet-4-6")  # no switch, a bigger bill: the overhead stays
    assert ledger.present()[1] == 400


def test_context_from_before_the_file_is_inherited_not_overhead():
    ledger = Ledger(detail=True)
    ledger.add("conversation", 50)
    ledger.call(60_050, model="claude-haiku-4-5")  # a resumed conversation rides on the first calls
    ledger.call(60_100, model="claude-haiku-4-5")
    ledger.compact()
    ledger.add("conversation", 80)  # the summary
    ledger.call(1080, model="claude-sonnet-4-6")  # after the compaction: the thread's own overhead, 1000
    ledger.add("exploration", 300)
    ledger.call(1380, model="claude-sonnet-4-6")
    billed = ledger.billed_tokens()
    assert billed["inherited"] == 59_000 + 59_000
    assert billed["overhead"] == 1000 * 4
    assert billed["exploration"] == 300
    figures = row(ledger)
    assert figures["context_tokens"] <= figures["prompt_tokens_billed"]
    assert sum(figures["billed_tokens"][name] for name in CATEGORIES) == figures["context_tokens"]
    assert figures["exploration_share_of_context"] == pytest.approx(300 / figures["context_tokens"])
    # the per-call log the page draws splits each call the same way, and its calls sum to the totals
    log = ledger.calls_detail()
    assert [call["present"]["inherited"] for call in log] == [59_000, 59_000, 0, 0]
    assert sum(call["overhead"] for call in log) == billed["overhead"]
    for name in CATEGORIES[:-1]:
        assert sum(call["present"][name] for call in log) == billed[name]


def test_a_small_difference_between_estimates_is_overhead_not_inherited():
    ledger = Ledger()
    ledger.call(20_000 + INHERITED_MARGIN, model="m")
    ledger.compact()
    ledger.call(20_000, model="m")
    billed = ledger.billed_tokens()
    assert billed["inherited"] == 0 and billed["overhead"] == 40_000 + INHERITED_MARGIN


STEPS = [("call", 30_000, "side"), ("compact", "side"), ("add", "exploration", 100, "side"), ("call", 5100, "side"),
         ("reset", "side"), ("add", "conversation", 10, "main"), ("call", 2010, "main")]


def fed(stop: int | None = None) -> dict[str, int]:
    """The steps through one ledger; at `stop`, a fresh ledger from the saved state takes over."""
    ledger = Ledger()
    for index, (kind, *args) in enumerate(STEPS):
        if index == stop:
            ledger = Ledger.from_state(ledger.to_state())
        if kind == "call":
            ledger.call(args[0], thread=args[1])
        elif kind == "compact":
            ledger.compact(thread=args[0])
        elif kind == "add":
            ledger.add(args[0], args[1], thread=args[2])
        else:
            ledger.reset_thread(args[0])
    return ledger.billed_tokens()


def test_the_split_survives_a_saved_state_and_an_ended_side_thread():
    whole = fed()
    assert whole["inherited"] == 25_000 and whole["exploration"] == 100 and whole["overhead"] == 5000 * 2 + 2000
    for stop in range(len(STEPS)):
        assert fed(stop) == whole


# --- Claude Code transcripts ---------------------------------------------------------------------------


class Resumed(NewSession):
    """A session whose first calls carry `inherited` tokens of a conversation the file does not hold, until a
    compaction; each call is made by `model`."""

    def __init__(self, provider: Provider, inherited: int) -> None:
        super().__init__(provider)
        self.inherited = inherited
        self.model = "claude-haiku-4-5-20251001"

    def call(self, reply: str = "", tool: tuple[str, dict] | None = None) -> str | None:
        self.context += self.inherited
        tool_id = super().call(reply, tool)
        self.context -= self.inherited
        for found in self.rows:
            if found["type"] == "assistant" and found["requestId"] == f"req_{len(self.provider.calls):04d}":
                found["message"]["model"] = self.model
        return tool_id

    def compact(self, summary: str, tries: int = 1, instruction: int = 250) -> None:
        super().compact(summary, tries, instruction)
        self.inherited = 0


def a_resumed_session(root: Path) -> tuple[Path, Resumed, int]:
    """The shape the issue found on a real history: Haiku calls on a whole earlier conversation, a compaction, then a
    Sonnet session that reads. Returns the path, the session, and the exploration tokens carried."""
    session = Resumed(Provider(), inherited=160_000)
    session.user("continue where we left off")
    session.call("Picking up the earlier work.")
    session.call("Still here.")
    session.compact("Summary: the earlier work added a retry policy.")
    session.model = "claude-sonnet-4-6"
    session.user("now read the config")
    tool = session.call("", ("Read", {"file_path": "/home/dev/app/config.py"}))
    result = "\n".join(f"{n}\tSETTING_{n} = {n * 7}" for n in range(1, 400))
    session.result(tool, result)
    session.call("The config sets 399 values.")
    session.call("Anything else?")
    carried = 2 * (chars(result) + chars('Read {"file_path":"/home/dev/app/config.py"}'))  # the last two calls
    return session.write(root / "projects" / "-home-dev-app" / f"{session.session_id}.jsonl"), session, carried


def test_a_resumed_session_reads_its_exploration_and_shows_what_it_inherited(tmp_path: Path):
    path, session, carried = a_resumed_session(tmp_path)
    figures, _ = read_row(path)
    recorded = [figures["billed_tokens"][name] for name in CATEGORIES]
    assert sum(recorded) == figures["context_tokens"]
    assert figures["context_tokens"] <= figures["prompt_tokens_billed"] * (1 + ROUNDING_ALLOWANCE)
    assert figures["billed_tokens"]["exploration"] == carried
    assert figures["billed_tokens"]["inherited"] == 2 * 160_000  # the two Haiku calls, exactly
    assert figures["billed_tokens"]["overhead"] == OVERHEAD * 5
    assert figures["exploration_share_of_context"] == pytest.approx(carried / figures["context_tokens"])
    assert not figures.get("bill_short")


def test_a_resumed_session_split_anywhere_gives_the_same_row(tmp_path: Path):
    path, _, _ = a_resumed_session(tmp_path)
    whole, _ = read_row(path)
    target = tmp_path / "live" / path.name
    transcript = ClaudeTranscript(describe(target), Counted(chars, "chars/4"))
    for _ in append_in_pieces(path, target, random.Random(28), 30):
        transcript = ClaudeTranscript.from_state(transcript.to_state(), describe(target), Counted(chars, "chars/4"))
        transcript.catch_up()
    assert transcript.row()["billed_tokens"] == whole["billed_tokens"]


def test_an_estimate_the_bill_has_no_room_for_gives_way_not_the_messages(tmp_path: Path):
    """The wire scenario of the issue: a provider that bills the texts as sent and the media not at all."""
    session = SentSession(Provider())
    start = "SessionStart:startup hook success: " + "the service is called relay. " * 40
    session.reminder("hook_success", start)
    session.user("look at the chart and the report")
    session.read("/home/dev/app/chart.png", [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": b64(png(300, 200))}}], 0)
    session.read("/home/dev/app/report.pdf", [
        {"type": "text", "text": "PDF file read: /home/dev/app/report.pdf (1.2KB)"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf(1))}}], 0)
    session.call("Both read.")
    path = session.write(tmp_path / "projects" / "-home-dev-app" / f"{session.session_id}.jsonl")
    figures, _ = read_row(path)
    calls = len(session.provider.calls)
    assert figures["billed_tokens"]["injected"] == chars(start) * calls  # the first turn's reminder, every call
    # what the provider carried, but for the rounding the cap lets each present message take
    slack = ROUNDING_PER_MESSAGE * len(session.rows) * calls
    assert session.exploration <= figures["billed_tokens"]["exploration"] <= session.exploration + slack
    assert figures["context_tokens"] <= figures["prompt_tokens_billed"] + slack


# --- other people's histories ------------------------------------------------------------------------------

def first_bill(path: Path) -> int:
    """The prompt tokens a transcript's first recorded call was billed (0 when it records none)."""
    with path.open("rb") as handle:
        for line in handle:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            message = row.get("message") if row.get("type") == "assistant" else None
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(usage, dict):
                return sum(usage.get(name) or 0 for name in
                           ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    return 0


@needs_corpus
def test_corpus_sessions_whose_first_call_carries_a_whole_conversation_read_their_exploration():
    """Found by their shape, not by name: main transcripts whose first call bills over 100k tokens (a resumed
    conversation rides on it). Each stays within its bill; each that read files has a share; some inherited."""
    found = [path for path in sorted(CORPUS.glob("claude/*/projects/*/*.jsonl")) if first_bill(path) > 100_000]
    if not found:
        pytest.skip("this corpus holds no such session")
    rows = [read_row(path)[0] for path in found]
    for figures in rows:
        assert figures["context_tokens"] <= figures["prompt_tokens_billed"]
        if figures["first_time_tokens"]["exploration"] > 20_000:
            assert figures["exploration_share_of_context"] > 0.05
    assert any(figures["billed_tokens"]["inherited"] > 0 for figures in rows)
