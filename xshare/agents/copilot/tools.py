"""GitHub Copilot CLI's tools by category, so its reader and `classify --jsonl` know which calls explore (judged by
measure/tool_tables.py). The names 1.0.102 offers the model (seen in its requests); its shell tools name their
command's argument, and `read_bash`/`write_bash`/`stop_bash` drive a command already running."""

from __future__ import annotations

from xshare.measure.tool_tables import tool_table

TOOLS = tool_table("copilot", exploration="view grep glob lsp", edit="create edit apply_patch str_replace_editor",
                   web="web_fetch web_search",
                   shell={"bash": "command", "powershell": "command", "read_bash": "", "write_bash": "",
                          "stop_bash": "", "read_powershell": "", "write_powershell": "", "stop_powershell": ""})
