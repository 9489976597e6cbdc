#!/usr/bin/env python3
"""xshare's status line for Claude Code, runnable from the plugin folder:

    "statusLine": {"type": "command", "command": "/abs/python3 -I -S /abs/xshare/statusline/statusline.py"}

`xshare statusline install` writes that for you (with the absolute paths); see `xshare statusline --help`.
Started by a Python older than 3.10, it hands over to the plugin's env or a newer Python, or shows one line
saying what is missing (xshare/install/plugin_python.py); this file runs on old interpreters too.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

if sys.version_info < (3, 10):  # noqa: UP036  (any python3 may start this file, not only 3.10+)
    from xshare.install import plugin_python

    plugin_python.switch(os.path.realpath(__file__), ["-I", "-S"])
    sys.exit(plugin_python.too_old(["statusline-render"]))

from xshare.live.status_render import main  # noqa: E402

sys.exit(main())
