"""The hook's log: the hook and its worker never print, so what went wrong goes to a private file in the
state folder (xshare.state.paths.hook_log), cut to its last megabyte."""

from __future__ import annotations

import os
import time

from xshare.state.paths import hook_log
from xshare.state.private import append_text

_LOG_LIMIT = 1 << 20


def log(text: str) -> None:
    """Say in the hook's log (private, in the state folder) what went wrong: the hook never prints."""
    try:
        path = hook_log()
    except OSError:  # no state folder at all: nowhere to say it
        return
    append_text(path, f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()}\n{text}\n", _LOG_LIMIT)


def log_exception() -> None:
    """The exception being handled, with its traceback, in the hook's log; traceback is imported only
    then, as the idle hook call has no use for it."""
    import traceback

    log(traceback.format_exc())
