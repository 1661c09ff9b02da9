import sys

from .cli import main
from .mujoco_log import route_warnings

route_warnings()
sys.exit(main())
