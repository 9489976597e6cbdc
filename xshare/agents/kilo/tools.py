"""Kilo CLI's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py). The names are those Kilo CLI 7.7.7 sent in its requests' tools array (read, glob,
grep, bash, edit, write, webfetch, task, todowrite, skill, board_*, *_wakeup, background_process,
kilo_local_recall), plus OpenCode's that it may enable (list, codesearch, lsp, patch tools, websearch)."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("kilo", exploration="read grep glob list ls codesearch lsp",
                   edit="write edit patch multiedit apply_patch", web="webfetch websearch",
                   shell={"bash": "command"})
