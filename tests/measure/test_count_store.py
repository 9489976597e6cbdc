"""The count store: token counts remembered across processes by a digest of the text, never a wrong one,
never in the way of a report (damaged, full, unwritable), never read or written under --no-cache."""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xshare.agents.claude_code import rows_cache
from xshare.agents.common import counting as counter
from xshare.cli import main
from xshare.demo import write_demo_corpus
from xshare.measure import count_store, tokens

REPO = Path(__file__).resolve().parents[2]
# varied texts: unicode, lone surrogates, blank runs too long for tiktoken in one piece, code, JSON
TEXTS = [
    "hello world", "Grüße, мир, 世界 🌍 — ok", "lone \ud800 surrogate and \udfff another", "\ud83d",
    "def f(x):\n\treturn x  # tab\r\n", '{"tool_use_id": "toolu_01", "content": [1, 2, "x"]}',
    "a" + " " * (3 * tokens.LONG_RUN) + "b", "x" + "\t " * (5 * tokens.LONG_RUN) + "y\n",
    "\n" * 5000, "<|endoftext|> in a transcript", "é" * 70_000,
]


@pytest.fixture(autouse=True)
def fresh_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts like a new process: no store loaded, no counter, no tokenizer built."""
    monkeypatch.setattr(count_store, "_opened", {})
    monkeypatch.setattr(counter, "_counter", None)
    tokens._load_o200k.cache_clear()


def plain_counts(texts: list[str]) -> list[int]:
    counter = tokens.Counter(tokens.choose(remember=False))
    assert counter.store is None
    return [counter.count(text) for text in texts]


def counting_encoder(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wraps the tokenizer so each text tiktoken encodes is recorded."""
    encoded: list[str] = []
    real = tokens._load_o200k

    class Recording:
        def __init__(self, encoding) -> None:
            self.encoding = encoding

        def encode_ordinary(self, text: str) -> list[int]:
            encoded.append(text)
            return self.encoding.encode_ordinary(text)

    monkeypatch.setattr(tokens, "_load_o200k", lambda vocab: Recording(real(vocab)))
    return encoded


def store_entries(path: Path) -> dict[int, int]:
    blocks, used, garbage = count_store.decode_blocks(path.read_bytes())
    assert not garbage and used == path.stat().st_size
    return {key: value for keys, values in blocks for key, value in zip(keys, values, strict=True)}


def expected_entries(texts: list[str]) -> dict[int, int]:
    counts = plain_counts(texts)
    found = {}
    for text, count in zip(texts, counts, strict=True):
        data = text.encode("utf-8", "surrogatepass")
        if text:
            found[count_store.digest(data)] = len(data) << 32 | count
    return found


def test_counts_read_from_the_store_equal_tiktokens(monkeypatch: pytest.MonkeyPatch):
    expected = plain_counts(TEXTS + [""])
    first = tokens.Counter(tokens.choose())
    assert [first.count(text) for text in TEXTS + [""]] == expected
    first.flush()
    assert store_entries(tokens.store_path()) == expected_entries(TEXTS)
    monkeypatch.setattr(count_store, "_opened", {})  # a new process: only the file is shared
    encoded = counting_encoder(monkeypatch)
    second = tokens.Counter(tokens.choose())
    assert [second.count(text) for text in TEXTS + [""]] == expected
    assert encoded == [] and second.store.hits == len(TEXTS)


SCRIPT = """
import sys
from xshare.measure import tokens
texts = [f"text {i} " * (i % 7 + 1) + chr(0x400 + i % 300) for i in range(int(sys.argv[1]), int(sys.argv[2]))]
encoded = []
real = tokens._load_o200k
class Recording:
    def __init__(self, encoding):
        self.encoding = encoding
    def encode_ordinary(self, text):
        encoded.append(text)
        return self.encoding.encode_ordinary(text)
tokens._load_o200k = lambda vocab: Recording(real(vocab))
counter = tokens.Counter(tokens.choose())
for number, text in enumerate(texts):
    counter.count(text)
    if number % 50 == 49:
        counter.flush()
counter.flush()
print(len(encoded))
"""


