from xshare.cli import run

run()
