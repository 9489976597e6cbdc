"""Claude Code: its transcripts (JSONL), how they are found, read and billed."""