def run_counting(start: int, end: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(start), str(end)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})


def generated(start: int, end: int) -> list[str]:
    return [f"text {i} " * (i % 7 + 1) + chr(0x400 + i % 300) for i in range(start, end)]


def test_another_process_reads_what_one_counted():
    assert run_counting(0, 300).communicate()[0].strip() == "300"
    again = run_counting(0, 300).communicate()[0].strip()
    assert again == "0"  # every text was in the store: tiktoken encoded nothing
    assert run_counting(250, 320).communicate()[0].strip() == "20"  # only the new ones


def test_processes_appending_at_once_leave_only_right_counts():
    workers = [run_counting(0, 3000), run_counting(1000, 4000), run_counting(2000, 5000)]
    assert all(worker.wait(timeout=300) == 0 for worker in workers)
    found = store_entries(tokens.store_path())  # every block intact, no torn or interleaved append
    assert found == expected_entries(generated(0, 5000))


def filled_store(texts: list[str]) -> Path:
    counter = tokens.Counter(tokens.choose())
    for text in texts:
        counter.count(text)
        counter.flush()  # one block per text: damage can fall inside the file
    return tokens.store_path()


def test_a_torn_last_block_is_survived_quietly_and_rewritten(monkeypatch, capsys):
    path = filled_store(TEXTS)
    expected, kept = plain_counts(TEXTS), expected_entries(TEXTS[:-1])
    path.write_bytes(path.read_bytes()[:-5])  # an append cut short (a full disk, a crash, one in progress)
    monkeypatch.setattr(count_store, "_opened", {})
    encoded = counting_encoder(monkeypatch)
    counter = tokens.Counter(tokens.choose())
    assert [counter.count(text) for text in TEXTS] == expected
    # only the torn entry was counted again (a piece as long as its is counted in parts of it: long_text.py)
    assert encoded and all(text in TEXTS[-1] for text in encoded)
    # nothing said: an append still being written looks the same, and a lost entry costs one recount
    assert capsys.readouterr().err == ""
    assert store_entries(path) == kept  # rewritten whole, the torn block gone


@pytest.mark.parametrize("damage", ["garbage", "flipped"])
def test_a_damaged_store_is_reported_once_and_rewritten(damage: str, monkeypatch, capsys):
    path = filled_store(TEXTS)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    if damage == "garbage":
        data[middle:middle + 64] = bytes(64)  # zeros: no magic, no checksum of any block matches
    else:  # one bit of one count: the block's checksum must catch it
        data[-3] ^= 0x10
    path.write_bytes(bytes(data))
    monkeypatch.setattr(count_store, "_opened", {})
    counter = tokens.Counter(tokens.choose())
    assert [counter.count(text) for text in TEXTS] == plain_counts(TEXTS)
    counter.flush()
    err = capsys.readouterr().err
    assert err.count("damaged") == 1 and "counted again" in err
    assert store_entries(path) == expected_entries(TEXTS)  # intact again, every entry right


def test_another_tokenizer_rule_never_reads_these_counts(monkeypatch: pytest.MonkeyPatch):
    theirs = filled_store(TEXTS[:3])
    expected = plain_counts(TEXTS[:3])
    monkeypatch.setattr(count_store, "_opened", {})
    monkeypatch.setattr(tokens, "COUNT_VERSION", tokens.COUNT_VERSION + 1)
    encoded = counting_encoder(monkeypatch)
    counter = tokens.Counter(tokens.choose())
    assert [counter.count(text) for text in TEXTS[:3]] == expected
    assert len(encoded) == 3 and counter.store.path != theirs
    assert tokens.Counter(tokens.choose(estimate=True)).store is None  # chars/4 needs no store


