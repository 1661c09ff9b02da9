import sys

from .run.cli import console

sys.exit(console(prog="python -m solver"))
