"""OpenCode as every command sees it (agents/protocol.py): its reader (reader.py) behind the common adapter."""

from __future__ import annotations

from xshare.agents.common.file_agent import FileAgent
from xshare.agents.opencode import reader
from xshare.agents.opencode.recognise import recognises
from xshare.agents.opencode.tools import TOOLS
from xshare.agents.protocol import Adapter

ADAPTER = FileAgent(reader, recognises, TOOLS)
_CHECKED: Adapter = ADAPTER  # mypy holds it to the protocol (the registry checks only names)
