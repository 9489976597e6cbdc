"""fastokens (a dependency wherever it has a wheel) counts every text exactly as tiktoken does: on every distinct
text of ../shared/corpus, on hostile texts and on a seeded fuzz set. And a report picks it only where it
pays (a cold report with more unknown text than tokens.FAST_MIN_TEXT_BYTES), on the cores it is given."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
from agent_fixtures import Counted

from tests.conftest import CORPUS, needs_corpus
from xshare.agents.common import counting as counter
from xshare.measure import tokens

pytest.importorskip("fastokens", reason="fastokens has no wheel for this platform (or was left out)")


def counters() -> tuple[tokens.Counter, tokens.Counter]:
    """A tiktoken counter and a fastokens counter, neither remembering counts."""
    reference, fast = (tokens.Counter(tokens.choose(remember=False)) for _ in range(2))
    reference.load()
    fast.load(fast=True)
    assert fast.fast and not reference.fast
    return reference, fast


def hostile_texts() -> list[str]:
    return [
        " " * 200_000, "\t" * 70_000 + "x", " " * 1_200_000 + "end",  # the last: tiktoken alone panics
        " \t" * 300_000, "\n" * 100_000, "a" * 100_000, "\u3000" * 80_000,
        "lone \ud83d surrogate", "\udc00\ud800 both halves reversed", "😀\ud83d😀",
        "Grüße, мир, 世界, مرحبا, नमस्ते, 🎉 mixed\u200b scripts\ufeff",
        "<|endoftext|> and <|endofprompt|> are text here", "\x00\x01\x7f control", "",
        "   1\tdef f():\n   2\t    return 1\n" * 2000,
    ]


def fuzz_texts(seed: int = 24, count: int = 3000) -> list[str]:
    """Random strings over an alphabet that mixes scripts, blanks, digits, punctuation and surrogates."""
    rng = random.Random(seed)
    alphabet = (" \t\n\r" * 4 + "abcXYZ019_-.,;:'\"()[]{}<>|/\\" + "éßøñ" + "мир" + "世界漢字" + "مرح" + "😀🎉"
                + "\u200b\u3000\ufeff" + "\ud83d\udc00")
    texts = []
    for _ in range(count):
        size = rng.choice((1, 3, 10, 40, 200, 2000))
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, size))))
    return texts


def differing(texts: list[str]) -> list[int]:
    reference, fast = counters()
    return [index for index, text in enumerate(texts) if reference.count(text) != fast.count(text)]


def test_hostile_texts_count_the_same() -> None:
    assert differing(hostile_texts()) == []


def test_a_seeded_fuzz_set_counts_the_same() -> None:
    assert differing(fuzz_texts()) == []


def test_the_two_counters_can_differ() -> None:
    """The comparison is real: a counter that is off by one on one text is caught."""
    reference, fast = counters()
    text = fuzz_texts(count=1)[0]
    assert reference.count(text) == fast.count(text)
    assert reference.count(text) != fast.count(text + " and five more words")


@needs_corpus
def test_every_distinct_text_of_the_corpus_counts_the_same() -> None:
    from xshare.agents.claude_code import transcript as claude

    texts: dict[tuple[int, int], str] = {}

    def record(text: str) -> int:
        texts.setdefault((hash(text), len(text)), text)
        return 0

    roots = sorted(path / "projects" for path in (CORPUS / "claude").iterdir() if (path / "projects").is_dir())
    for file in claude.discover(roots):
        claude.ClaudeTranscript(file, Counted(record, "record")).catch_up()
    assert len(texts) > 1000
    assert differing(list(texts.values())) == []


def test_a_cold_report_loads_fastokens_only_above_the_crossover(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XSHARE_COUNTER", raising=False)
    enough = int(tokens.FAST_MIN_TEXT_BYTES / counter.TEXT_SHARE) + 1
    for to_read, workers, expected in ((1 << 20, 1, False), (enough, 1, True), (enough, 2, False),
                                       (2 * enough, 2, True)):
        made = tokens.Counter(tokens.choose(remember=False))
        counter.load_if_counting(made, to_read, workers)
        assert made.fast is expected
    monkeypatch.setenv("XSHARE_COUNTER", "tiktoken")
    made = tokens.Counter(tokens.choose(remember=False))
    counter.load_if_counting(made, 1 << 40)
    assert not made.fast


def test_workers_follow_the_cores_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert counter.cores() == 1
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert counter.cores() == (os.cpu_count() or 1)


@needs_corpus
def test_a_report_with_fastokens_has_the_same_figures(tmp_path) -> None:
    """A cold report over one corpus root, counted by each, with workers: byte-identical JSON."""
    root = next(path for path in sorted((CORPUS / "claude").iterdir()) if (path / "projects").is_dir())
    outputs = []
    for name in ("tiktoken", "fastokens"):
        env = {**os.environ, "XSHARE_COUNTER": name, "XSHARE_HOME": str(tmp_path / name)}
        done = subprocess.run([sys.executable, "-m", "xshare", "report", "--all", "--json", "--no-cache",
                               "--claude-root", str(root)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-500:]
        report = json.loads(done.stdout)
        report.get("window", {}).pop("until", None)
        assert report.pop("counter") == name and report.pop("counter_note")  # which counted, and why
        outputs.append(report)
    assert outputs[0] == outputs[1]
