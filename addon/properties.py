"""PhysKey's data on Blender objects: per bone (`bone.physkey`: joints, collision/mass shapes,
sites) — one MuJoCo body per bone, in the bone's frame (origin at its head, Y along it)."""
from __future__ import annotations

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..solver.core.registry import METHODS, PLANNERS
from ..solver.formats.contact_keyframes import MAX_KEYFRAME_HORIZON
from ..solver.formats.objective_terms import TERM_NAMES
from ..solver.formats.settings import AssistSettings, ContactSettings
from .setting_props import setting_property

GROUP_ITEMS = [("core", "Core", "Spine and root"), ("right_leg", "Right leg", ""), ("left_leg", "Left leg", ""),
               ("right_arm", "Right arm", ""), ("left_arm", "Left arm", "")]
GEOM_ITEMS = [("capsule", "Capsule", ""), ("sphere", "Sphere", ""), ("box", "Box", ""),
              ("cylinder", "Cylinder", ""), ("ellipsoid", "Ellipsoid", ""), ("mesh", "Convex hull", "")]


def _joint_changed(self, context):
    from .joint_limits import joint_changed
    joint_changed(self, context)


class PHYSKEY_PG_joint(bpy.types.PropertyGroup):
    """A hinge (or ball) joint at the bone's head, with its drive (torque motor or PD servo)."""
    type: EnumProperty(items=[("hinge", "Hinge", ""), ("ball", "Ball", "")], default="hinge", update=_joint_changed)
    axis: FloatVectorProperty(size=3, default=(0.0, 0.0, 1.0), description="Rotation axis in the bone's frame",
                              update=_joint_changed)
    pos: FloatVectorProperty(size=3, default=(0.0, 0.0, 0.0), subtype="TRANSLATION",
                             description="Pivot in the bone's frame (the head, unless the joint turns about "
                                         "another point)")
    range_min: FloatProperty(default=-3.14159, subtype="ANGLE", unit="ROTATION", update=_joint_changed)
    range_max: FloatProperty(default=3.14159, subtype="ANGLE", unit="ROTATION", update=_joint_changed)
    group: EnumProperty(items=GROUP_ITEMS, default="core", description="Body part for partwise planning")
    strength: FloatProperty(default=40.0, min=0.0, description="Torque limit / motor gear (N·m)")
    kp: FloatProperty(default=200.0, min=0.0, description="PD stiffness (N·m/rad)")
    kv: FloatProperty(default=20.0, min=0.0, description="PD damping (N·m·s/rad)")
    damping: FloatProperty(default=0.2, min=0.0)
    stiffness: FloatProperty(default=0.0, min=0.0)
    armature: FloatProperty(default=0.01, min=0.0)
    actuated: BoolProperty(default=True)
    # The limit's softness where the character's file gave its own (an imported MJCF keeps it)
    own_limit_softness: BoolProperty(default=False, description="The range limit has its own MuJoCo softness "
                                     "(solref, solimp) instead of PhysKey's")
    solref_limit: FloatVectorProperty(size=2, default=(0.02, 1.0), description="MuJoCo's solref of the range limit")
    solimp_limit: FloatVectorProperty(size=5, default=(0.0, 0.99, 0.01, 0.5, 2.0),
                                      description="MuJoCo's solimp of the range limit")


class PHYSKEY_PG_geom(bpy.types.PropertyGroup):
    """A collision and mass shape in the bone's frame (MuJoCo conventions: half-sizes)."""
    type: EnumProperty(items=GEOM_ITEMS, default="capsule")
    size: FloatVectorProperty(size=3, default=(0.05, 0.1, 0.0), min=0.0)
    pos: FloatVectorProperty(size=3, default=(0.0, 0.0, 0.0), subtype="TRANSLATION")
    quat: FloatVectorProperty(size=4, default=(1.0, 0.0, 0.0, 0.0))
    use_mass: BoolProperty(default=False, description="Give the mass directly instead of a density")
    mass: FloatProperty(default=1.0, min=0.0)
    density: FloatProperty(default=1000.0, min=0.0)
    friction: FloatProperty(default=0.7, min=0.0)
    condim: EnumProperty(items=[("1", "1: no friction", ""), ("3", "3: sliding friction", ""),
                                ("4", "4: and torsional", ""), ("6", "6: and rolling", "")], default="3",
                         description="MuJoCo's contact dimensionality (what friction the shape's contacts have)")
    # The contacts' softness where the character's file gave its own (an imported MJCF keeps it)
    own_softness: BoolProperty(default=False, description="The shape's contacts have their own MuJoCo softness "
                               "(solref, solimp) instead of PhysKey's")
    solref: FloatVectorProperty(size=2, default=(0.015, 1.0), description="MuJoCo's solref of the shape's contacts")
    solimp: FloatVectorProperty(size=5, default=(0.9, 0.99, 0.003, 0.5, 2.0),
                                description="MuJoCo's solimp of the shape's contacts")


