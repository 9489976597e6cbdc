"""Many transcripts measured over the cores: the files travel to the workers in a few batches, every file once,
and the rows come out as one process reads them."""

from __future__ import annotations

import concurrent.futures
from concurrent.futures import ProcessPoolExecutor

from big_history import write_big_history

from xshare.agents.claude_code import many
from xshare.agents.claude_code.transcript import discover
from xshare.agents.common.counting import LazyCounter
from xshare.measure import tokens


class CountedPool(ProcessPoolExecutor):
    """The pool the report starts, keeping the files of each batch it is sent."""

    sent: list[list] = []

    def submit(self, fn, /, *args, **kwargs):
        CountedPool.sent.append(list(args[0]))
        return super().submit(fn, *args, **kwargs)


def rows(measured) -> list[dict]:
    return sorted(measured.rows, key=lambda row: row["id"])


def test_a_large_history_goes_to_the_workers_in_a_few_batches_with_one_process_rows(tmp_path, monkeypatch):
    # 60 sessions of about 0.6 MB: 36 MB, which batches of 1 MB sent to the workers in 30 round trips
    write_big_history(tmp_path / "claude", sessions=60, reads=4, lines=1200)
    files = discover([tmp_path / "claude"])
    total = sum(file.path.stat().st_size for file in files)
    assert total > 32 << 20
    choice = tokens.choose(estimate=True, remember=False)
    alone = many.measure_claude(files, LazyCounter(choice), use_cache=False, workers=1)

    CountedPool.sent = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", CountedPool)  # imported by the pool's maker
    pooled = many.measure_claude(files, LazyCounter(choice), use_cache=False, workers=2)

    batches = CountedPool.sent
    assert len(batches) <= 2 * 8 + 1  # at least 8 a worker, each a sixteenth of the bytes or more
    assert sorted(file.path for batch in batches for file in batch) == sorted(file.path for file in files)
    assert all(sum(file.path.stat().st_size for file in batch) <= total // 8 for batch in batches)
    assert rows(pooled) == rows(alone) and len(rows(alone)) == 60
    assert pooled.problems == alone.problems
