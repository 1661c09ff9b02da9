"""Rigify's IK controls keyed with a baked motion, so a limb the animator animates in IK stays in IK.

`rigify_bake` keys the FK controls; the IK ones are keyed to the same pose, so each limb lands on its
bodies whichever way its IK/FK switch stands. Each limb's IK end control (`foot_ik`, `hand_ik`) is keyed
at every frame where it puts the limb's end bone on its target: the IK target under it follows it rigidly
while the foot's roll controls (`foot_spin_ik`, `foot_heel_ik`) rest, which they are keyed to. Its offsets
are measured once, with the rig evaluated in IK with these controls at rest (the end control's parent
fixed, or carried by `torso` where the rig's IK parent follows it). The chain's root (`thigh_ik`,
`upper_arm_ik`) is keyed turned about its length and scaled so that Blender's IK bends the knee or elbow
onto its body with the bones at their rest lengths, as Rigify's IK→FK snap does — that needs the rig
evaluated, a few times a frame.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .bone_math import quaternions, rigid_inverse

SIDES = ("L", "R")
# limb: (end ORG, IK end control, IK chain root, switch bone, roll controls)
LIMBS = {"leg": ("foot", "foot_ik", "thigh_ik", "thigh_parent", ("foot_spin_ik", "foot_heel_ik")),
         "arm": ("hand", "hand_ik", "upper_arm_ik", "upper_arm_parent", ())}
MIDDLE = {"ORG-foot": "ORG-shin", "ORG-hand": "ORG-forearm"}  # the joint IK bends: knee, elbow
SETTLED = 2e-3  # rad of turn, and relative stretch, below which the knee or elbow has stopped moving
TWIST_PASSES = 4


def set_path(rig, path: str, value) -> None:
    """Set the custom property at `path` (e.g. 'pose.bones["thigh_parent.L"]["IK_FK"]')."""
    owner, _, key = path.rpartition("[")
    rig.path_resolve(owner)[key.strip('"]')] = value
    rig.update_tag()  # set from Python, a custom property tags nothing: the drivers reading it must see it


def ik_limbs(rig) -> list[tuple[str, str, str, str, list[str]]]:
    """(end ORG, IK end control, IK chain root, switch bone, roll controls) of each limb with Rigify's IK."""
    bones = rig.pose.bones
    out = []
    for end, ik_end, ik_root, switch, rolls in LIMBS.values():
        for s in SIDES:
            names = (f"ORG-{end}.{s}", f"{ik_end}.{s}", f"{ik_root}.{s}", f"{switch}.{s}")
            if all(n in bones for n in names):
                out.append((*names, [f"{r}.{s}" for r in rolls if f"{r}.{s}" in bones]))
    return out


@contextmanager
def held_still(rig, rest: list[str], switches: dict[str, float]):
    """The rig with the controls `rest` at rest and the custom properties `switches` ({path: value}) set,
    its action set aside (its curves would override the pose) and the depsgraph updated — to measure
    offsets in; the pose, properties and action are put back after."""
    import bpy
    from mathutils import Matrix
    bones = rig.pose.bones
    saved = {name: bones[name].matrix_basis.copy() for name in rest}
    before = {path: rig.path_resolve(path) for path in switches}
    action = rig.animation_data.action if rig.animation_data else None
    if action is not None:
        rig.animation_data.action = None
    try:
        for name in rest:
            bones[name].matrix_basis = Matrix.Identity(4)
        for path, value in switches.items():
            set_path(rig, path, value)
        bpy.context.view_layer.update()
        yield
    finally:
        for name, basis in saved.items():
            bones[name].matrix_basis = basis
        for path, value in before.items():
            set_path(rig, path, value)
        if action is not None:
            rig.animation_data.action = action
        bpy.context.view_layer.update()


