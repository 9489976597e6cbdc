"""Claude Code's status line, as `xshare statusline install` writes it into settings.json:

    "command": "/abs/python3 -I -S /abs/site-packages/xshare/statusline.py"

Users' settings name this file, so it stays here; the status line itself is xshare/live/status_render.py.
Run as a script, the package sits two folders up.
"""

import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xshare.live.status_render import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
