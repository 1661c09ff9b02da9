"""The keyframes of a tracking solve: instants of the reference the character must pass near.

Each is a pose at a time — the sketch's pose keyframe there, or the reference's own pose where the
task names none. The tracker checks them off in order: a keyframe is reached at the first instant
from its time to `window` after it where the character's pose is within tolerance of it (root
position, root orientation and the RMS of the hinge angles, each against its own tolerance), and
missed once the window has passed without that (never earlier than its time: the physical version
keeps the reference's timing and length). Between keyframes the objective follows the reference;
near them it pulls harder, by the keyframe's weight, and towards the keyframe's own pose where the
reference only passes beside it. Keyframes split a
tracking solve into segments, as contact keyframes do a contact solve: checkpoints, particles,
retries and back-ups work on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.rotations import angle_between


@dataclass
class TrackKeyframe:
    name: str
    time: float  # when the reference is there (s)
    qpos: list[float]  # the pose to pass near: the character's root position, root quaternion, hinges
    weight: float = 1.0
    window: float = 0.25  # seconds after `time` in which it still counts
    pos_tolerance: float = 0.15  # root position (m)
    angle_tolerance: float = 0.35  # root orientation (rad)
    joint_tolerance: float = 0.25  # RMS of the hinge angles (rad)
    upright: bool = True  # the reference is upright here: falling before it is a failure
    reference: str = ""  # digest of the reference it belongs to (checkpoints are valid for it only)
    sustain: float = field(default=0.0, init=False)
    tolerance: float = field(default=1.0, init=False)  # of `distance`, which is relative to the tolerances

    @property
    def time_limit(self) -> float:
        """The latest time it can be reached (what the agent's run-length guard adds up)."""
        return self.time + self.window

    def errors(self, root_pos: np.ndarray, root_quat: np.ndarray, hinges: np.ndarray) -> tuple[float, float, float]:
        """(root position error m, root rotation angle rad, RMS hinge error rad) of a pose."""
        q = np.asarray(self.qpos)
        pos = float(np.linalg.norm(root_pos - q[:3]))
        angle = float(angle_between(root_quat, q[3:7]))
        rms = float(np.sqrt(np.mean((hinges - q[7:]) ** 2))) if len(hinges) else 0.0
        return pos, angle, rms

    def distance(self, root_pos: np.ndarray, root_quat: np.ndarray, hinges: np.ndarray) -> float:
        """How far a pose is from this keyframe, relative to the tolerances: ≤ 1 is within all three."""
        pos, angle, rms = self.errors(root_pos, root_quat, hinges)
        return max(pos / self.pos_tolerance, angle / self.angle_tolerance, rms / self.joint_tolerance)

    def shortfall(self, root_pos: np.ndarray, root_quat: np.ndarray, hinges: np.ndarray) -> str:
        """In words, how a pose misses this keyframe (its largest part)."""
        pos, angle, rms = self.errors(root_pos, root_quat, hinges)
        parts = [(pos / self.pos_tolerance, f"falls short by {pos:.2f} m"),
                 (angle / self.angle_tolerance, f"turned {np.degrees(angle):.0f}° off"),
                 (rms / self.joint_tolerance, f"joints {np.degrees(rms):.0f}° off (RMS)")]
        return max(parts)[1]