class PHYSKEY_PG_site(bpy.types.PropertyGroup):
    pos: FloatVectorProperty(size=3, default=(0.0, 0.0, 0.0), subtype="TRANSLATION")


class PHYSKEY_PG_bone(bpy.types.PropertyGroup):
    joints: CollectionProperty(type=PHYSKEY_PG_joint)
    geoms: CollectionProperty(type=PHYSKEY_PG_geom)
    sites: CollectionProperty(type=PHYSKEY_PG_site)


COLLIDER_SHAPES = [("auto", "Auto", "Convex hull of the mesh (its bounding box if the mesh is very large)"),
                   ("box", "Box", "The object's bounding box"), ("sphere", "Sphere", "Bounding sphere"),
                   ("cylinder", "Cylinder", "Upright bounding cylinder"), ("capsule", "Capsule", "Upright capsule"),
                   ("hull", "Convex hull", "Convex hull of the mesh's vertices")]


class PHYSKEY_PG_slot(bpy.types.PropertyGroup):
    """One humanoid slot (`name`: the physics body, e.g. 'thigh_left') and the rig's bone in it."""
    bone: StringProperty(default="", description="The rig's bone that is this part of the humanoid")


class PHYSKEY_PG_exclude(bpy.types.PropertyGroup):
    """Two bones (bodies) of the character that never collide with each other."""
    body1: StringProperty(default="")
    body2: StringProperty(default="")


class PHYSKEY_PG_object(bpy.types.PropertyGroup):
    is_character: BoolProperty(default=False)
    exclude_contacts: CollectionProperty(type=PHYSKEY_PG_exclude, description="Pairs of the character's bones "
                                         "that never collide (e.g. overlapping at rest)")
    animator_rig: PointerProperty(type=bpy.types.Object, description="The animator's rig this physics character "
                                  "was made from: Keep bakes the motion onto it too")
    humanoid_map: CollectionProperty(type=PHYSKEY_PG_slot, description="Which of this rig's bones are which "
                                     "part of the humanoid")
    roles: CollectionProperty(type=PHYSKEY_PG_slot, description="Which bone of this physics character plays "
                              "which part (pelvis, chest, feet …): what its objective terms and figures read")
    active_humanoid_slot: bpy.props.IntProperty(default=0)
    units_note: StringProperty(default="", description="What PhysKey did to this rig's units or scale, shown "
                               "in the Your Rig panel")
    linked_scale: bpy.props.FloatProperty(default=0.0, description="The animator's rig's scale when this physics "
                                          "character was made from it (0: not made from a rig)")
    animator_action: PointerProperty(type=bpy.types.Action, description="The animator's action, set aside while a "
                                     "solution is previewed and given back when the preview ends (held by "
                                     "reference: renaming it meanwhile does not lose it)")
    is_body: BoolProperty(default=False, description="An environment body: its collider children move with it")
    collider: BoolProperty(default=False, description="The character can touch this object")
    shape: EnumProperty(items=COLLIDER_SHAPES, default="auto")
    friction: FloatProperty(default=0.7, min=0.0, soft_max=2.0)
    dynamic: BoolProperty(default=False, description="Free to be pushed around (otherwise fixed in place)")
    mass: FloatProperty(default=5.0, min=0.0, description="Mass of a free object (kg)")


class PHYSKEY_PG_pair(bpy.types.PropertyGroup):
    """A point on a character bone (or a free object) that should meet a point on an object (or `world`)."""
    body1: StringProperty(description="Character bone, or a free object to put somewhere")
    pos1: FloatVectorProperty(size=3, subtype="TRANSLATION", description="Point in the bone's frame")
    body2: StringProperty(default="world", description="Object, bone or 'world'")
    pos2: FloatVectorProperty(size=3, subtype="TRANSLATION", description="Point in that frame")


N_TERMS = len(TERM_NAMES)  # the objective terms of solver.formats.objective_terms.TERM_NAMES, in that order
METHOD_ITEMS = [(name, e.label, e.description) for name, e in METHODS.items()]
PLANNER_ITEMS = [(name, e.label, e.description) for name, e in PLANNERS.items()]