def _evaluated_in_ik(rig, rest: list[str], torso_shift: np.ndarray | None = None) -> tuple[dict, dict]:
    """Armature-space matrices of every bone with the controls `rest` at rest and the limbs in IK (the
    torso moved by `torso_shift` when given), and per IK end control the 3×3 map from its location
    channels to its armature-space head (Rigify's end controls move in their parent's space, not their
    own: Blender's `convert_space` says how)."""
    import bpy
    from mathutils import Matrix
    bones = rig.pose.bones
    with held_still(rig, rest, {path: 0.0 for path in ik_switches(rig)}):
        if torso_shift is not None:
            bones["torso"].matrix = Matrix(torso_shift.tolist()) @ bones["torso"].bone.matrix_local
            bpy.context.view_layer.update()
        maps = {}
        for limb in ik_limbs(rig):
            pb = bones[limb[1]]
            origin = np.array(rig.convert_space(pose_bone=pb, matrix=Matrix.Identity(4), from_space="LOCAL",
                                                to_space="POSE").translation)
            heads = [rig.convert_space(pose_bone=pb, matrix=Matrix.Translation(axis), from_space="LOCAL",
                                       to_space="POSE").translation for axis in np.eye(3)]
            maps[limb[1]] = np.array([np.array(head) - origin for head in heads]).T
        return {pb.name: np.array(pb.matrix) for pb in bones}, maps


def ik_switches(rig) -> list[str]:
    """The data paths of the rig's IK/FK switches (`pose.bones["thigh_parent.L"]["IK_FK"]`, …)."""
    return [f'pose.bones["{limb[3]}"]["IK_FK"]' for limb in ik_limbs(rig)]


def switch_curves(rig, frames) -> dict[str, np.ndarray]:
    """{switch path: its value at each of `frames`} for the IK/FK switches the rig's action animates —
    carried into a baked action so the limbs stay switched as the animator keyed them."""
    from .actions import played_fcurves
    paths = set(ik_switches(rig))
    return {fc.data_path: np.array([fc.evaluate(f) for f in frames]) for fc in played_fcurves(rig)
            if fc.data_path in paths}


def _middle(end: str) -> str:
    side = end.rsplit(".", 1)[1]
    return f"{MIDDLE[end.rsplit('.', 1)[0]]}.{side}"


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.add.reduce(a * b, axis=1)


