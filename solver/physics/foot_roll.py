"""How far planted feet roll onto their edges: a loaded foot tilted sideways, standing on its outer or inner
edge — what an animator sees as a rolled ankle, and what no other figure says (the sole's touching point stays
put, so the sliding does not count it). Rolling forward over the toes or back onto the heel is a step, not a
roll, and is not counted.

Measured on the recorded poses as `quality.motion_quality` scans them: each foot's sideways axis at rest (the
horizontal direction from the right foot to the left, seen from the foot) carried with the foot; its rise
from the horizontal is the roll.
"""
from __future__ import annotations

import mujoco
import numpy as np

# A planted foot tilted sideways past this stands on its edge (said in the solution's words): an ankle resting
# turned in a little, seated or mid-step, is a person's; 25–50° under the body's weight is a rolled ankle.
ROLLED_DEG = 20.0
# s: a roll counts once held this long — a pose, not a foot landing on its edge and settling flat, or the ankle
# turning for a moment to balance
HELD_S = 0.5


def side_axes(model: mujoco.MjModel, rest: mujoco.MjData, feet: list[int]) -> np.ndarray | None:
    """(len(feet), 3) each foot's sideways axis in its own frame, from the character at rest (`rest`): the
    horizontal direction from the second foot to the first (the left and right feet). None without two feet
    apart at rest."""
    across = _across(rest, feet)
    return None if across is None else _in_feet(rest, feet, across)


def forward_axes(model: mujoco.MjModel, rest: mujoco.MjData, feet: list[int]) -> np.ndarray | None:
    """(len(feet), 3) each foot's forward axis in its own frame at rest: level, across the sideways axis, the way
    the character faces. None without two feet apart at rest."""
    across = _across(rest, feet)
    return None if across is None else _in_feet(rest, feet, np.cross(across, [0.0, 0.0, 1.0]))


def _in_feet(rest: mujoco.MjData, feet: list[int], direction: np.ndarray) -> np.ndarray:
    """(len(feet), 3) a world direction at rest in each foot's own frame."""
    return np.stack([rest.xmat[f].reshape(3, 3).T @ direction for f in feet])


def _across(rest: mujoco.MjData, feet: list[int]) -> np.ndarray | None:
    """The level unit vector from the second foot to the first at rest, or None."""
    if len(feet) != 2:
        return None
    across = rest.xpos[feet[0]] - rest.xpos[feet[1]]
    across[2] = 0.0
    norm = float(np.linalg.norm(across))
    return None if norm < 1e-6 else across / norm


def roll_deg(foot_mat: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """(n, nfeet) each foot's sideways tilt from the horizontal in degrees (0 to 90), from its orientation per
    pose (`foot_mat`, (n, nfeet, 3, 3)) and its sideways axis (`side_axes`)."""
    return np.degrees(np.arcsin(np.clip(np.abs(_rise(foot_mat, sides)), 0.0, 1.0)))


def _rise(foot_mat: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """(n, nfeet) how far each foot's own `axes` (nfeet, 3) point up, per pose of `foot_mat` (n, nfeet, 3, 3)."""
    return np.einsum("nkij,kj->nki", foot_mat, axes)[..., 2]


def worst_roll(feet: list[str], times: np.ndarray, roll: np.ndarray, planted: np.ndarray) -> dict | None:
    """The planted feet's roll as the animator reads it: `{"deg", "body", "time_s", "rolled_s"}` — the largest
    roll a planted foot held for HELD_S (`deg`, of which foot, from when), and how long some planted foot spent
    rolled past ROLLED_DEG (`rolled_s`). None where no foot is ever planted that long."""
    n = len(times)
    if n < 2 or not roll.shape[1]:
        return None
    dt = float(np.median(np.diff(times)))
    held = max(1, int(round(HELD_S / dt))) if dt > 0 else 1
    if n < held:
        return None
    on = np.where(planted, roll, -1.0)  # a window with the foot lifted in it holds no roll
    window = np.lib.stride_tricks.sliding_window_view(on, held, axis=0).min(axis=-1)  # (n - held + 1, nfeet)
    i, k = np.unravel_index(int(np.argmax(window)), window.shape)
    if window[i, k] < 0.0:
        return None
    dt_each = np.diff(times, append=times[-1])
    rolled = (on > ROLLED_DEG).any(axis=1)
    return {"deg": round(float(window[i, k]), 2), "body": feet[k], "time_s": round(float(times[i]), 6),
            "rolled_s": round(float(dt_each[rolled].sum()), 6)}


def end_pitch(feet: list[str], times: np.ndarray, foot_mat: np.ndarray, forward: np.ndarray,
              planted: np.ndarray) -> dict | None:
    """The planted foot tipped furthest forward or back over the clip's last HELD_S, as `{"deg", "body"}`: its
    forward axis at rest (`forward_axes`) carried with the foot, its median rise from the horizontal there —
    positive with the toes up (standing on the heel), negative on the toes. None where no foot is planted
    throughout that time."""
    if len(times) < 2 or not len(feet):
        return None
    last = times >= times[-1] - HELD_S
    down = planted[last].all(axis=0)
    if not down.any():
        return None
    pitch = np.degrees(np.arcsin(np.clip(np.median(_rise(foot_mat[last], forward), axis=0), -1.0, 1.0)))
    k = int(np.argmax(np.where(down, np.abs(pitch), -1.0)))
    return {"deg": round(float(pitch[k]), 2), "body": feet[k]}
