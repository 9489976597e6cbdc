"""A command run as a person runs it in a terminal: a pseudo-terminal as its controlling terminal (stdin and
stderr), stdout to a file, what it draws read as it comes, Ctrl-C typed as a person types it (the terminal
then signals the command's whole process group, its workers too)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

DEADLINE = 120.0  # seconds: generous, the machine may be busy


class Terminal:
    def __init__(self, argv: list[str], stdout: Path, env: dict | None = None) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))  # 200 columns: no line is cut
        with stdout.open("wb") as out:
            self.process = subprocess.Popen(argv, stdin=slave, stdout=out, stderr=slave, env=env,
                                            start_new_session=True, preexec_fn=_controlling_terminal)
        os.close(slave)
        self.drawn = b""
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # the command ended and closed its side
                data = b""
            with self.changed:
                self.drawn += data
                self.changed.notify_all()
                if not data:
                    return

    def text(self) -> str:
        with self.changed:
            return self.drawn.decode("utf-8", "replace")

    def wait_for(self, pattern: str) -> re.Match:
        """The first match of `pattern` in what the command drew, waiting for it up to the deadline."""
        ends = time.monotonic() + DEADLINE
        with self.changed:
            while True:
                found = re.search(pattern, self.drawn.decode("utf-8", "replace"))
                if found or not self.reader.is_alive() or time.monotonic() > ends:
                    break
                self.changed.wait(1.0)
        assert found, f"{pattern!r} never drawn; it drew {self.text()[-2000:]!r}"
        return found

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def finish(self) -> int:
        code = self.process.wait(DEADLINE)
        self.reader.join(DEADLINE)
        os.close(self.master)
        return code


def _controlling_terminal() -> None:
    """In the child, after its new session: stdin's pseudo-terminal becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