def _about(axis: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The signed angles (L,) turning each `a` onto `b` about the unit `axis`, both projected across it
    (all (L, 3))."""
    a = a - axis * _dot(a, axis)[:, None]
    b = b - axis * _dot(b, axis)[:, None]
    cross = a[:, [1, 2, 0]] * b[:, [2, 0, 1]] - a[:, [2, 0, 1]] * b[:, [1, 2, 0]]
    return np.arctan2(_dot(axis, cross), _dot(a, b))


_CHANNELS = {"location": 3, "rotation_quaternion": 4, "rotation_euler": 3, "rotation_axis_angle": 4, "scale": 3}
_TWIST_CHANNEL = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}


class _PoseWriter:
    """The rig's pose channels as arrays, written to Blender a few `foreach_set` calls a frame (setting
    bones one by one costs a dozen Python calls each)."""

    def __init__(self, rig, channels: dict, roots: list[str]):
        from .bake import rotation_curves
        self.bones = rig.pose.bones
        index = {pb.name: k for k, pb in enumerate(self.bones)}
        self.arrays = {}
        for prop, width in _CHANNELS.items():
            values = np.empty(len(self.bones) * width, dtype=np.float32)
            self.bones.foreach_get(prop, values)
            self.arrays[prop] = values.reshape(-1, width)
        rows: dict[str, list] = {prop: [] for prop in _CHANNELS}
        for name, (loc, rot, *scale) in channels.items():
            k = index[name]
            prop, turn = rotation_curves(self.bones[name].rotation_mode, rot)
            rows[prop].append((k, turn))
            rows["location"].append((k, np.zeros((len(rot), 3)) if loc is None else loc))
            rows["scale"].append((k, scale[0] if scale else np.ones((len(rot), 3))))
        self.blocks = {prop: (np.array([k for k, _ in r]), np.stack([v for _, v in r], axis=1))
                       for prop, r in rows.items() if r}
        self.index = index
        self.dirty: set[str] = set()
        by: dict[str, list[int]] = {}  # per rotation channel: (the roots' rows, which of `roots`)
        for k, name in enumerate(roots):
            by.setdefault(_TWIST_CHANNEL.get(self.bones[name].rotation_mode, "rotation_euler"), []).append(k)
        self.twisted = {prop: (np.array([index[roots[k]] for k in ks]), np.array(ks)) for prop, ks in by.items()}
        self.scaled = np.array([index[name] for name in roots])

    def pose(self, f: int) -> None:
        for prop, (rows, values) in self.blocks.items():
            self.arrays[prop][rows] = values[f]
        self.dirty = set(self.blocks)

    def twist(self, angles: np.ndarray, scales: np.ndarray) -> None:
        """The chain roots turned by `angles` (L,) about their own Y axes and scaled by `scales` (L,)."""
        for prop, (rows, which) in self.twisted.items():
            a = angles[which]
            values = self.arrays[prop]
            values[rows] = 0.0
            if prop == "rotation_quaternion":
                values[rows, 0], values[rows, 2] = np.cos(a / 2), np.sin(a / 2)
            elif prop == "rotation_axis_angle":
                values[rows, 0], values[rows, 2] = a, 1.0
            else:  # a turn about Y alone is (0, a, 0) in every Euler order
                values[rows, 1] = a
        self.arrays["scale"][self.scaled] = scales[:, None]
        self.dirty |= {"scale", *self.twisted}

    def heads(self, rig) -> np.ndarray:
        """Every bone's head (armature space) with the rig evaluated as written now."""
        import bpy
        for prop in self.dirty:
            self.bones.foreach_set(prop, self.arrays[prop].ravel())
        self.dirty = set()
        rig.update_tag()
        bpy.context.view_layer.update()
        out = np.empty(len(self.bones) * 3, dtype=np.float32)
        self.bones.foreach_get("head", out)
        return out.reshape(-1, 3).astype(float)


def ik_root_twists(rig, channels: dict, goal: dict[str, np.ndarray]) -> dict:
    """{IK chain root: (quaternions (F, 4), scales (F, 3))}: the turn of each IK chain root (`thigh_ik`,
    `upper_arm_ik`) about its own length, and its scale, that make Blender's IK bend the knee or elbow
    onto its target in `goal` with the limb's bones at their rest lengths (Rigify's stretchy IK otherwise
    shortens them a little), the limb switched to IK and the rig posed by `channels`. Found as Rigify's
    own IK→FK snap finds them, by evaluating the rig, but with a Newton step on the bend plane's angle (a
    few evaluations a frame, warm-started from the frame before) where Rigify runs a ternary search."""
    limbs = [limb for limb in ik_limbs(rig) if _middle(limb[0]) in goal and limb[0] in goal]
    if not limbs:
        return {}
    roots = [limb[2] for limb in limbs]
    nf = len(goal[limbs[0][0]])
    tips = np.stack([goal[limb[0]][:, :3, 3] for limb in limbs], axis=1)  # (F, L, 3)
    wants = np.stack([goal[_middle(limb[0])][:, :3, 3] for limb in limbs], axis=1)
    rest = np.array([rig.data.bones[root].length for root in roots])
    twists, scales = np.zeros((nf, len(limbs))), np.ones((nf, len(limbs)))
    with held_still(rig, list(channels), {path: 0.0 for path in ik_switches(rig)}):
        writer = _PoseWriter(rig, channels, roots)
        hip_rows = [writer.index[root] for root in roots]
        knee_rows = [writer.index[_middle(limb[0])] for limb in limbs]
        angle, scale = np.zeros(len(limbs)), np.ones(len(limbs))
        for f in range(nf):
            writer.pose(f)
            for attempt in range(TWIST_PASSES):
                writer.twist(angle, scale)
                heads = writer.heads(rig)
                hip, knee = heads[hip_rows], heads[knee_rows]
                axis = tips[f] - hip
                axis /= np.sqrt(np.maximum(_dot(axis, axis), 1e-18))[:, None]
                turn = _about(axis, knee - hip, wants[f] - hip)
                stretch = rest / np.sqrt(np.maximum(_dot(knee - hip, knee - hip), 1e-18))
                moving = (np.abs(turn) >= SETTLED) | (np.abs(stretch - 1.0) >= SETTLED)
                if attempt == TWIST_PASSES - 1 or not moving.any():
                    break
                angle, scale = angle + turn, scale * stretch
            twists[f], scales[f] = angle, scale
    return {root: (np.stack([np.cos(twists[:, k] / 2), np.zeros(nf), np.sin(twists[:, k] / 2), np.zeros(nf)], axis=1),
                   np.repeat(scales[:, k, None], 3, axis=1)) for k, root in enumerate(roots)}


