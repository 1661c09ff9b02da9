"""Which bodies touch now: MuJoCo's contact list as pairs of body ids (what sticky hands close on and
what a placed object must rest on)."""
from __future__ import annotations

import mujoco


def touching_bodies(model: mujoco.MjModel, data: mujoco.MjData) -> set[tuple[int, int]]:
    """The (body, body) id pairs with a contact in `data` now, both ways round."""
    out = set()
    for c in data.contact[:data.ncon] if data.ncon else []:
        a, b = int(model.geom_bodyid[c.geom1]), int(model.geom_bodyid[c.geom2])
        out.update(((a, b), (b, a)))
    return out
