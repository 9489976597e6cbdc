"""OpenCode as every command sees it (agents/protocol.py): its reader (reader.py) behind the common adapter."""

from __future__ import annotations

from xshare.agents.common.file_agent import FileAgent
from xshare.agents.opencode import reader
from xshare.agents.opencode.recognise import recognises
from xshare.agents.opencode.tools import TOOLS

ADAPTER = FileAgent(reader, recognises, TOOLS)