def ik_channels(rig, goal: dict[str, np.ndarray], posed: dict[str, np.ndarray], rest: list[str]) -> dict:
    """{IK control: (location (F, 3) or None, quaternions (F, 4))} putting each limb's end bone on `goal`
    (armature space, F × 4 × 4) in IK; `posed` holds the keyed controls' armature matrices per frame
    (`torso` among them), `rest` the controls the bake holds at rest (the IK ones are added to them)."""
    limbs = ik_limbs(rig)
    if not limbs or "torso" not in posed:
        return {}
    held = list(rest) + [n for limb in limbs for n in (limb[1], limb[2], *limb[4])]
    at_rest, moves = _evaluated_in_ik(rig, held)
    shift = np.eye(4)
    shift[2, 3] = 0.1
    moved, _ = _evaluated_in_ik(rig, held, shift)  # which end controls' parents the torso carries
    torso = posed["torso"] @ rigid_inverse(at_rest["torso"])  # (F, 4, 4): the torso's motion from rest
    nf = len(torso)
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (nf, 1))
    out = {}
    for end, ik_end, ik_root, _, rolls in limbs:
        offset = rigid_inverse(at_rest[end]) @ at_rest[ik_end]  # the end control, rigid with the end bone
        carried = not np.allclose(moved[ik_end], at_rest[ik_end], atol=1e-6)
        want = goal[end] @ offset
        if carried:
            want = rigid_inverse(torso) @ want  # as the control's parent sees it: the torso's motion taken off
        turn = np.einsum("ji,fjk->fik", at_rest[ik_end][:3, :3], want[:, :3, :3])  # about its own axes
        location = np.einsum("ij,fj->fi", np.linalg.inv(moves[ik_end]), want[:, :3, 3] - at_rest[ik_end][:3, 3])
        out[ik_end] = (location, quaternions(turn))
        for name in (ik_root, *rolls):
            out[name] = (None if rig.data.bones[name].use_connect else np.zeros((nf, 3)), identity)
        toe, toe_ik = end.replace("ORG-foot", "ORG-toe"), ik_end.replace("foot_ik", "toe_ik")
        if toe != end and toe in goal and toe_ik in at_rest:  # the toe bent off the floor (`toe_bend`)
            unbent = goal[end] @ rigid_inverse(at_rest[end]) @ at_rest[toe_ik]
            bent = goal[toe] @ rigid_inverse(at_rest[toe]) @ at_rest[toe_ik]
            turn = quaternions((rigid_inverse(unbent) @ bent)[:, :3, :3])
            out[toe_ik] = (None if rig.data.bones[toe_ik].use_connect else np.zeros((nf, 3)), turn)
    return out
