"""A captured motion put on the floor the character stands on.

A capture's skeleton rarely stands exactly on the scene's floor: its markers' offsets and its end sites
put the soles a few centimetres above it (or into it), its feet tilted a few degrees where they stand, and
a character fitted to it would float where the capture stands, rock on a heel, or be held out of the floor
by bent knees. Where the capture is supported — its lowest body near the floor and still — the whole pose
is moved by how far that body's shapes are from the floor; between supports (a step, a jump) the offset is
eased from one to the next and it is never changed faster than over about `EASE_S`. Moving the whole pose
keeps the motion as captured. A foot standing still on or near the floor, tilted a little (not on its toes),
is turned flat on its sole; a foot or hand that then still stands above the floor — as a foot beside a
kneeling knee, or the other foot of a capture whose feet are not level — is set down on it by itself (the fit
bends its limb). A clip within `GROUND_MIN` of the floor wherever it is supported is left as it is.
"""
from __future__ import annotations

import numpy as np

# The capture's lowest body within this of the floor (m), moving slower than this (m/s), stands on it.
GROUND_GAP = 0.06
SUPPORT_SPEED = 0.1
EASE_S = 0.2  # s: the offset changes over about this long (a Gaussian of half this width)
GROUND_MIN = 0.005  # m: a capture this close to the floor wherever it is supported is on it
FLAT_TILT = np.radians(20.0)  # a foot standing still tilted less than this is flat on its sole


def speeds(positions: np.ndarray, dt: float) -> np.ndarray:
    """Per frame and body (F, B): how fast each target point (`positions`, F × B × 3, on a grid of `dt` s)
    moves."""
    return np.linalg.norm(np.gradient(positions, dt, axis=0), axis=2)


def standing(heights: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Per frame and body (F, B): whether the body stands on the floor — its lowest point within
    `GROUND_GAP` of it (`heights`, above it) and its target point still (`speed`, `speeds`)."""
    return (np.abs(np.nan_to_num(heights, nan=np.inf)) < GROUND_GAP) & (speed < SUPPORT_SPEED)


def flat_weights(heights: np.ndarray, positions: np.ndarray, tilts: np.ndarray, dt: float,
                 soles: np.ndarray) -> np.ndarray:
    """Per frame and body (F, B), 0–1: how far to turn each sole (`soles`, a B mask) flat — fully where it
    stands on the floor tilted less than `FLAT_TILT` (`tilts`, F × B, rad: a foot on its toes stays so),
    eased in and out around it."""
    weights = np.zeros(heights.shape)
    if len(heights) < 2:
        return weights
    still = standing(heights, speeds(positions, dt)) & (tilts < FLAT_TILT)
    for b in np.flatnonzero(soles):
        weights[:, b] = _eased(still[:, b].astype(float), EASE_S / 2.0 / dt)
    return weights


def normals(rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Per frame and body (F, B, 3): each body's `up` (B, 3, its sole's normal in its own frame) in the world,
    turned by `rotations` (F, B, 3, 3; world from body)."""
    return np.einsum("fbij,bj->fbi", rotations, up)


def tilts(rotations: np.ndarray, up: np.ndarray) -> np.ndarray:
    """Per frame and body (F, B): how far each body's sole normal (`normals`) is from the world's up, rad."""
    return np.arccos(np.clip(normals(rotations, up)[..., 2], -1.0, 1.0))


def turned_flat(rotations: np.ndarray, up: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """`rotations` (F, B, 3, 3; world from body) turned by `weights` (F, B) of the least turn that puts
    each body's `up` (B, 3, its sole's normal in its own frame) on the world's up."""
    normal = normals(rotations, up)
    axis = np.cross(normal, [0.0, 0.0, 1.0])
    sin = np.linalg.norm(axis, axis=2)
    angle = weights * np.arctan2(sin, normal[..., 2])
    axis = axis / np.maximum(sin, 1e-12)[..., None]
    k = np.zeros(axis.shape[:2] + (3, 3))
    k[..., 0, 1], k[..., 0, 2], k[..., 1, 2] = -axis[..., 2], axis[..., 1], -axis[..., 0]
    k -= np.swapaxes(k, -1, -2)
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    turn = np.eye(3) + s * k + (1.0 - c) * (k @ k)  # Rodrigues
    return turn @ rotations


def ground_offsets(heights: np.ndarray, positions: np.ndarray, dt: float, ends: np.ndarray) -> np.ndarray:
    """Per frame and target body (F, B): how far its target is to be lowered (negative: raised) for the
    capture to stand on the floor, from each body's lowest point's height above it (F, B; NaN for a body
    without shapes) and the target positions (F, B, 3) on a grid of `dt` s: the whole pose's offset, and on
    a hand or foot (`ends`, a B mask) that stands still within GROUND_GAP above the floor after it the rest of
    its height (the whole pose's offset is 0 where the capture is never supported); zeros where all of it is
    within GROUND_MIN."""
    frames = len(heights)
    none = np.zeros(heights.shape)
    if frames < 2 or np.isnan(heights).all():
        return none
    filled = np.where(np.isnan(heights), np.inf, heights)
    rows = np.arange(frames)
    lowest = filled.argmin(axis=1)
    speed = speeds(positions, dt)
    supported = np.flatnonzero(standing(heights, speed)[rows, lowest])
    whole = np.zeros(frames)
    if len(supported):
        whole = _eased(np.interp(rows, supported, filled[supported, lowest[supported]]), EASE_S / 2.0 / dt)
    above = filled - whole[:, None]  # each body's height once the pose is moved
    still = standing(above, speed) & (above > 0.0)
    own = np.zeros(heights.shape)
    for b in np.flatnonzero(ends):
        own[:, b] = _eased(np.where(still[:, b], above[:, b], 0.0), EASE_S / 2.0 / dt)
    offsets = whole[:, None] + own
    return offsets if np.abs(offsets).max() >= GROUND_MIN else none


def _eased(values: np.ndarray, sigma: float) -> np.ndarray:
    """`values` smoothed by a Gaussian of `sigma` samples, the ends held."""
    if sigma < 0.5:
        return values
    reach = int(np.ceil(3 * sigma))
    kernel = np.exp(-0.5 * (np.arange(-reach, reach + 1) / sigma) ** 2)
    padded = np.pad(values, reach, mode="edge")
    return np.convolve(padded, kernel / kernel.sum(), mode="valid")
