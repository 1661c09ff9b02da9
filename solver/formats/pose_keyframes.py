"""Pose keyframes: crude poses the character should pass through, each with a weight and either a
fixed time or a free time-to-arrival range.

Joints a keyframe does not name keep the previous keyframe's value (the first keyframe's missing
joints are 0). The root orientation is given as an absolute quaternion (`root_quat`, what Blender
sends) or as `root_rot_deg` [x, y, z] — world-axes rotations applied to the character's upright
rest orientation (convenient in hand-written task files).
"""
from __future__ import annotations

import copy
import math
import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..core import rotations, schema
from ..core.errors import InvalidInput
from ..core.limits import MAX_MOTION_S
from .scene import Pose, SceneDesc

ANGLE_SLACK = math.radians(10.0)  # beyond the joint range by more than this is an error, less is clamped


@dataclass
class PoseKeyframe:
    root_pos: list[float] = field(metadata={"length": 3})
    root_quat: Optional[list[float]] = field(default=None, metadata={"length": 4})
    root_rot_deg: Optional[list[float]] = field(default=None, metadata={"length": 3})
    joints: dict[str, float] = field(default_factory=dict)
    weight: float = field(default=1.0, metadata={"nonneg": True})
    time: Optional[float] = field(default=None, metadata={"nonneg": True})  # fixed time (s) …
    time_range: Optional[list[float]] = field(default=None, metadata={"length": 2})  # … or free arrival [min, max]
    name: str = "pose"

    def check(self, path):
        if (self.root_quat is None) == (self.root_rot_deg is None):
            raise InvalidInput(f"{path}.root_quat", "give exactly one of root_quat and root_rot_deg")
        if self.root_quat is not None and sum(q * q for q in self.root_quat) < 1e-12:
            raise InvalidInput(f"{path}.root_quat", "quaternion must not be zero")
        if self.time is not None and self.time_range is not None:
            raise InvalidInput(f"{path}.time_range", "give either a fixed time or a time_range, not both")
        if self.time_range is not None:
            lo, hi = self.time_range
            if lo <= 0 or hi <= 0:
                raise InvalidInput(f"{path}.time_range", f"times to arrival must be > 0, got [{lo}, {hi}]")
            if lo > hi:
                raise InvalidInput(f"{path}.time_range", f"min {lo} is greater than max {hi}")


@dataclass
class Keyframes:
    """Resolved keyframes: full joint vectors and root poses, and the timing bounds per interval."""
    qpos: np.ndarray  # (K, nq_char) root pos, root quat, hinge angles in model order
    weights: np.ndarray  # (K,)
    dt_min: np.ndarray  # (K-1,) bounds of each time-to-arrival (equal when fixed)
    dt_max: np.ndarray
    names: list[str]

    @property
    def free(self) -> np.ndarray:
        return self.dt_max > self.dt_min + 1e-12


