"""Re-express a character in bone frames: every body's origin at its first joint's pivot, Y along the
bone (towards its first child). Blender bones rotate about their heads and have their Y axis along the
bone, so a character imported from an MJCF file with other body frames (e.g. world-aligned, joints
away from the origin) becomes a rig whose bones move exactly like its bodies. Geoms, sites, joint axes
and the pivots of a body's other joints (dm_control's ankles turn about two points 4 cm apart) keep
their place in the world; joint angles keep their meaning.
"""
from __future__ import annotations

import copy

import numpy as np

from ..core import rotations
from ..formats.scene import Character


def _rest_frames(ch: Character):
    R, O = {}, {}
    for b in ch.bodies:
        r, o = rotations.to_matrix(b.quat), np.asarray(b.pos, float)
        if b.parent:
            R[b.name] = R[b.parent] @ r
            O[b.name] = O[b.parent] + R[b.parent] @ o
        else:
            R[b.name], O[b.name] = r, o
    return R, O


def to_bone_frames(ch: Character) -> Character:
    R, O = _rest_frames(ch)
    pivot = {}
    for b in ch.bodies:
        p = np.zeros(3)
        if b.joints:
            p = np.asarray(b.joints[0].pos, float)  # the bone's head: its first joint's pivot (others kept)
        pivot[b.name] = O[b.name] + R[b.name] @ p
    children = {b.name: [c.name for c in ch.bodies if c.parent == b.name] for b in ch.bodies}
    newR, length = {}, {}
    for b in ch.bodies:
        kids = children[b.name]
        d = pivot[kids[0]] - pivot[b.name] if kids else None
        if d is None or np.linalg.norm(d) < 1e-6:
            extent = max((np.linalg.norm(g.pos) + max(g.size or [0.05]) for g in b.geoms), default=0.1)
            d = (newR[b.parent][:, 1] if b.parent else R[b.name][:, 2]) * max(extent, 0.02)
        newR[b.name] = rotations.to_matrix(rotations.y_to(d))
        length[b.name] = float(np.linalg.norm(d))
    out = copy.deepcopy(ch)
    for b in out.bodies:
        Rn, On, Ro, Oo = newR[b.name], pivot[b.name], R[b.name], O[b.name]
        to_new = Rn.T @ Ro  # old body-frame vectors → new frame
        for j in b.joints:
            j.axis = [float(v) for v in to_new @ np.asarray(j.axis, float)]
            j.pos = [float(v) for v in Rn.T @ (Oo + Ro @ np.asarray(j.pos, float) - On)]
        for g in b.geoms:
            g.pos = [float(v) for v in Rn.T @ (Oo + Ro @ np.asarray(g.pos, float) - On)]
            g.quat = [float(v) for v in rotations.from_matrix(to_new @ rotations.to_matrix(g.quat))]
        for s in b.sites:
            s.pos = [float(v) for v in Rn.T @ (Oo + Ro @ np.asarray(s.pos, float) - On)]
        if b.parent:
            Rp, Op = newR[b.parent], pivot[b.parent]
            b.pos = [float(v) for v in Rp.T @ (On - Op)]
            b.quat = [float(v) for v in rotations.from_matrix(Rp.T @ Rn)]
        else:
            b.pos = [float(v) for v in On]
            b.quat = [float(v) for v in rotations.from_matrix(Rn)]
        b.length = max(length[b.name], 1e-3)
    return out


def root_offset(original: Character, bone_framed: Character):
    """(R, t) taking the old root frame to the new one: new_root_pose = old_root_pose · (R, t)."""
    ro, rn = rotations.to_matrix(original.bodies[0].quat), rotations.to_matrix(bone_framed.bodies[0].quat)
    return ro.T @ rn, ro.T @ (np.asarray(bone_framed.bodies[0].pos) - np.asarray(original.bodies[0].pos))
