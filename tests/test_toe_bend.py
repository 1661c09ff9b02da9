"""A rig's toes in a baked motion bend up off the floor where the physics foot stands on its ball, and stay
rigid with the foot elsewhere: on a generated Rigify rig in IK and in FK (its toe controls keyed) and on a
Mixamo-named skeleton (its ToeBase keyed), with the extension installed. The physics foot is posed by MuJoCo's
forward kinematics and set on the floor; the toes are read back from Blender's evaluated pose."""
import mujoco
import numpy as np
import pytest
from blender_env import addon
from own_rigs import IK_SWITCHES, _model, _physics, built_rigs

PITCHES = (0.0, -0.4, 0.8, 1.0)  # ankle_y_right: flat, toes up (heel strike), on the ball, on the tip


@pytest.fixture(scope="module")
def rigs():
    return built_rigs()


def _on_the_floor(model, data, q, lowest) -> np.ndarray:
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    q = q.copy()
    q[2] -= min(lowest(model, data, model.body(f"foot_{s}").id) for s in ("left", "right"))
    return q


@pytest.mark.parametrize("name, ik_fk", [("rigify generated", 0.0), ("rigify generated", 1.0), ("mixamo", None)])
def test_the_toes_bend_up_off_the_floor_only_where_the_foot_stands_on_its_ball(rigs, name, ik_fk):
    bpy, module, by_name = rigs
    from mathutils import Vector  # with bpy, imported by the fixture
    rig = by_name[name]
    retarget, bake, toe_bend = (addon(module, m) for m in ("retarget", "bake", "toe_bend"))
    physics, mapping = _physics(bpy, module, rig)
    model = _model(bpy, module, physics)
    data = mujoco.MjData(model)
    qpos = []
    for pitch in PITCHES:
        q = model.qpos0.copy()
        q[model.jnt_qposadr[model.joint("ankle_y_right").id]] = pitch
        qpos.append(_on_the_floor(model, data, q, toe_bend._lowest))
    air = qpos[2].copy()
    air[2] += 0.3  # on the ball, lifted 30 cm: pointing down in the air
    qpos = np.array(qpos + [air])
    if ik_fk is not None:
        for switch in IK_SWITCHES:
            rig.pose.bones[switch]["IK_FK"] = ik_fk
        rig.update_tag()
    foot, toe = mapping["foot_right"], toe_bend.toe_bone(rig, mapping["foot_right"])
    shown = toe.replace("ORG-", "DEF-")  # what the mesh follows
    world = rig.matrix_world
    retarget.bake_onto_rig(rig, physics, bake.Clip(model, np.arange(len(qpos)) / 30.0, qpos, 1, 30.0), "toe test")
    tips, rigid_tips, bases, heads = [], [], [], []
    for k in range(len(qpos)):
        bpy.context.scene.frame_set(1 + k)
        pb, fb = rig.pose.bones[shown], rig.pose.bones[foot]
        rigid = fb.matrix @ rig.data.bones[foot].matrix_local.inverted() @ rig.data.bones[toe].matrix_local
        tips.append((world @ pb.tail).z)
        rigid_tips.append((world @ rigid @ Vector((0.0, rig.data.bones[toe].length, 0.0))).z)
        bases.append((world @ pb.head).z)
        heads.append(((world @ pb.head) - (world @ rigid.to_translation())).length)
    clearance = tips[0]  # flat on the floor
    assert max(heads) < 1e-3  # bent about its own base, which stays on the foot
    assert rigid_tips[2] < clearance - 0.02 and rigid_tips[3] < clearance - 0.02  # through the floor, unbent
    for k in (0, 1, 4):  # flat, heel strike, in the air: rigid with the foot
        assert abs(tips[k] - rigid_tips[k]) < 1e-3, (name, k, tips[k], rigid_tips[k])
    for k in (2, 3):  # on the ball and on the tip: bent up, the tip as high as standing flat (or level with the base)
        assert tips[k] > rigid_tips[k] + 0.02
        assert abs(tips[k] - min(clearance, bases[k])) < 2e-3, (name, k, tips[k], clearance, bases[k])
