"""The humanoid mapping's naming rules on skeletons built here as plain bone records (the Blender
rigs themselves are tests/own_rigs.py's): the Unreal mannequin's names, side markers of every
convention, and helper bones that must never be taken for a limb."""
import pytest

from addon.humanoid_map import BoneInfo, MappingError, check_mapping, hand_at_forearm_end, map_humanoid, side_and_base


@pytest.mark.parametrize("name, side, base", [
    ("thigh.L", "left", "thigh"), ("DEF-thigh.L.001", "left", "thigh"), ("ORG-forearm.R", "right", "forearm"),
    ("mixamorig:LeftUpLeg", "left", "upleg"), ("mixamorig5:RightForeArm", "right", "forearm"),
    ("thigh_l", "left", "thigh"), ("calf_r", "right", "calf"), ("upperarm_l", "left", "upperarm"),
    ("spine_03", None, "spine"), ("L_Hand", "left", "hand"), ("Hand.Right", "right", "hand"),
    ("pelvis", None, "pelvis"),
])
def test_side_and_base(name, side, base):
    assert side_and_base(name) == (side, base)


def _unreal():
    """The UE4 mannequin's names and rough geometry (z up, facing -Y as Blender imports it)."""
    spec = [("root", None, (0, 0, 0), (0, 0, 0.1)), ("pelvis", "root", (0, 0, 1.0), (0, 0, 1.1)),
            ("spine_01", "pelvis", (0, 0, 1.1), (0, 0, 1.2)), ("spine_02", "spine_01", (0, 0, 1.2), (0, 0, 1.32)),
            ("spine_03", "spine_02", (0, 0, 1.32), (0, 0, 1.45)), ("neck_01", "spine_03", (0, 0, 1.5), (0, 0, 1.6)),
            ("head", "neck_01", (0, 0, 1.6), (0, 0, 1.78))]
    for s, sx in (("l", 1), ("r", -1)):
        spec += [(f"clavicle_{s}", "spine_03", (sx * 0.03, 0, 1.45), (sx * 0.16, 0, 1.45)),
                 (f"upperarm_{s}", f"clavicle_{s}", (sx * 0.16, 0, 1.45), (sx * 0.44, 0, 1.45)),
                 (f"upperarm_twist_01_{s}", f"upperarm_{s}", (sx * 0.2, 0, 1.45), (sx * 0.3, 0, 1.45)),
                 (f"lowerarm_{s}", f"upperarm_{s}", (sx * 0.44, 0, 1.45), (sx * 0.7, 0, 1.45)),
                 (f"hand_{s}", f"lowerarm_{s}", (sx * 0.7, 0, 1.45), (sx * 0.78, 0, 1.45)),
                 (f"ik_hand_{s}", "root", (sx * 0.7, 0, 1.45), (sx * 0.78, 0, 1.45)),
                 (f"thigh_{s}", "pelvis", (sx * 0.09, 0, 0.95), (sx * 0.09, 0, 0.52)),
                 (f"calf_{s}", f"thigh_{s}", (sx * 0.09, 0, 0.52), (sx * 0.09, 0, 0.09)),
                 (f"foot_{s}", f"calf_{s}", (sx * 0.09, 0, 0.09), (sx * 0.09, -0.12, 0.02)),
                 (f"ik_foot_{s}", "root", (sx * 0.09, 0, 0.09), (sx * 0.09, -0.12, 0.02))]
    return [BoneInfo(n, p, h, t) for n, p, h, t in spec]


def test_the_unreal_mannequin_is_mapped_by_its_names():
    m = map_humanoid(_unreal())
    assert m["pelvis"] == "pelvis" and m["waist_lower"] == "spine_01" and m["head"] == "head"
    assert m["torso"] in ("spine_02", "spine_03")
    assert [m[f"{s}_left"] for s in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")] == [
        "thigh_l", "calf_l", "foot_l", "upperarm_l", "lowerarm_l", "hand_l"]  # never twist or IK bones


