"""A clip put on the floor before it is fitted (`solver/physics/grounding.py`, `pose_fit.grounded_targets`):
hand-made clips of the default humanoid — standing raised off the floor, a foot tilted or on its toes, a
foot standing still above the floor, a jump — their targets made by MuJoCo's forward kinematics, and the
fitted result checked by it too: the soles' heights and tilts, and where it is moved, by how much."""
import mujoco
import numpy as np
import pytest

from solver.builders import mjcf
from solver.formats.task import SceneRef, build_scene
from solver.physics import grounding
from solver.physics.pose_fit import FLOOR_SLACK, PoseTargets, fit_poses, grounded_targets

BODIES = ["pelvis", "torso", "head", "thigh_right", "shin_right", "foot_right", "upper_arm_right", "lower_arm_right",
          "hand_right", "thigh_left", "shin_left", "foot_left", "upper_arm_left", "lower_arm_left", "hand_left"]
ENDS = np.array([b.startswith(("hand_", "foot_")) for b in BODIES])
SOLES = np.array([b.startswith("foot_") for b in BODIES])
DT = 1 / 30


@pytest.fixture(scope="module")
def model():
    return mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(build_scene(SceneRef(character="humanoid",
                                                                                 environment="floor"))))


def _standing(model) -> np.ndarray:
    """The default humanoid's rest, put on the floor (its lowest shape resting on it)."""
    data = mujoco.MjData(model)
    q = model.qpos0.copy()
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    q[2] -= _lowest(model, data)
    return q


def _lowest(model, data, body=None) -> float:
    """The lowest point of the character's shapes (or of `body`'s), from MuJoCo's own geom frames:
    capsule ends less their radius."""
    low = np.inf
    for g in range(model.ngeom):
        b = model.geom_bodyid[g]
        if b == 0 or (body is not None and b != model.body(body).id):
            continue
        half = model.geom_size[g][1] if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE else 0.0
        axis = data.geom_xmat[g].reshape(3, 3)[:, 2]
        low = min(low, data.geom_xpos[g][2] - abs(axis[2]) * half - model.geom_size[g][0])
    return low


def _targets(model, qpos: np.ndarray, turn: dict | None = None) -> PoseTargets:
    """What the clip `qpos` (F, nq) puts where: each body's origin and turn (forward kinematics), a body's
    turn tilted further about the world's x by `turn` {body: rad}."""
    data = mujoco.MjData(model)
    ids = np.array([model.body(b).id for b in BODIES])
    positions, rotations = [], []
    for q in qpos:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        positions.append(data.xpos[ids].copy())
        rotations.append(data.xmat[ids].reshape(-1, 3, 3).copy())
    rotations = np.array(rotations)
    for body, angle in (turn or {}).items():
        c, s, k = np.cos(angle), np.sin(angle), BODIES.index(body)
        rotations[:, k] = np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ rotations[:, k]
    return PoseTargets(ids, np.zeros((len(ids), 3)), np.array(positions), rotations)


def _fitted(model, targets):
    grounded, lowered = grounded_targets(model, targets, DT, ENDS, SOLES)
    return fit_poses(model, grounded, lowered=lowered), lowered


def _soles(model, qpos) -> tuple[dict, dict]:
    """Per foot, its lowest point's height and how far its sole is tilted from flat (degrees: its frame's
    up at the model's rest, turned as fitted, against the world's up), as fitted."""
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, data)
    feet = {f: model.body(f).id for f in ("foot_left", "foot_right")}
    up = {f: data.xmat[b].reshape(3, 3)[2].copy() for f, b in feet.items()}
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    low = {f: _lowest(model, data, f) for f in feet}
    tilt = {f: float(np.degrees(np.arccos(np.clip(data.xmat[b].reshape(3, 3)[2] @ up[f], -1, 1))))
            for f, b in feet.items()}
    return low, tilt


def test_a_clip_standing_above_the_floor_is_lowered_onto_it_as_a_whole(model):
    """Standing 3 cm up for a second: lowered by 3 cm (to 1 mm), every body alike, both soles resting on
    the floor once fitted; the same clip on the floor is left as it is (nothing lowered)."""
    q = np.tile(_standing(model), (30, 1))
    q[:, 2] += 0.03
    fit, lowered = _fitted(model, _targets(model, q))
    np.testing.assert_allclose(lowered, 0.03, atol=1e-3)
    low, tilt = _soles(model, fit.qpos[15])
    assert all(-FLOOR_SLACK - 1e-3 <= h <= 1e-3 for h in low.values()) and max(tilt.values()) < 0.5, (low, tilt)
    q[:, 2] -= 0.03
    assert not _fitted(model, _targets(model, q))[1].any()


def test_a_foot_standing_tilted_is_turned_flat_and_one_on_its_toes_stays_so(model):
    """The left foot's target tilted 8° (a capture's ankle bone): fitted flat (under 1°) and resting on the
    floor; tilted 35°, past `FLAT_TILT` — a foot on its toes — it keeps its tilt (within 3°)."""
    q = np.tile(_standing(model), (30, 1))
    fit, _ = _fitted(model, _targets(model, q, {"foot_left": np.radians(8.0)}))
    low, tilt = _soles(model, fit.qpos[15])
    assert tilt["foot_left"] < 1.0 and low["foot_left"] < 2e-3, (low, tilt)
    fit, _ = _fitted(model, _targets(model, q, {"foot_left": np.radians(35.0)}))
    assert abs(_soles(model, fit.qpos[15])[1]["foot_left"] - 35.0) < 3.0


def test_a_foot_standing_still_above_the_floor_is_set_down_by_itself(model):
    """The right foot held 3 cm up (the knee bent to lift it) while the left stands: the pose is not moved
    (the left foot is on the floor), the right foot's target alone is lowered by 3 cm and it rests on the
    floor once fitted."""
    q = np.tile(_standing(model), (30, 1))
    targets = _targets(model, q)
    k = BODIES.index("foot_right")
    targets.positions[:, k, 2] += 0.03
    fit, lowered = _fitted(model, targets)
    assert np.abs(np.delete(lowered[15], k)).max() < 1e-3 and lowered[15, k] == pytest.approx(0.03, abs=2e-3)
    low, _ = _soles(model, fit.qpos[15])
    assert abs(low["foot_right"]) < 3e-3 and abs(low["foot_left"]) < 3e-3, low


def test_a_jump_keeps_its_height_and_only_its_stance_is_grounded():
    """The offsets themselves (`ground_offsets`), on a clip of one body: standing 2 cm up, a jump 30 cm high
    and fast, standing again: 2 cm where it stands and never more than that in the air (the jump's apex is
    still 28 cm up); a clip in the air throughout is not moved at all."""
    t = np.arange(90) * DT
    height = np.full(90, 0.02)
    air = (t > 1.0) & (t < 1.6)
    height[air] = 0.02 + 0.28 * np.sin(np.pi * (t[air] - 1.0) / 0.6)
    positions = np.zeros((90, 1, 3))
    positions[:, 0, 2] = height + 0.1
    offsets = grounding.ground_offsets(height[:, None], positions, DT, np.array([True]))[:, 0]
    assert np.abs(offsets[(t < 0.6) | (t > 2.0)] - 0.02).max() < 1e-6
    assert offsets.max() <= 0.02 + 1e-9 and (height - offsets)[air].max() == pytest.approx(0.28)
    assert not grounding.ground_offsets(height[:, None] + 0.5, positions + 0.5, DT, np.array([True])).any()