class PHYSKEY_PG_contact_keyframe(bpy.types.PropertyGroup):
    pairs: CollectionProperty(type=PHYSKEY_PG_pair)
    tolerance: FloatProperty(default=0.1, min=1e-4, description="Pairs closer than this (m, all together) count as met")
    sustain: FloatProperty(default=0.5, min=0.0, description="Seconds the pairs must stay met")
    time_limit: FloatProperty(default=10.0, min=0.01, description="Seconds allowed before the keyframe fails")
    horizon: FloatProperty(default=0.0, min=0.0, max=MAX_KEYFRAME_HORIZON,
                           description="Seconds the planner looks ahead while this keyframe is active (0: the "
                           "solve's Planning horizon). Rising from a seat and balancing on the feet take a longer "
                           "look than a reach: the Standing style sets 0.6")
    weights: FloatVectorProperty(size=N_TERMS, min=0.0, description="Style weights of the objective terms")
    style: StringProperty(default="", description="The posture the keyframe means, set by its style button: a "
                          "Standing keyframe counts only with the character standing, a Seated one with its "
                          "weight on a seat, a Lying one lying")
    use_facing: BoolProperty(default=False)
    facing: FloatVectorProperty(size=2, description="Point on the floor the torso should face")
    # Which keyframe of a running solve this one is (`job.SolveJob.solve_index`), whatever the list does
    # since: set when a solve starts or the keyframe is sent to one, never copied by Duplicate (0: none yet)
    uid: IntProperty(default=0, options={"HIDDEN"})


class PHYSKEY_PG_pose_key(bpy.types.PropertyGroup):
    """Settings of one keyed frame of the character's action, read as a pose keyframe."""
    frame: bpy.props.IntProperty(default=1)
    weight: FloatProperty(default=1.0, min=0.0)
    free: BoolProperty(default=False, description="Let the optimizer choose when this pose is reached")
    range_min: FloatProperty(default=0.2, min=0.001, description="Earliest arrival after the previous key (s)")
    range_max: FloatProperty(default=1.0, min=0.001, description="Latest arrival after the previous key (s)")
    problem: StringProperty(default="", description="What of this pose the character cannot take as keyed (a joint "
                                                    "out of its range, bones off the fitted pose), found before "
                                                    "solving")
    refused: BoolProperty(default=False, description="The solve is refused until this pose is changed (else the "
                          "problem is what the solve does instead: a joint clamped, the nearest pose taken)")
    marked: BoolProperty(default=False, description="Make Physical must hit the motion's pose at this frame (on a "
                         "motion keyed on every frame, such as a capture, only marked frames are pose keyframes)")


def _redraw_viewports(self, context):
    """A ghost or a hit changed: the 3D viewports draw again."""
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


