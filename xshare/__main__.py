import sys

from xshare.cli import main

sys.exit(main())
