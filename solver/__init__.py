"""PhysKey's solver: plain Python (numpy, mujoco, cma), never bpy.

Run it as `python -m solver` (see `run/cli.py`). Its folders are the floors of the architecture,
lowest first — `core`, then `formats` and `builders`, `physics`, the algorithms `mpc` and `assist`,
`methods`, `run` — and a module imports only from its own floor or below
(`tests/test_import_graph.py`). Relative imports throughout, so the same package works from the
source tree and inside the installed Blender extension.
"""