def test_one_arm_missing_is_named():
    bones = [b for b in _unreal() if not b.name.endswith("arm_r") and b.name != "hand_r"]
    with pytest.raises(MappingError, match=r"no bone found for Upper arm \(right\), Forearm \(right\), "
                                           r"Hand \(right\)") as e:
        map_humanoid(bones)
    assert e.value.partial["thigh_right"] == "thigh_r" and e.value.partial["hand_left"] == "hand_l"  # to finish
    assert "upper_arm_right" not in e.value.partial


def test_a_shoulder_is_the_upper_arm_only_below_a_collar():
    """Biovision's `LeftCollar` → `LeftShoulder` → `LeftElbow`: the shoulder is the upper arm. A
    Mixamo-style `LeftShoulder` (a clavicle under the spine) is never taken for one, even where the
    arm below it has lost its name."""
    def bvh(collar: str) -> list[BoneInfo]:
        spec = [("Hips", None, (0, 0, 1.0), (0, 0, 1.1)), ("Chest", "Hips", (0, 0, 1.1), (0, 0, 1.3)),
                ("Chest2", "Chest", (0, 0, 1.3), (0, 0, 1.45)), ("Neck", "Chest2", (0, 0, 1.5), (0, 0, 1.6)),
                ("Head", "Neck", (0, 0, 1.6), (0, 0, 1.78))]
        for side, sx in (("Left", 1), ("Right", -1)):
            spec += [(f"{side}{collar}", "Chest2", (sx * 0.02, 0, 1.45), (sx * 0.17, 0, 1.45)),
                     (f"{side}Shoulder", f"{side}{collar}", (sx * 0.17, 0, 1.45), (sx * 0.45, 0, 1.45)),
                     (f"{side}Elbow", f"{side}Shoulder", (sx * 0.45, 0, 1.45), (sx * 0.71, 0, 1.45)),
                     (f"{side}Wrist", f"{side}Elbow", (sx * 0.71, 0, 1.45), (sx * 0.8, 0, 1.45)),
                     (f"{side}Hip", "Hips", (sx * 0.09, 0, 0.95), (sx * 0.09, 0, 0.52)),
                     (f"{side}Knee", f"{side}Hip", (sx * 0.09, 0, 0.52), (sx * 0.09, 0, 0.09)),
                     (f"{side}Ankle", f"{side}Knee", (sx * 0.09, 0, 0.09), (sx * 0.09, -0.12, 0.02))]
        return [BoneInfo(n, p, h, t) for n, p, h, t in spec]
    m = map_humanoid(bvh("Collar"))
    assert [m[f"{s}_left"] for s in ("thigh", "shin", "foot", "upper_arm", "lower_arm", "hand")] == [
        "LeftHip", "LeftKnee", "LeftAnkle", "LeftShoulder", "LeftElbow", "LeftWrist"]
    with pytest.raises(MappingError, match=r"no bone found for Upper arm \(right\), Upper arm \(left\):"):
        map_humanoid(bvh("Bone"))  # a shoulder under a bone named otherwise: not taken for the arm


def test_arms_ending_at_the_wrist_have_their_hands_at_the_forearms_ends():
    """A skeleton without hand bones (a capture whose arms end at the wrist): each hand is mapped to its
    forearm's bone, which `check_mapping` accepts for a hand alone."""
    hands = {"hand_l", "hand_r"}
    bones = [b for b in _unreal() if b.name not in hands]
    m = map_humanoid(bones)
    assert (m["hand_left"], m["hand_right"]) == ("lowerarm_l", "lowerarm_r")
    assert hand_at_forearm_end(m, "hand_left") and not hand_at_forearm_end(m, "lower_arm_left")
    with pytest.raises(MappingError, match="mapped to both"):
        check_mapping(dict(m, foot_left=m["shin_left"]), bones)
