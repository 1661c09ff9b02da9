"""A character catching itself on the floor: a knee, a hand, a hip put down where a keyframe asks it to stay
up and does not pair that body with the floor. The same rule marks a finished motion's `stumble`
(`quality.motion_quality`) and fails a contact keyframe while it is solved (`jobs.ContactJob.watch_stumble`),
so a solve never counts as reached what its clip would show stumbling."""
from __future__ import annotations

import mujoco
import numpy as np

from ..formats.contact_keyframes import WORLD
from ..physics.quality import floor_planes, foot_carried, hangs_below

# How high above the floor a pair's world point may be to put its body on the floor: a kneeling knee's
# or a flat hand's origin is within a limb's thickness of it
ON_FLOOR_M = 0.15


def floor_paired(model: mujoco.MjModel, bodies: list[str], keyframe) -> np.ndarray:
    """(len(bodies),) bool: the bodies `keyframe` pairs with a point on the floor, and those hanging below
    them (a knee asked down carries its shin and foot): there the animator asked for the touch."""
    ours = set(bodies)
    paired = {model.body(b).id for p in keyframe.pairs
              for b, other, at in ((p.body1, p.body2, p.pos2), (p.body2, p.body1, p.pos1))
              if b in ours and other == WORLD and at[2] < ON_FLOOR_M}
    return np.array([any(hangs_below(model, model.body(name).id, b) for b in paired) for name in bodies],
                    dtype=bool)


class FloorCatch:
    """Which body, if any, catches the character on the floor plane in a simulation's current contacts:
    a character body other than the feet and what hangs below them (the toes), and other than the bodies
    the active keyframe puts on the floor. None where the character has no foot by role (then every touch
    would read as one)."""

    def __init__(self, model: mujoco.MjModel, bodies: list[str], roles: dict[str, str]):
        self.model, self.bodies = model, list(bodies)
        ids = [model.body(b).id for b in self.bodies]
        carried = foot_carried(model, ids, roles)
        self.active = carried is not None
        self.floor = floor_planes(model)
        self.catching = np.isin(model.geom_bodyid, [b for b, c in zip(ids, carried) if not c] if self.active else [])
        self._keyframe, self._mask = None, self.catching

    def body(self, data: mujoco.MjData, keyframe) -> str | None:
        """The first body catching the character in `data`'s contacts (touching, not within a margin) while
        `keyframe` is active; None if none does."""
        if not self.active or not data.ncon:
            return None
        if keyframe is not self._keyframe:
            paired = floor_paired(self.model, self.bodies, keyframe)
            self._mask = self.catching & ~np.isin(self.model.geom_bodyid,
                                                  [self.model.body(b).id for b, p in zip(self.bodies, paired) if p])
            self._keyframe = keyframe
        geom = np.asarray(data.contact.geom)
        touching = np.asarray(data.contact.dist) <= 0.0
        caught = touching & ((self.floor[geom[:, 0]] & self._mask[geom[:, 1]])
                             | (self.floor[geom[:, 1]] & self._mask[geom[:, 0]]))
        if not caught.any():
            return None
        a, b = geom[int(np.argmax(caught))]
        return self.model.body(int(self.model.geom_bodyid[b if self.floor[a] else a])).name
