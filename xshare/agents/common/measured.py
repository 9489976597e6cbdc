"""What measuring sessions gives: their rows (packed), the problems met, the tokenizer that counted them (and
which counter counted the new texts, and why), which agents were read and where xshare looked."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xshare.agents.common.packed import PackedRows
from xshare.measure import tokens as tokenizers


@dataclass
class Measured:
    tokenizer: tokenizers.TokenizerChoice  # the one asked for, until a reader says it fell back
    # fastokens, tiktoken or None (none loaded), and why in plain words: agents/common/counting.py how_counted
    counted_by: tuple[str | None, str] = (None, "")
    rows: PackedRows = field(default_factory=PackedRows)
    problems: Counter = field(default_factory=Counter)
    sources: dict[str, str] = field(default_factory=dict)  # agent -> "read" | "not found"
    looked_in: list[str] = field(default_factory=list)  # for the "nothing found" message (stderr)
    copied: dict[str, frozenset[int]] = field(default_factory=dict)  # path_key -> calls another file bills (digests)
    # path_keys of the files that only copy another file's session (every call of theirs billed there): no row
    copy_files: frozenset[str] = frozenset()