class PHYSKEY_PG_solution(bpy.types.PropertyGroup):
    """One alternative from a solve (a seed, or a curriculum stage of one)."""
    seed: bpy.props.IntProperty()
    stage: bpy.props.IntProperty(default=-1, description="Curriculum stage of a partial solution; -1 when final")
    variant: StringProperty(default="", description="Which version of the seed's solution: '' the solution "
                            "itself, 'physical' an assisted solution tracked with no assist, 'lineage_N' another "
                            "lineage of the seed's particles")
    success: BoolProperty()
    cost: FloatProperty()
    duration: FloatProperty(unit="TIME_ABSOLUTE")
    assist: FloatProperty(description="Mean β² of the assist forces")
    result_path: StringProperty(subtype="FILE_PATH", description="The solution's result.npz (model.xml is beside)")
    # Its solve's context (`solve_context.py`): read by Keep and the preview, never from the scene.
    method: StringProperty(default="", description="The method that solved it")
    solve: StringProperty(default="", description="Which solve found it: its method and when it started")
    start_frame: bpy.props.IntProperty(default=1, description="The frame its motion starts at (its first pose key "
                                       "for assisted keyframes, Solve from Here's frame)")
    splice_action: bpy.props.PointerProperty(
        type=bpy.types.Action, description="Solved from a frame of this kept action: Keep puts its keys "
                                           "before that frame in front of the new motion")
    splice_rig_action: bpy.props.PointerProperty(
        type=bpy.types.Action, description="The same for the animator's own rig")
    splice_skipped: bpy.props.IntProperty(
        default=0, description="Contact keyframes its Solve from Here did not solve again (reached before)")
    reached_json: StringProperty(default="[]")
    keys_reached: bpy.props.IntProperty(default=0, description="How many of the contact keyframes it reached")
    keys_total: bpy.props.IntProperty(default=0, description="How many contact keyframes the task has")
    unstable: BoolProperty(default=False, description="The simulation blew up: it can be previewed up to then, "
                                                       "never kept")
    unstable_time: FloatProperty(default=0.0, unit="TIME_ABSOLUTE", description="When the simulation blew up (s)")
    has_quality: BoolProperty(default=False, description="The solver measured the motion's quality")
    penetration: FloatProperty(unit="LENGTH", description="Deepest penetration into anything (m)")
    penetration_bodies: StringProperty(default="", description="The body that penetrated deepest and what it went "
                                       "into (the solver's names, a JSON list)")
    penetration_time: FloatProperty(default=-1.0, unit="TIME_ABSOLUTE",
                                    description="When the deepest penetration happened (s into the motion; -1: none)")
    foot_sliding: FloatProperty(unit="LENGTH", description="How far the feet slide while planted (m)")
    jerk: FloatProperty(description="RMS joint jerk at 30 fps (rad/s³): how jittery the motion is")
    object_penetration: FloatProperty(default=-1.0, unit="LENGTH", description="Deepest overlap of a free object "
                                      "(a box) with anything (m; -1: the scene has none)")
    object_loose: FloatProperty(default=-1.0, unit="TIME_ABSOLUTE", description="Seconds a free object moves "
                                "touching nothing: thrown, dropped, or carried by no hand (-1: the scene has none)")
    words: StringProperty(default="", description="What an animator would not accept in the solution, in words "
                          "(ends crouched, feet slide, falls), from the solver")
    fidelity_json: StringProperty(default="", description="Make Physical: how far the motion is off the animation it "
                                  "follows over the whole clip, its feet's sliding against the animation's own, "
                                  "floating, and why it is not within the tolerances (the solver's JSON)")
    grasps_json: StringProperty(default="[]", description="Sticky hands: per hand and object, how long it held and "
                                "the most force the weld carried")
    fall: FloatProperty(default=-1.0, unit="TIME_ABSOLUTE",
                        description="Seconds fallen where no keyframe asks for lying (-1: not judged)")
    stumbled: BoolProperty(default=False, description="It caught itself on the floor with a knee, a hand or the "
                           "pelvis where it should stay up (its words say when and with what)")
    ghost: BoolProperty(default=False, update=_redraw_viewports,
                        description="Show this solution as a ghost in the viewport, to compare it with others")
    ghost_color: FloatVectorProperty(size=4, subtype="COLOR", min=0.0, max=1.0, default=(1.0, 0.55, 0.1, 1.0),
                                     update=_redraw_viewports, description="The ghost's colour")


HIT_KINDS = [("push", "Push", "An impulse on a bone at a point: the character is shoved"),
             ("ball", "Ball", "A real ball thrown at a point on a bone: it flies, strikes and bounces off")]


class PHYSKEY_PG_hit(bpy.types.PropertyGroup):
    """A push or a thrown ball that strikes the character while it solves (a hit reaction); the
    planner does not know it in advance. Fields as in the task file (`solver/formats/perturbations.py`)."""
    kind: EnumProperty(name="Kind", items=HIT_KINDS, default="push", update=_redraw_viewports)
    frame: bpy.props.IntProperty(name="Frame", default=1, update=_redraw_viewports,
                                 description="The frame it strikes at (the motion starts at the scene's start frame)")
    body: StringProperty(name="Bone", default="torso", update=_redraw_viewports,
                         description="The character's bone it strikes")
    point: FloatVectorProperty(name="Point", size=3, subtype="TRANSLATION", update=_redraw_viewports,
                               description="Where on the bone, in the bone's frame (m)")
    direction: FloatVectorProperty(name="Direction", size=3, default=(-1.0, 0.0, 0.0), subtype="DIRECTION",
                                   update=_redraw_viewports,
                                   description="Which way it pushes (or the ball flies), in world axes")
    magnitude: FloatProperty(name="Impulse", default=8.0, min=0.0, soft_max=100.0, update=_redraw_viewports,
                             description="A push's impulse (N·s): the character's momentum changes by this much")
    speed: FloatProperty(name="Speed", default=8.0, min=0.01, soft_max=30.0, unit="VELOCITY",
                         update=_redraw_viewports, description="The ball's speed (m/s)")
    mass: FloatProperty(name="Mass", default=5.0, min=0.001, soft_max=50.0, unit="MASS",
                        description="The ball's mass (kg)")
    radius: FloatProperty(name="Radius", default=0.11, min=0.005, max=1.0, unit="LENGTH", update=_redraw_viewports,
                          description="The ball's radius (m)")
    distance: FloatProperty(name="Distance", default=2.0, min=0.01, max=50.0, unit="LENGTH",
                            update=_redraw_viewports, description="How far away the ball is thrown from (m)")
    friction: FloatProperty(name="Friction", default=0.7, min=0.0, soft_max=2.0, description="The ball's friction")


