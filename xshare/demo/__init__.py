"""Invented Claude Code transcripts: the writer tests use, and the corpus `xshare report --demo` reads."""

from xshare.demo.corpus import write_demo_corpus
from xshare.demo.writer import TranscriptWriter, project_dir_name, text, thinking, tool_use

__all__ = ["TranscriptWriter", "project_dir_name", "text", "thinking", "tool_use", "write_demo_corpus"]
