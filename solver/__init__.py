"""PhysKey's solver: plain Python (numpy, mujoco, cma), never bpy.

Run it as `python -m solver` (see `cli.py`). Relative imports throughout, so the same package works
from the source tree and inside the installed Blender extension.
"""