def _preview_selected(self, context):
    from .solutions import preview
    preview(context, self.active_solution)


class PHYSKEY_PG_scene(bpy.types.PropertyGroup):
    preset: StringProperty(default="", description="The preset this scene was built from")
    hits: CollectionProperty(type=PHYSKEY_PG_hit, description="Pushes and thrown balls that strike the character "
                             "while it solves (contact keyframes)")
    active_hit: bpy.props.IntProperty(default=0)
    method: EnumProperty(items=METHOD_ITEMS, default="contact")
    settings_json: StringProperty(default="{}", description="Further method settings as JSON, by name "
                                                            "(docs/SETTINGS.md); a setting also drawn as a field is "
                                                            "taken from here")
    # The methods' settings on the panel (taskio.FIELDS): default, bounds and description are the
    # solver's (solver.formats.settings).
    # Contact keyframes (PartwiseMPC)
    mpc_rollouts: setting_property(ContactSettings, "rollouts")
    mpc_effort: EnumProperty(items=[("adaptive", "Adaptive", "Plan each control step until the cost stops improving"),
                                    ("fixed", "Fixed", "A fixed number of planning iterations per control step")],
                             default="adaptive", description="How much planning each control step gets")
    mpc_budget: setting_property(ContactSettings, "budget", default=1)
    mpc_planner: setting_property(ContactSettings, "planner", items=PLANNER_ITEMS)
    mpc_particles: setting_property(ContactSettings, "particles")
    mpc_grasp: setting_property(ContactSettings, "grasp", items=[
        ("friction", "Friction", "Hands hold free objects by friction only: honest physics"),
        ("sticky", "Sticky hands", "A hand keyed to a free object it touches is welded to it until no keyframe "
                                   "pairs them (the force it carries is reported)")])
    # Assisted keyframes (CMA-ES)
    assist_population: setting_property(AssistSettings, "population")
    assist_lambda_beta: setting_property(AssistSettings, "lambda_beta")
    assist_samples: setting_property(AssistSettings, "samples")
    assist_max_wall_s: setting_property(AssistSettings, "max_wall_s")
    assist_curriculum: setting_property(AssistSettings, "curriculum")
    assist_physical: setting_property(AssistSettings, "physical")
    contact_keyframes: CollectionProperty(type=PHYSKEY_PG_contact_keyframe)
    active_contact_keyframe: bpy.props.IntProperty(default=0)
    pose_keys: CollectionProperty(type=PHYSKEY_PG_pose_key)
    active_pose_key: bpy.props.IntProperty(default=0)
    num_seeds: bpy.props.IntProperty(default=3, min=1, max=64, description="Alternative solutions to compute")
    quality: EnumProperty(name="Quality", items=[("final", "Final", "Every method's defaults: the clip to keep"),
                                 ("draft", "Draft", "A plausible first motion quickly, for a look: fewer samples, no "
                                                    "retries or back-ups, no physical versions (set over the fields "
                                                    "below; More still wins)")],
                          default="final", description="How much work a solve does")
    solutions: CollectionProperty(type=PHYSKEY_PG_solution)
    active_solution: bpy.props.IntProperty(default=-1, update=_preview_selected)
    progress: FloatProperty(default=0.0, min=0.0, max=1.0, subtype="FACTOR")
    status: StringProperty(default="")
    running: BoolProperty(default=False)


classes = (PHYSKEY_PG_joint, PHYSKEY_PG_geom, PHYSKEY_PG_site, PHYSKEY_PG_bone, PHYSKEY_PG_slot, PHYSKEY_PG_exclude,
           PHYSKEY_PG_object,
           PHYSKEY_PG_pair, PHYSKEY_PG_contact_keyframe, PHYSKEY_PG_pose_key, PHYSKEY_PG_solution, PHYSKEY_PG_hit,
           PHYSKEY_PG_scene)


def register_properties():
    bpy.types.Bone.physkey = PointerProperty(type=PHYSKEY_PG_bone)
    bpy.types.Object.physkey = PointerProperty(type=PHYSKEY_PG_object)
    bpy.types.Scene.physkey = PointerProperty(type=PHYSKEY_PG_scene)


def unregister_properties():
    del bpy.types.Bone.physkey
    del bpy.types.Object.physkey
    del bpy.types.Scene.physkey
