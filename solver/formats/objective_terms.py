"""The terms of the contact keyframes' objective (PartwiseMPC Appendix A, by their MuJoCo MPC
names), which body-part groups each lands in (paper Table 1), their default weights and the style
presets. The objective (`mpc.objectives.contact`) computes exactly these terms; keyframes, task files and
Blender's weight lists name and order them from here.
"""
from __future__ import annotations

from .scene import GROUPS

# The common-objective terms and the contact term, in the order keyframes and Blender list them.
TERM_NAMES = ("Torso Up", "Pelvis Up", "RFoot Up", "LFoot Up", "Head Height", "Torso Height", "Knee Feet XY",
              "COM Feet XY", "Facing Dir", "CoM Vel.", "Joint Vel.", "Control", "Contact", "Foot Slip", "Feet Down",
              "Feet Flat")
# The feet whose slipping "Foot Slip" counts, whose height "Feet Down" does and whose roll "Feet Flat" does, each
# in its own leg's group.
FOOT_TERM_ROLES = ("foot_right", "foot_left")
# Which groups a whole-body term lands in. "split": divided by joint group, each group seeing its
# own joints; "pairs": each contact pair lands in the groups of its bodies; "feet": each foot's share in
# its leg's group.
TERM_GROUPS = {
    "Torso Up": ("core",), "Pelvis Up": ("core",), "RFoot Up": ("right_leg",), "LFoot Up": ("left_leg",),
    "Head Height": ("core",), "Torso Height": ("core",), "Knee Feet XY": ("right_leg", "left_leg"),
    "COM Feet XY": tuple(GROUPS), "Facing Dir": ("core",), "CoM Vel.": tuple(GROUPS), "Joint Vel.": "split",
    "Control": "split", "Contact": "pairs", "Foot Slip": "feet", "Feet Down": "feet", "Feet Flat": "feet",
}
# Planted feet stay planted: the weight of a foot's slip (½ square of the speed of the point it presses
# at, m/s, times the share of the character's weight on it and the share the feet do not carry: a seated
# foot counts in full) in every style — not the paper's, whose feet crept and shuffled tens of centimetres
# through a stand (RESULTS, "Planted feet"); the armchair presets' seated keyframes, the stool's rotation and the
# bed's lie-down weigh it too. A keyframe that does not weigh it (the paper's other presets) leaves it off: with
# it, a standing hit reaction did not recover within its 4 s and table climb's seed 0 took 10 retries, not yet
# understood.
FOOT_SLIP = 1000.0
# A seated character keeps its feet down, below its seat (`physics.posture.FEET_DOWN_SHARE`): the weight of
# each foot's height above where the seated style allows it (smooth-abs, m). Without it the paper's bench
# shuffle was reached with the feet up on the bench, the character squatting on the seat knees to chest for
# most of the clip (RESULTS, "Seated with the feet down").
FEET_DOWN = 150.0
# A stand that ends the clip ends on flat feet: the weight of each foot's sideways roll (smooth-abs of the rise of
# its sideways axis from the horizontal) times the share of the character's weight on it, counted only while the
# keyframe is held (its pairs and style met: the sustain and the settle; `jobs.ContactJob.aim`). Rolling over the
# toes or onto the heel costs nothing, nor does a swinging foot. Stand → sit → stand's closing stand weighs it:
# without it 6 of 8 seeds ended on a foot rolled 34–61°. Not in a style: counted all through the keyframe it cost
# the rise its first tries, and even only while held it cost the Standing style's reach its balance (3 of 8 first
# tries against 6; RESULTS, "Feet on their edges").
FEET_FLAT = 30.0
# MuJoCo MPC's interact task defaults (Foot Slip off), used for terms a keyframe does not weigh.
DEFAULT_WEIGHTS = {"Torso Up": 10.0, "Pelvis Up": 10.0, "RFoot Up": 5.0, "LFoot Up": 5.0, "Head Height": 0.0,
                   "Torso Height": 20.0, "Knee Feet XY": 30.0, "COM Feet XY": 0.0, "Facing Dir": 0.0,
                   "CoM Vel.": 10.0, "Joint Vel.": 0.01, "Control": 0.8, "Contact": 100.0, "Foot Slip": 0.0,
                   "Feet Down": 0.0, "Feet Flat": 0.0}
# The paper's strategies' standing keyframes (balance first: COM over the feet, head up).
STANDING_WEIGHTS = {"Torso Up": 10.0, "Pelvis Up": 0.0, "RFoot Up": 1.0, "LFoot Up": 1.0, "Head Height": 80.0,
                    "Torso Height": 0.0, "Knee Feet XY": 0.0, "COM Feet XY": 100.0, "Facing Dir": 0.0,
                    "CoM Vel.": 0.0, "Joint Vel.": 0.01, "Control": 0.025, "Contact": 100.0, "Foot Slip": 0.0,
                    "Feet Down": 0.0, "Feet Flat": 0.0}
# Style presets for animators and task authors (MuJoCo MPC's sit / stand / relax modes):
# name → (one-line description, weights of every term).
# The standing style adds stillness and height to the paper's standing keyframes: a standing keyframe counts
# only standing (`physics.posture`) and, the last, at rest; with neither (the paper's own) the stand → sit →
# stand preset's stand rose and then drifted and fell in 2 of 2 seeds, with both it stood in 1 of 2 without
# retries (RESULTS, "A clip that ends standing"). It weighs the torso upright as it is judged (within 15°):
# at the paper's 10 a lean of 17° cost next to nothing and failed for style (RESULTS, "Planted feet").
STANDING_TORSO_UP = 100.0
STYLES = {
    "standing": ("Balance first: COM over the feet, head up, torso upright, still",
                 {**STANDING_WEIGHTS, "Torso Up": STANDING_TORSO_UP, "CoM Vel.": 10.0, "Torso Height": 20.0,
                  "Foot Slip": FOOT_SLIP}),
    "seated": ("MuJoCo MPC's defaults: upright torso, knees over feet, feet down",
               {**DEFAULT_WEIGHTS, "Foot Slip": FOOT_SLIP, "Feet Down": FEET_DOWN}),
    # Standing's balance without its posture: a hand reaching below the hips (a box on a low
    # platform or the floor) bends the torso and lowers the head, which "standing" charges for, so
    # the planner squats bolt upright to the heels instead and cannot rise again with the load.
    "reaching": ("Reaching down: COM over the feet, torso and head free to bend",
                 {**STANDING_WEIGHTS, "Torso Up": 0.0, "Head Height": 0.0, "Foot Slip": FOOT_SLIP}),
    "lying": ("No posture terms",
              {"Torso Up": 0.0, "Pelvis Up": 0.0, "RFoot Up": 0.0, "LFoot Up": 0.0, "Head Height": 0.0,
               "Torso Height": 0.0, "Knee Feet XY": 0.0, "COM Feet XY": 0.0, "Facing Dir": 0.0,
               "CoM Vel.": 10.0, "Joint Vel.": 0.01, "Control": 0.8, "Contact": 100.0, "Foot Slip": FOOT_SLIP,
               "Feet Down": 0.0, "Feet Flat": 0.0}),
}

# The look-ahead (s) a style's button gives a keyframe in Blender, where it needs more than the settings'
# horizon: coming to balance on the feet (RESULTS, "A longer look-ahead where the character rises").
STYLE_LOOK_AHEAD = {"standing": 0.6}


def style_weights(style: str) -> list[float]:
    """The weights of style `style`, in TERM_NAMES order."""
    return [STYLES[style][1][t] for t in TERM_NAMES]
