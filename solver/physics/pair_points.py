"""Where a contact pair's two points are in a MuJoCo state: the one measure the keyframe tracker
(is a keyframe reached?) and the grasp (do the hands touch the box at their keyed points?) share, so
that the two can never disagree about how far a pair is from met."""
from __future__ import annotations

import mujoco
import numpy as np

from ..formats.contact_keyframes import WORLD, ContactPair


def pair_offset(model: mujoco.MjModel, data: mujoco.MjData, pair: ContactPair) -> np.ndarray:
    """pos1 on body1 minus pos2 on body2 (world coordinates, m) at the data's current kinematics."""
    b1 = model.body(pair.body1).id
    a = data.xpos[b1] + data.xmat[b1].reshape(3, 3) @ np.asarray(pair.pos1, float)
    if pair.body2 == WORLD:
        return a - np.asarray(pair.pos2, float)
    b2 = model.body(pair.body2).id
    return a - (data.xpos[b2] + data.xmat[b2].reshape(3, 3) @ np.asarray(pair.pos2, float))
