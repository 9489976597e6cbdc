#!/usr/bin/env python3
"""xshare's status line for Claude Code, runnable from the plugin folder:

    "statusLine": {"type": "command", "command": "/abs/python3 -I -S /abs/xshare/statusline/statusline.py"}

`xshare statusline install` writes that for you (with the absolute paths); see `xshare statusline --help`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from xshare.statusline import main  # noqa: E402

sys.exit(main())