def test_a_digest_collision_or_impossible_count_is_never_used(tmp_path: Path):
    store = count_store.CountStore(tmp_path / "s.counts")
    store.put(b"abcd", 2)
    assert store.get(b"abcd") == 2
    # a planted entry whose length differs (a collision) or whose count exceeds the bytes is refused
    key = count_store.digest(b"xyz")
    block = count_store.encode_block([(key, 4 << 32 | 1), (count_store.digest(b"ab"), 2 << 32 | 9)])
    (tmp_path / "t.counts").write_bytes(block)
    other = count_store.CountStore(tmp_path / "t.counts")
    assert other.get(b"xyz") is None and other.get(b"ab") is None


def test_the_file_stays_under_its_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(count_store, "MAX_BYTES", 4096)
    path = tmp_path / "capped.counts"
    store = count_store.CountStore(path)
    for number in range(600):
        store.put(f"text number {number}".encode(), 3)
        if number % 40 == 39:
            store.flush()
            assert path.stat().st_size <= 4096
    fresh = count_store.CountStore(path)
    assert fresh.get(b"text number 599") == 3  # the last append survives a restart of the file
    assert len(fresh) < 600


def test_many_small_appends_are_compacted_into_one_sorted_block(tmp_path: Path):
    path = tmp_path / "scattered.counts"
    writer = count_store.CountStore(path)
    for number in range(6000):
        writer.put(f"t{number}".encode(), 1)
        if number % 100 == 99:
            writer.flush()
    reader = count_store.CountStore(path)
    assert len(reader) == 6000
    blocks, _, _ = count_store.decode_blocks(path.read_bytes())
    assert len(blocks) == 1 and list(blocks[0][0]) == sorted(blocks[0][0])
    assert all(reader.get(f"t{number}".encode()) == 1 for number in range(0, 6000, 7))


def report(capsys, root: Path, *extra: str) -> tuple[dict, str]:
    assert main(["report", "--all", "--json", "--claude-root", str(root), "--hermes-db", str(root / "none.db"),
                 *extra]) == 0
    captured = capsys.readouterr()
    figures = json.loads(captured.out)
    figures["window"].pop("until")  # the time of the run
    return figures, captured.err


def counted_alike(one: dict, other: dict) -> bool:
    """The same figures, whichever counter counted them (the reports' `counter` says which, and why)."""
    return ({key: value for key, value in one.items() if not key.startswith("counter")}
            == {key: value for key, value in other.items() if not key.startswith("counter")})


def test_a_report_whose_texts_are_known_never_loads_tiktoken(tmp_path: Path, monkeypatch, capsys):
    root = write_demo_corpus(tmp_path / "claude")
    first, _ = report(capsys, root)
    rows_cache.cache_file().unlink()  # the rows cache goes (an xshare upgrade); the counts stay
    monkeypatch.setattr(counter, "_counter", None)
    monkeypatch.setattr(count_store, "_opened", {})

    loads = []

    def refuse(vocab):
        loads.append(vocab)
        raise AssertionError("tiktoken loaded although every text was known")

    monkeypatch.setattr(tokens, "_load_o200k", refuse)
    again, _ = report(capsys, root)
    assert loads == [] and counted_alike(again, first)
    assert (first["counter"], again["counter"]) == ("tiktoken", None)  # the Tokenizer line says none loaded
    assert rows_cache.cache_file().is_file()


def test_no_cache_neither_reads_nor_writes_the_store(tmp_path: Path, monkeypatch, capsys):
    root = write_demo_corpus(tmp_path / "claude")
    fresh, _ = report(capsys, root, "--no-cache")
    assert not tokens.store_path().exists()
    stored, _ = report(capsys, root)
    assert counted_alike(stored, fresh)  # the same figures with and without the store
    before = tokens.store_path().read_bytes(), tokens.store_path().stat().st_mtime_ns
    monkeypatch.setattr(counter, "_counter", None)
    monkeypatch.setattr(count_store, "_opened", {})
    encoded = counting_encoder(monkeypatch)
    again, _ = report(capsys, root, "--no-cache")
    assert counted_alike(again, fresh) and encoded  # everything counted by tiktoken again
    assert (tokens.store_path().read_bytes(), tokens.store_path().stat().st_mtime_ns) == before


