"""The animator's rig as Blender evaluates it, read as the physics character's configuration.

A pose is the mapped bones' world matrices in the evaluated depsgraph — whatever moves them: IK,
constraints, Rigify's torso, hips and chest, drivers, the NLA. Each mapped bone says where its physics
body's point (the bone's head at rest) is and how the body is turned (the bone's turn, offset as at the
aligned rest, `retarget.alignment`); one whole-body fit (`solver.physics.pose_fit`) finds the
configuration that meets them all within the joint ranges and above the floor. What it cannot meet is
reported per key, in the animator's bones: centimetres and degrees off, and the joints held at a limit.
"""
from __future__ import annotations

import math

import numpy as np

from ..solver.physics.pose_fit import END_WEIGHT, PoseFit, PoseTargets, fit_poses, grounded_targets
from .humanoid_map import SLOTS, hand_at_forearm_end
from .i18n import rpt_

# Off by more than this a mapped bone is reported on its key (m, degrees).
REPORT_DISTANCE = 0.02
REPORT_ANGLE = 15.0


def _evaluated_matrices(context, rig, bones: list[str], at_tail: list[bool]) -> np.ndarray:
    """World matrices (B, 4, 4) of `bones` as the depsgraph evaluated them (unit scale), moved to the
    bone's tail where `at_tail` says (a hand at its forearm's end)."""
    evaluated = rig.evaluated_get(context.evaluated_depsgraph_get())
    world = np.array(evaluated.matrix_world)
    out = np.empty((len(bones), 4, 4))
    for k, name in enumerate(bones):
        pb = evaluated.pose.bones[name]
        out[k] = world @ np.array(pb.matrix)
        if at_tail[k]:
            out[k, :3, 3] = world[:3, :3] @ np.array(pb.tail) + world[:3, 3]
    scale = np.linalg.norm(out[:, :3, :3], axis=1, keepdims=True)  # columns' lengths
    out[:, :3, :3] /= scale
    return out


def read_targets(context, rig, physics, model, frames: list[int] | None = None) -> PoseTargets:
    """Where the rig puts the physics bodies at each of `frames` (the current frame when None); the
    scene's frame is put back."""
    from .retarget import alignment, mapping_of
    mapping = mapping_of(rig)
    align = alignment(rig, physics, mapping)
    bones = [mapping[slot] for slot in SLOTS]
    at_tail = [hand_at_forearm_end(mapping, slot) for slot in SLOTS]
    c = np.array([align[slot][0] for slot in SLOTS])
    points = np.array([align[slot][1] for slot in SLOTS])
    scene = context.scene
    current = scene.frame_current
    matrices = []
    try:
        for frame in [current] if frames is None else frames:
            if frames is not None:  # the frames asked for are set (and evaluated) even where one is current
                scene.frame_set(frame)
            matrices.append(_evaluated_matrices(context, rig, bones, at_tail))
    finally:
        if scene.frame_current != current:
            scene.frame_set(current)
    m = np.array(matrices)  # (F, B, 4, 4)
    rotations = np.einsum("fbij,bkj->fbik", m[:, :, :3, :3], c)  # the body's turn: the bone's, offset back
    ids = np.array([model.body(slot).id for slot in SLOTS])
    weights = np.array([END_WEIGHT if slot.startswith(("hand_", "foot_")) else 1.0 for slot in SLOTS])
    return PoseTargets(body_ids=ids, points=points, positions=m[:, :, :3, 3], rotations=rotations, weights=weights)


def fitted_poses(context, rig, physics, model, frames: list[int] | None = None,
                 clip_dt: float | None = None) -> PoseFit:
    """The physics character's configurations for the rig's pose at `frames` (the current frame).
    `clip_dt`: the frames are a clip on this grid, put on the floor where it stands (`grounding`)."""
    targets = read_targets(context, rig, physics, model, frames)
    if clip_dt is None:
        return fit_poses(model, targets)
    ends = np.array([slot.startswith(("hand_", "foot_")) for slot in SLOTS])
    soles = np.array([slot.startswith("foot_") for slot in SLOTS])
    grounded, lowered = grounded_targets(model, targets, clip_dt, ends, soles)
    return fit_poses(model, grounded, lowered=lowered)


def misfit(fit: PoseFit, f: int, names: dict[str, str]) -> str:
    """What frame `f` of a fit could not meet, in the bones the animator knows (`names`: slot → bone; '' when
    every mapped bone is within REPORT_DISTANCE and REPORT_ANGLE): the worst bones and the joints held at a
    limit."""
    bad = []
    for k, slot in enumerate(SLOTS):
        cm, deg = 100.0 * fit.position_error[f, k], math.degrees(fit.angle_error[f, k])
        if cm >= 100.0 * REPORT_DISTANCE or deg >= REPORT_ANGLE:
            bad.append((cm / (100.0 * REPORT_DISTANCE) + deg / REPORT_ANGLE, names.get(slot, slot), cm, deg))
    if not bad:
        return ""
    bad.sort(reverse=True)
    parts = [rpt_("'{}' {:.1f} cm, {:.0f}° off").format(bone, cm, deg) for _, bone, cm, deg in bad[:3]]
    text = rpt_("the physics character cannot take this pose: {}").format(", ".join(parts))
    if fit.at_limit[f]:
        text += rpt_(" (held at the range of {})").format(", ".join(fit.at_limit[f][:4]))
    return text