def parse_pose_keyframes(items, scene: SceneDesc, upright_quat, warn=None) -> tuple[list[PoseKeyframe], Keyframes]:
    """Check and resolve the task's pose keyframes against the scene's character."""
    warn = warn or (lambda msg: print(f"warning: {msg}", file=sys.stderr))
    if not isinstance(items, list):
        raise InvalidInput("keyframes", "must be a list")
    kfs = [schema.from_dict(PoseKeyframe, item, f"keyframes[{i}]") for i, item in enumerate(items)]
    if len(kfs) < 2:
        raise InvalidInput("keyframes", f"assisted keyframes need at least two pose keyframes, got {len(kfs)}")
    joints = [j for j in scene.joints() if j.type == "hinge"]
    index = {j.name: i for i, j in enumerate(joints)}
    current = np.zeros(len(joints))
    rows, names = [], []
    t_prev = 0.0
    dt_min, dt_max = [], []
    for i, kf in enumerate(kfs):
        path = f"keyframes[{i}]"
        for name, angle in kf.joints.items():
            if name not in index:
                raise InvalidInput(f"{path}.joints.{name}", f"no hinge joint '{name}' in character")
            lo, hi = joints[index[name]].range
            if angle < lo - ANGLE_SLACK or angle > hi + ANGLE_SLACK:
                raise InvalidInput(f"{path}.joints.{name}", f"{math.degrees(angle):.1f}° is outside the joint range "
                                   f"[{math.degrees(lo):.1f}°, {math.degrees(hi):.1f}°] by more than 10°")
            if angle < lo or angle > hi:
                warn(f"{path}.joints.{name}: {math.degrees(angle):.1f}° clamped to the joint range")
                angle = min(max(angle, lo), hi)
            current[index[name]] = angle
        if kf.root_quat is not None:
            quat = rotations.normalize(kf.root_quat)
        else:
            quat = rotations.mul(rotations.from_euler_xyz_deg(kf.root_rot_deg), upright_quat)
        rows.append(np.concatenate([kf.root_pos, quat, current]))
        names.append(kf.name)
        if i == 0:
            if kf.time not in (None, 0.0) or kf.time_range is not None:
                raise InvalidInput(f"{path}.time", "the first keyframe is the start pose, at time 0")
            continue
        if kf.time is None and kf.time_range is None:
            raise InvalidInput(f"{path}.time", "give a fixed time or a free time_range [min, max] (seconds)")
        if kf.time is not None:
            if any(a < b for a, b in zip(dt_min, dt_max)):
                raise InvalidInput(f"{path}.time", "a fixed time after a free-timed keyframe is ambiguous; "
                                   "give a time_range instead")
            if kf.time <= t_prev + 1e-9:
                raise InvalidInput(f"{path}.time", f"fixed times must increase: {kf.time} s after {t_prev} s")
            dt_min.append(kf.time - t_prev)
            dt_max.append(kf.time - t_prev)
            t_prev = kf.time
        else:
            lo, hi = kf.time_range
            dt_min.append(lo)
            dt_max.append(hi)
            t_prev += 0.5 * (lo + hi)
        if sum(dt_max) > MAX_MOTION_S:
            where = "time" if kf.time is not None else "time_range"
            raise InvalidInput(f"{path}.{where}", f"the motion would last up to {sum(dt_max):.6g} s by this keyframe; "
                               f"at most {MAX_MOTION_S:g} s")
    return kfs, Keyframes(qpos=np.asarray(rows), weights=np.array([k.weight for k in kfs]),
                          dt_min=np.asarray(dt_min), dt_max=np.asarray(dt_max), names=names)


def resolve(items, scene: SceneDesc, warn=None) -> tuple[list[PoseKeyframe], Keyframes]:
    """A task's pose keyframes checked and resolved against its scene's character, whose root body's
    rest orientation is "upright" for `root_rot_deg`."""
    return parse_pose_keyframes(items, scene, scene.character.bodies[0].quat, warn)


def scene_at_first_pose(scene: SceneDesc, kfs: Keyframes) -> SceneDesc:
    """A copy of `scene` starting at the first pose keyframe (the motion starts there, at rest): what
    the assist method solves and what Blender poses a preset at."""
    scene = copy.deepcopy(scene)
    hinges = [j.name for j in scene.joints() if j.type == "hinge"]
    first = kfs.qpos[0]
    scene.initial_pose = Pose(root_pos=[float(v) for v in first[:3]], root_quat=[float(v) for v in first[3:7]],
                              joints={n: float(v) for n, v in zip(hinges, first[7:])})
    return scene


def pose_error(q: np.ndarray, target: np.ndarray) -> np.ndarray:
    """‖q̂ − q‖² of the keyframe error (Kim et al. eq. (2)) per pose q (…, root position, root
    quaternion, hinges): the root's squared distance, its squared rotation angle and the hinges'
    squared differences."""
    dpos = np.sum((q[..., :3] - target[:3]) ** 2, axis=-1)
    dang = rotations.angle_between(q[..., 3:7], target[3:7]) ** 2
    djoint = np.sum((q[..., 7:] - target[7:]) ** 2, axis=-1)
    return dpos + dang + djoint