def test_an_unwritable_store_still_gives_the_report(tmp_path: Path, capsys):
    root = write_demo_corpus(tmp_path / "claude")
    home = Path(os.environ["XSHARE_HOME"])
    home.mkdir(parents=True)
    (home / "counts").write_text("a file where the store's folder belongs")  # refused even to root
    stored, err = report(capsys, root)
    assert err.count("could not keep token counts") == 1
    assert (home / "counts").read_text().startswith("a file")
    fresh, _ = report(capsys, root, "--no-cache")
    assert counted_alike(stored, fresh)


def test_counts_the_hook_made_spare_the_report_its_tokenizer(tmp_path: Path, monkeypatch, capsys):
    from xshare.live import session_state

    root = write_demo_corpus(tmp_path / "claude")
    for transcript in sorted(root.rglob("*.jsonl")):
        session_state.update(transcript)  # the hook's own update, as after each tool batch
    assert store_entries(tokens.store_path())  # flushed at the end of each update
    monkeypatch.setattr(count_store, "_opened", {})
    loads, real = [], tokens._load_o200k
    monkeypatch.setattr(tokens, "_load_o200k", lambda vocab: loads.append(vocab))
    stored, _ = report(capsys, root)
    assert loads == [] and stored["counter"] is None
    monkeypatch.setattr(tokens, "_load_o200k", real)
    monkeypatch.setattr(counter, "_counter", None)
    fresh, _ = report(capsys, root, "--no-cache")
    assert counted_alike(stored, fresh)


def test_a_broken_tiktoken_makes_the_whole_run_an_estimate_even_with_counts_known(tmp_path: Path, monkeypatch,
                                                                                 capsys):
    root = write_demo_corpus(tmp_path / "claude")
    exact, _ = report(capsys, root)
    assert exact["tokenizer"] == tokens.O200K
    rows_cache.cache_file().unlink()  # every count is now in the store: no text would need tiktoken
    monkeypatch.setattr(counter, "_counter", None)
    monkeypatch.setattr(count_store, "_opened", {})
    monkeypatch.delitem(sys.modules, "tiktoken", raising=False)
    real_import = builtins.__import__

    def broken_install(name, *args, **kwargs):  # found on disk, fails on import (a wheel for another platform)
        if name == "tiktoken":
            raise ImportError("tiktoken's extension could not be loaded")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", broken_install)
    broken, _ = report(capsys, root)
    # never exact counts from the store labelled beside estimated ones: the run says what it rests on
    assert broken["tokenizer"] != tokens.O200K
    estimated, _ = report(capsys, root, "--estimate", "--no-cache")
    assert broken["groups"] == estimated["groups"]


def test_texts_tiktoken_panics_on_are_estimated_and_reported(tmp_path: Path, monkeypatch, capsys):
    root = write_demo_corpus(tmp_path / "claude")
    real = tokens._load_o200k

    class Panicking:
        """tiktoken raising its Rust panic (a BaseException) on texts holding a newline."""

        def __init__(self, encoding) -> None:
            self.encoding = encoding

        def encode_ordinary(self, text: str) -> list[int]:
            if "\n" in text:
                raise BaseException("panicked")
            return self.encoding.encode_ordinary(text)

    monkeypatch.setattr(tokens, "_load_o200k", lambda vocab: Panicking(real(vocab)))
    figures, err = report(capsys, root, "--no-cache")
    assert figures["tokenizer"] == tokens.O200K
    assert "texts tiktoken could not count, estimated as characters / 4" in err
