"""Built-in scenes start resting: a scene parameter or body-shape variant that moves the surfaces the
furniture's seated pose was authored against gets the nearest pose that does not start inside the
seat or the floor; the default scenes and a task's own pose are left exactly as they are."""
import copy

import mujoco
import numpy as np
import pytest

from solver.builders import environments, mjcf
from solver.builders.rest import REST_TOLERANCE_M
from solver.formats.scene import Pose
from solver.formats.task import SceneRef, build_scene

VARIANTS = [("armchair", {"height": 0.04}, "default"), ("armchair", {"tilt": 15.0}, "default"),
            ("armchair", {}, "big_belly"), ("stool", {"height": 0.3}, "default"), ("bed", {"height": 0.2}, "default")]


def _deepest_overlap_from_xml(scene) -> float:
    """Independent of solver.builders.rest: the written MJCF's keyframe, MuJoCo's own collision pipeline."""
    model = mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(scene))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("initial").id)
    mujoco.mj_forward(model, data)
    dist = [c.dist for c in data.contact[: data.ncon]]
    return max([-d for d in dist] + [0.0])


@pytest.mark.parametrize("env,params,variant", VARIANTS)
def test_variants_start_resting_near_the_authored_pose(env, params, variant):
    scene = build_scene(SceneRef(environment=env, params=params, variant=variant))
    authored = copy.deepcopy(scene)
    authored.initial_pose = environments.build(env, params)[1]
    assert _deepest_overlap_from_xml(authored) > 0.02, "the unrested pose should start interpenetrating"
    assert _deepest_overlap_from_xml(scene) <= REST_TOLERANCE_M + 1e-4
    rested, before = scene.initial_pose, authored.initial_pose
    assert np.linalg.norm(np.subtract(rested.root_pos, before.root_pos)) < 0.03
    names = set(rested.joints) | set(before.joints)
    moved = [abs(rested.joints.get(k, 0.0) - before.joints.get(k, 0.0)) for k in names]
    assert np.degrees(max(moved)) < 20.0
    model = mujoco.MjModel.from_xml_string(mjcf.scene_to_xml(scene))
    for name, angle in rested.joints.items():
        j = model.joint(name)
        if model.jnt_limited[j.id]:
            assert model.jnt_range[j.id, 0] - 1e-9 <= angle <= model.jnt_range[j.id, 1] + 1e-9, name


def test_default_scenes_and_a_tasks_own_pose_are_left_as_they_are():
    assert build_scene(SceneRef(environment="armchair")).initial_pose == environments.build("armchair", {})[1]
    own = Pose(root_pos=[0.0, 0.0, 0.5])  # deep in the floor, on purpose: the author's pose is theirs
    assert build_scene(SceneRef(environment="floor", initial_pose=own)).initial_pose == own
