import sys

from .cli import console

sys.exit(console(prog="python -m solver"))
