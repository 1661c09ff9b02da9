"""PartwiseMPC's objective (paper eq. (3)–(5) and Appendix A) for whole batches of rollouts.

Every term is computed per rollout and per step in numpy from rollout outputs, then weighted by the
active keyframe and averaged over the horizon. Each term also lands in the body-part groups of the
paper's Table 1, which is what partwise planning needs: posture terms in their body's group, balance
and COM terms in every group, joint velocity and control split so each group sees its own joints,
and contact terms in the groups of the bodies in the pair. Residuals and norms follow MuJoCo MPC's
humanoid interact task (smooth-abs with p = 0.1, quadratic for velocities, cosh p = 0.05 for control, softened
for a motor carrying more than the default humanoid's do: `control.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import mujoco
import numpy as np

from ...builders.roles import rest_forward
from ...core.rotations import rotate
from ...formats.contact_keyframes import WORLD, ContactKeyframe
from ...formats.objective_terms import FOOT_TERM_ROLES, TERM_GROUPS
from ...formats.scene import GROUPS
from ...formats.settings import ContactTermSettings, default_of
from ...physics.foot_roll import side_axes
from ...physics.model import BuiltModel
from ...physics.posture import feet_down, standing_above_feet
from .control import control_cost, control_softness

ALPHA = 0.1  # contact smoothing, eq. (5)
SMOOTH_P = 0.1  # smooth-abs parameter of the posture and balance terms
HEAD_HEIGHT, TORSO_HEIGHT = 1.4, 1.3  # MuJoCo MPC's targets (m), for its humanoid (PhysKey's default)
# The default humanoid's head and torso above its feet at rest (m): another character's height targets are
# MuJoCo MPC's scaled by its own (a 1.2 m child is not asked to hold its head at 1.4 m, nor a 2 m giant to
# crouch to it), to 3 decimals, so the default humanoid's stay exactly MuJoCo MPC's.
DEFAULT_HEAD_ABOVE_FEET, DEFAULT_TORSO_ABOVE_FEET = 1.365, 1.175
# Balance is judged by where the centre of mass is going: `COM Feet XY` charges its capture point (the centre of
# mass carried on by its horizontal velocity for BALANCE_LEAD × √(its height / g), the extrapolated centre of mass
# of legged balance), not where it is. Charged where it was, a reach's centre of mass crept forward of the ankles,
# cheap over the look-ahead, until the ankles could not catch it; half the capture point's lead steadies the reach
# and leaves the rise from a chair as it was (RESULTS, "Why the reach falls first time").
BALANCE_LEAD = 0.5
# A foot's landing charged at this share of a slip of its speed (`Objective.foot_slip`): in full, a seated foot
# moving to a mark hovered rather than land (RESULTS, "The landing charged").
LANDING_SHARE = 0.1
COMMON_ROLES = ("torso", "pelvis", "head", "foot_right", "foot_left", "shin_right", "shin_left")  # the terms' roles


def pressed(kf: ContactKeyframe, factor: float) -> ContactKeyframe:
    """Keyframe `kf` with its contact term weighed `factor` × its own (a retry's press on the mark)."""
    if factor == 1.0:
        return kf
    return replace(kf, weights=dict(kf.weights, Contact=kf.weight("Contact") * factor))


def smooth_abs(x, p=SMOOTH_P):
    return np.sqrt(x * x + p * p) - p


def capture_point(com: np.ndarray, comvel: np.ndarray, gravity: float) -> np.ndarray:
    """Where the centre of mass (…, 3) moving at `comvel` is headed on the floor (…, 2): carried on horizontally
    for BALANCE_LEAD × √(height / g), its height floored at 0.1 m (a body lying down); without gravity nothing
    topples, and it is where it is."""
    if gravity <= 0.0:
        return com[..., :2]
    lead = BALANCE_LEAD * np.sqrt(np.maximum(com[..., 2:3], 0.1) / gravity)
    return com[..., :2] + lead * comvel[..., :2]


@dataclass
class Costs:
    """Objective of a batch: `components[:, c]` is one weighted term (or one group's share of a split
    term, or one contact pair), horizon-averaged; `membership[c, g]` says whether group g sees it."""
    total: np.ndarray  # (nroll,)
    components: np.ndarray  # (nroll, ncomp)
    membership: np.ndarray  # (ncomp, ngroups) bool
    per_step: np.ndarray  # (nroll, nstep) weighted total per step
    excluded: np.ndarray | None = None  # (nroll,) bool: rollouts that score +inf everywhere

    def exclude(self, mask: np.ndarray) -> Costs:
        """Score the rollouts in `mask` (diverged ones) and any with a non-finite total +inf, in the
        total and in every part, so no argmin can pick them. Components are left alone: an inf
        component would make `part` sums of parts that do not see it wrong, and a part that sees no
        component would still sum to 0; `part` applies the mask instead."""
        mask = np.asarray(mask, dtype=bool) | ~np.isfinite(self.total)
        self.excluded = mask
        self.total = np.where(mask, np.inf, self.total)
        return self

    @classmethod
    def of_terms(cls, values: list[np.ndarray], owners: list[tuple], nroll: int, nstep: int) -> Costs:
        """Costs of weighted per-step terms (each (nroll, nstep)) and the groups that see each."""
        stacked = np.stack(values, axis=-1) if values else np.zeros((nroll, nstep, 0))
        membership = np.array([[g in who for g in GROUPS] for who in owners], dtype=bool).reshape(-1, len(GROUPS))
        components = stacked.mean(axis=1)
        return cls(total=components.sum(axis=1), components=components, membership=membership,
                   per_step=stacked.sum(axis=-1))

    def part(self, group_indices) -> np.ndarray:
        """Cost seen by a set of groups: every component any of them sees, counted once."""
        sees = self.membership[:, list(group_indices)].any(axis=1)
        seen = self.components[:, sees].sum(axis=1)
        if self.excluded is not None:
            seen = np.where(self.excluded | ~np.isfinite(seen), np.inf, seen)
        return seen


class Objective:
    """Objective of one character in one model; `evaluate` scores a batch under a keyframe."""

    def __init__(self, built: BuiltModel, speed_limit: float = default_of(ContactTermSettings, "speed_limit"),
                 speed_weight: float = default_of(ContactTermSettings, "speed_weight")):
        """`speed_limit` (m/s) and `speed_weight`: the speed-limit term (off at weight 0), which keeps
        limbs from whipping: a hand swung at 4 m/s sinks 2 cm into what it hits."""
        m = built.model
        self.built = built
        self.speed_limit, self.speed_weight = speed_limit, speed_weight
        scene = built.scene
        groups = {}
        for b in scene.character.bodies:
            groups[b.name] = b.joints[0].group if b.joints else (groups[b.parent] if b.parent else "core")
        self.body_group = groups
        self.group_index = {g: i for i, g in enumerate(GROUPS)}
        joint_group = {j.name: j.group for j in scene.joints()}
        char_dofs = [(int(m.jnt_dofadr[m.joint(n).id]), g) for n, g in joint_group.items()]
        self.dof_idx = np.array([d for d, _ in char_dofs], dtype=int)
        self.dof_group = np.array([self.group_index[g] for _, g in char_dofs], dtype=int)
        nu = built.nu_character
        self.act_group = np.array([self.group_index[joint_group[m.joint(int(m.actuator_trnid[a, 0])).name]]
                                   for a in range(nu)], dtype=int)
        self.nu = nu
        self.control_softness = control_softness(built)  # the control term's cosh parameter
        self.gravity = float(np.linalg.norm(m.opt.gravity))  # the capture point's g (m/s²)
        # Rest orientation of each body: "up" and "forward" as seen from the body (characters stand
        # upright at rest, PhysKey's facing +x, an MJCF's wherever its hips and shoulders say).
        data = mujoco.MjData(m)
        mujoco.mj_kinematics(m, data)
        forward = rest_forward(scene.character, built.roles)
        self.up_local = {b: data.xmat[m.body(b).id].reshape(3, 3).T @ [0, 0, 1] for b in groups}
        self.forward_local = {b: data.xmat[m.body(b).id].reshape(3, 3).T @ forward for b in groups}
        # the bodies the common terms read, by role (a term whose role no body plays is off: the run
        # says so, `roles.missing_terms`)
        self.roles = {role: body for role, body in built.roles.items() if body in groups}
        feet = [self.roles[r] for r in FOOT_TERM_ROLES if r in self.roles]
        sides = side_axes(m, data, [m.body(b).id for b in feet])  # each foot's sideways axis, as foot_roll reads it
        self.side_local = {} if sides is None else dict(zip(feet, sides))
        self.common_bodies = sorted({self.roles[r] for r in COMMON_ROLES if r in self.roles})
        self.head_height = HEAD_HEIGHT * self._scale(data, "head", DEFAULT_HEAD_ABOVE_FEET)
        self.torso_height = TORSO_HEIGHT * self._scale(data, "torso", DEFAULT_TORSO_ABOVE_FEET)
        self.feet_down = feet_down(m, data, self.roles)  # where "Feet Down" keeps the feet (the floor, or low enough)
        self.character_bodies = list(groups)
        self.weight_n = max(float(sum(m.body_mass[m.body(b).id] for b in groups) * np.linalg.norm(m.opt.gravity)), 1e-9)
        self.character_body_group = np.array([self.group_index[groups[b]] for b in self.character_bodies], dtype=int)

    def _scale(self, rest: mujoco.MjData, role: str, default_above_feet: float) -> float:
        """How tall the character's `role` body stands above its lower foot at rest (`rest`: its model at
        `qpos0`), its legs hanging as the default's (`posture.standing_above_feet`), against the default
        humanoid's, to 3 decimals; 1 without the role or the feet."""
        above = standing_above_feet(self.built.model, rest, self.roles, role)
        return round(above / default_above_feet, 3) if above is not None and above > 0 else 1.0

    def bodies_for(self, kf: ContactKeyframe) -> list[str]:
        """The bodies `evaluate` reads under keyframe `kf`."""
        pairs = {b for p in kf.pairs for b in (p.body1, p.body2) if b != WORLD}
        speed = set(self.character_bodies) if self.speed_weight else set()
        return sorted(set(self.common_bodies) | pairs | speed)

    def pair_groups(self, pair) -> tuple:
        """The body-part groups that see a pair's contact term: its character bodies' groups; every
        group for a pair that moves an object only (box ↔ shelf: the whole body carries it)."""
        seen_by = {self.body_group[b] for b in (pair.body1, pair.body2) if b in self.body_group}
        return tuple(sorted(seen_by)) if seen_by else tuple(GROUPS)

    # -- geometry --------------------------------------------------------------------------------
    def point(self, feat, body: str, local) -> np.ndarray:
        if body == WORLD:
            return np.broadcast_to(np.asarray(local, float), feat["pos"][next(iter(feat["pos"]))].shape)
        return feat["pos"][body] + rotate(feat["quat"][body], np.asarray(local, float))

    def pair_displacements(self, feat, kf: ContactKeyframe) -> np.ndarray:
        """(…, npairs, 3) displacement p − q of every pair."""
        return np.stack([self.point(feat, p.body1, p.pos1) - self.point(feat, p.body2, p.pos2) for p in kf.pairs],
                        axis=-2)

    def body_speed_excess(self, feat) -> np.ndarray:
        """(nroll, nstep, nbodies) ½ (speed − speed_limit)² of each character body where it is over the
        limit, from its positions step to step (the first step repeats the second's speed)."""
        pos = np.stack([feat["pos"][b] for b in self.character_bodies], axis=2)  # (nroll, nstep, nb, 3)
        speed = np.linalg.norm(np.diff(pos, axis=1), axis=-1) / self.built.model.opt.timestep
        speed = np.concatenate([speed[:, :1], speed], axis=1) if speed.shape[1] else np.zeros(pos.shape[:3])
        over = np.maximum(speed - self.speed_limit, 0.0)
        return 0.5 * over * over

    def foot_slip(self, feat, body: str, off_feet: np.ndarray, landing=False) -> np.ndarray:
        """(nroll, nstep) ½ square of the horizontal speed at which `body` slips where it presses on the scene,
        times how planted it is: the share of the character's weight it carries, and the share the feet do not
        carry (on a seat, a knee, the hands) besides. The point it presses at one step (its `_touch` sensor's
        force-weighted centre) is carried with the body to the next and measured against where it was — a
        loaded foot dragged slips, one rolling over its toes or turning on its heel does not; a standing
        character's foot drawn lightly while the other carries the weight hardly counts, and a seated one's
        counts in full, however lightly it presses (`off_feet`, (nroll, nstep): the share of the weight the feet
        do not carry, `off_feet_share`); counted where it touches at both steps (the first step repeats the
        second's).

        Where `landing` (nroll,) holds, the step the body touches down at is charged too, at LANDING_SHARE of a
        slip: the point it lands on carried back with the body one step, the horizontal speed at which it arrived
        there, times its share of the weight then — a foot set down skimming the floor slides as it loads."""
        touch = feat["touch"][body]  # found, net force (3), point (3)
        found = touch[..., 0] > 0
        load = np.clip(np.abs(touch[..., 3]) / self.weight_n + off_feet, 0.0, 1.0) * found
        pos, quat = feat["pos"][body], feat["quat"][body]
        conj = quat * np.array([1.0, -1.0, -1.0, -1.0])
        arm = rotate(conj[:, :-1], touch[:, :-1, 4:] - pos[:, :-1])  # the pressed point in the body's frame
        moved = rotate(quat[:, 1:], arm) + pos[:, 1:] - touch[:, :-1, 4:]
        dt2 = self.built.model.opt.timestep ** 2
        slip = 0.5 * np.sum(moved[..., :2] ** 2, axis=-1) / dt2 * np.minimum(load[:, :-1], load[:, 1:])
        if np.any(landing):
            landed = found[:, 1:] & ~found[:, :-1] & np.asarray(landing, bool)[:, None]
            point = touch[:, 1:, 4:]  # where it lands, carried back to where that point of the body was a step before
            back = point - rotate(quat[:, :-1], rotate(conj[:, 1:], point - pos[:, 1:])) - pos[:, :-1]
            slip = slip + LANDING_SHARE * 0.5 * np.sum(back[..., :2] ** 2, axis=-1) / dt2 * load[:, 1:] * landed
        return np.concatenate([slip[:, :1], slip], axis=1)

    def feet_asked_to_move(self, feat, kf: ContactKeyframe) -> dict[str, np.ndarray]:
        """{foot body: (nroll,) bool} whether keyframe `kf` still asks that foot's leg to move in each rollout: a
        pair on a body of the foot's group (the foot, its shin, its thigh) not yet within the keyframe's tolerance
        at the rollout's first step. A foot being walked to its mark may land as it can; one that is not asked to
        move (or whose pair is met) has its landings charged (`foot_slip`)."""
        nroll = next(iter(feat["pos"].values())).shape[0]
        groups = [{self.body_group.get(p.body1), self.body_group.get(p.body2)} for p in kf.pairs]
        legs = {foot: [j for j, g in enumerate(groups) if self.body_group[foot] in g]  # each foot's pairs
                for foot in (self.roles[r] for r in FOOT_TERM_ROLES if r in self.roles)}
        if not any(legs.values()):
            return {foot: np.zeros(nroll, bool) for foot in legs}
        first = {key: {b: v[:, :1] for b, v in feat[key].items()} for key in ("pos", "quat")}
        unmet = np.linalg.norm(self.pair_displacements(first, kf)[:, 0], axis=-1) > kf.tolerance  # (nroll, npairs)
        return {foot: unmet[:, pairs].any(axis=1) for foot, pairs in legs.items()}

    def off_feet_share(self, feat) -> np.ndarray:
        """(nroll, nstep) the share of the character's weight its touching feet do not carry (0 standing)."""
        on_feet = sum(np.abs(t[..., 3]) * (t[..., 0] > 0) for t in feat["touch"].values()) / self.weight_n
        return np.maximum(1.0 - on_feet, 0.0)

    def foot_roll(self, feat, body: str) -> np.ndarray:
        """(nroll, nstep) smooth-abs of the rise of `body`'s sideways axis from the horizontal (the sine of its
        roll onto an edge), times the share of the character's weight it carries where it presses on the scene:
        a loaded foot on its edge costs, one rolling over its toes or onto its heel, or swinging, does not."""
        touch = feat["touch"][body]  # found, net force (3), point (3)
        load = np.minimum(np.abs(touch[..., 3]) / self.weight_n, 1.0) * (touch[..., 0] > 0)
        return load * smooth_abs(rotate(feat["quat"][body], self.side_local[body])[..., 2])

    # -- the objective -----------------------------------------------------------------------------
    def evaluate(self, feat: dict, qvel: np.ndarray, ctrl: np.ndarray, kf: ContactKeyframe) -> Costs:
        """feat: {"pos": {body: (nroll, nstep, 3)}, "quat": {...}, "com": …, "comvel": …} aligned with
        the states; qvel (nroll, nstep, nv); ctrl (nroll, nstep, nu)."""
        nroll, nstep = qvel.shape[:2]
        values: list[np.ndarray] = []  # each (nroll, nstep), weighted
        owners: list[tuple] = []

        def add_weighted(w, value, where):
            if w != 0.0:
                values.append(w * np.broadcast_to(value, (nroll, nstep)))
                owners.append(tuple(where))

        def add(term, value, where):
            add_weighted(kf.weight(term), value, where)

        def up(body):
            axis = rotate(feat["quat"][body], self.up_local[body])
            return smooth_abs(np.abs(axis[..., 2] - 1.0))

        pos = feat["pos"]
        role = self.roles
        if "torso" in role:
            add("Torso Up", up(role["torso"]), TERM_GROUPS["Torso Up"])
            add("Torso Height", smooth_abs(pos[role["torso"]][..., 2] - self.torso_height), TERM_GROUPS["Torso Height"])
        if "pelvis" in role:
            add("Pelvis Up", up(role["pelvis"]), TERM_GROUPS["Pelvis Up"])
        if "foot_right" in role:
            add("RFoot Up", up(role["foot_right"]), TERM_GROUPS["RFoot Up"])
        if "foot_left" in role:
            add("LFoot Up", up(role["foot_left"]), TERM_GROUPS["LFoot Up"])
        if "head" in role:
            add("Head Height", smooth_abs(pos[role["head"]][..., 2] - self.head_height), TERM_GROUPS["Head Height"])
        if "foot_right" in role and "foot_left" in role:
            feet = 0.5 * (pos[role["foot_right"]][..., :2] + pos[role["foot_left"]][..., :2])
            if "shin_right" in role and "shin_left" in role:
                knees = 0.5 * (pos[role["shin_right"]][..., :2] + pos[role["shin_left"]][..., :2])
                add("Knee Feet XY", smooth_abs(np.linalg.norm(knees - feet, axis=-1)), TERM_GROUPS["Knee Feet XY"])
            headed = capture_point(feat["com"], feat["comvel"], self.gravity)
            add("COM Feet XY", smooth_abs(np.linalg.norm(headed - feet, axis=-1)), TERM_GROUPS["COM Feet XY"])
        if kf.facing_target is not None and "torso" in role:
            torso = role["torso"]
            fwd = rotate(feat["quat"][torso], self.forward_local[torso])[..., :2]
            to_target = np.asarray(kf.facing_target, float) - pos[torso][..., :2]
            to_target = to_target / np.maximum(np.linalg.norm(to_target, axis=-1, keepdims=True), 1e-9)
            add("Facing Dir", smooth_abs(np.linalg.norm(to_target - fwd, axis=-1)), TERM_GROUPS["Facing Dir"])
        add("CoM Vel.", 0.5 * np.sum(feat["comvel"][..., :2] ** 2, axis=-1), TERM_GROUPS["CoM Vel."])
        joint_vel = 0.5 * qvel[..., self.dof_idx] ** 2
        control = control_cost(ctrl[..., :self.nu], self.control_softness)
        for g, name in enumerate(GROUPS):  # split terms: each group sees its own joints
            add("Joint Vel.", joint_vel[..., self.dof_group == g].sum(axis=-1), (name,))
            add("Control", control[..., self.act_group == g].sum(axis=-1), (name,))
        if self.speed_weight:
            excess = self.body_speed_excess(feat)
            for g, name in enumerate(GROUPS):
                mine = self.character_body_group == g
                if mine.any():
                    add_weighted(self.speed_weight, excess[..., mine].sum(axis=-1), (name,))
        if kf.weight("Foot Slip") and nstep > 1 and feat.get("touch"):
            off_feet, moving = self.off_feet_share(feat), self.feet_asked_to_move(feat, kf)
            for foot in FOOT_TERM_ROLES:
                if foot in role and role[foot] in feat["touch"]:
                    slip = self.foot_slip(feat, role[foot], off_feet, ~moving[role[foot]])
                    add("Foot Slip", slip, (self.body_group[role[foot]],))
        if kf.weight("Feet Flat"):
            for foot in FOOT_TERM_ROLES:
                if foot in role and role[foot] in feat.get("touch", {}) and role[foot] in self.side_local:
                    add("Feet Flat", self.foot_roll(feat, role[foot]), (self.body_group[role[foot]],))
        if kf.weight("Feet Down") and "pelvis" in role and self.feet_down is not None:
            pelvis_z, model = pos[role["pelvis"]][..., 2], self.built.model
            for foot in FOOT_TERM_ROLES:
                if foot in role:
                    up_by = self.feet_down.up_by(pelvis_z, pos[role[foot]][..., 2], model.body(role[foot]).id)
                    add("Feet Down", smooth_abs(up_by), (self.body_group[role[foot]],))
        if kf.weight("Contact"):
            d = self.pair_displacements(feat, kf)
            per_pair = np.sum(np.sqrt(d * d + ALPHA * ALPHA) - ALPHA, axis=-1)  # eq. (5), per pair
            for j, pair in enumerate(kf.pairs):
                add("Contact", per_pair[..., j], self.pair_groups(pair))
        return Costs.of_terms(values, owners, nroll, nstep)
