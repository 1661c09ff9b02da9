"""The PhysKey tab in the 3D viewport's sidebar. Panels only draw; operators hold the logic."""
from __future__ import annotations

import json
import math

import bpy

from .i18n import iface_, n_
from .session import active_character, job_for


def _solve_running(context) -> bool:
    """A solve runs in this scene while its job does; `physkey.running` is saved with the file and
    would still say so in a file saved during a solve, leaving only a Cancel that has nothing to stop."""
    return job_for(context.scene) is not None


_SIZE_LABELS = {"capsule": (n_("r"), n_("½ len")), "cylinder": (n_("r"), n_("½ len")), "sphere": (n_("r"),),
                "box": (n_("½ x"), n_("½ y"), n_("½ z")),
                "ellipsoid": (n_("½ x"), n_("½ y"), n_("½ z"))}  # what each geom type's size numbers mean (MuJoCo's)


class _Sidebar:
    """Where every PhysKey panel lives: the PhysKey tab of the 3D viewport's sidebar."""
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "PhysKey"


class PHYSKEY_PT_character(_Sidebar, bpy.types.Panel):
    bl_idname = "PHYSKEY_PT_character"
    bl_label = "Character"
    def draw(self, context):
        layout = self.layout
        row = layout.row(align=True)
        row.operator("physkey.add_character", icon="ARMATURE_DATA")
        # A menu of the presets: the operator has no invoke, so a plain button would always load the first.
        row.operator_menu_enum("physkey.load_preset", "preset", text="Load Scene Preset", icon="SCENE_DATA")
        obj = context.active_object
        if obj is None or obj.type != "ARMATURE":
            layout.label(text="Select an armature to see its physics", icon="INFO")
            return
        layout.operator("physkey.autofill_rig", icon="MODIFIER")
        bone = obj.data.bones.active
        if bone is None:
            layout.label(text="Select a bone", icon="INFO")
        else:
            box = layout.box()
            box.label(text=bone.name, icon="BONE_DATA", translate=False)
            for j in bone.physkey.joints:
                row = box.row(align=True)
                row.label(text=j.name, translate=False)
                row.prop(j, "range_min", text="")
                row.prop(j, "range_max", text="")
                row.prop(j, "strength", text="N·m")
            for g in bone.physkey.geoms:
                row = box.row(align=True)
                row.prop(g, "type", text="")
                for index, label in enumerate(_SIZE_LABELS.get(g.type, ())):
                    row.prop(g, "size", index=index, text=label)
                row.prop(g, "use_mass", text="", icon="MOD_PHYSICS")
                row.prop(g, "mass" if g.use_mass else "density", text="kg" if g.use_mass else "kg/m³")
        layout.operator("physkey.export_mjcf", icon="EXPORT")


class PHYSKEY_PT_roles(_Sidebar, bpy.types.Panel):
    """Which bone of a physics character plays which part: what its objective terms and figures read."""
    bl_idname = "PHYSKEY_PT_roles"
    bl_label = "Roles"
    bl_parent_id = "PHYSKEY_PT_character"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE" and obj.physkey.is_character

    def draw(self, context):
        obj = context.active_object
        if not obj.physkey.roles:
            self.layout.label(text="Inferred from the bone names", icon="INFO")
            return
        for item in obj.physkey.roles:
            self.layout.prop_search(item, "bone", obj.data, "bones", text=item.name, translate=False)


class PHYSKEY_PT_colliders(_Sidebar, bpy.types.Panel):
    bl_idname = "PHYSKEY_PT_colliders"
    bl_label = "Colliders"
    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        if obj is None or obj.type != "MESH":
            layout.label(text="Select a mesh to make it a collider", icon="INFO")
            return
        props = obj.physkey
        layout.prop(props, "collider", text="Collider")
        col = layout.column()
        col.enabled = props.collider
        col.prop(props, "shape", text="Shape")
        col.prop(props, "friction", text="Friction")
        col.prop(props, "dynamic", text="Free (can be pushed)")
        sub = col.row()
        sub.enabled = props.dynamic
        sub.prop(props, "mass", text="Mass (kg)")


class PHYSKEY_UL_contact_keyframes(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.prop(item, "name", text="", emboss=False)
        row.label(text=iface_("{} pair(s)").format(len(item.pairs)), translate=False)


class PHYSKEY_PT_contacts(_Sidebar, bpy.types.Panel):
    bl_idname = "PHYSKEY_PT_contacts"
    bl_label = "Contact Keyframes"
    def draw(self, context):
        layout = self.layout
        props = context.scene.physkey
        row = layout.row()
        row.template_list("PHYSKEY_UL_contact_keyframes", "", props, "contact_keyframes", props,
                          "active_contact_keyframe", rows=4)
        col = row.column(align=True)
        for action, icon in (("ADD", "ADD"), ("REMOVE", "REMOVE"), ("DUPLICATE", "DUPLICATE"), ("UP", "TRIA_UP"),
                             ("DOWN", "TRIA_DOWN"), ("REVERSE", "ARROW_LEFTRIGHT")):
            col.operator("physkey.contact_keyframe_edit", icon=icon, text="").action = action
        i = props.active_contact_keyframe
        if 0 <= i < len(props.contact_keyframes):
            item = props.contact_keyframes[i]
            col = layout.column(align=True)
            col.prop(item, "tolerance", text="Tolerance (m)")
            col.prop(item, "sustain", text="Sustain (s)")
            col.prop(item, "time_limit", text="Time Limit (s)")
            col.prop(item, "horizon", text="Look-ahead (s)")
            row = layout.row(align=True)
            for style, label in (("standing", n_("Standing")), ("seated", n_("Seated")), ("reaching", n_("Reaching")),
                                 ("lying", n_("Lying"))):
                row.operator("physkey.contact_style", text=label, depress=item.style == style).style = style
            layout.operator("physkey.add_pair", icon="CURSOR")
            if props.method == "contact" and _solve_running(context):
                layout.operator("physkey.send_keyframe", icon="EXPORT")
            from .rig_names import rig_names
            names = rig_names(context)  # a character made from the animator's rig: its bones, the physics' beside
            for p in item.pairs:
                layout.label(text=f"{_named(p.body1, names)} ↔ {_named(p.body2, names)}", icon="LINKED",
                             translate=False)


def _named(body: str, names: dict[str, str]) -> str:
    """A pair's body as the animator's rig calls it, the physics body's own name beside it ("foot_ik.R
    (foot_right)"); as it is where the rig has no other name for it."""
    bone = names.get(body)
    return body if bone is None or bone == body else f"{bone} ({body})"


class PHYSKEY_UL_hits(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.label(text=iface_("frame {}").format(item.frame), icon="FORCE_FORCE" if item.kind == "push" else
                  "SPHERE", translate=False)
        row.label(text=item.body, translate=False)
        if item.kind == "push":
            row.label(text=iface_("{:g} N·s").format(round(item.magnitude, 2)), translate=False)
        else:
            row.label(text=iface_("{:g} kg · {:g} m/s").format(round(item.mass, 2), round(item.speed, 2)),
                      translate=False)


class PHYSKEY_PT_hits(_Sidebar, bpy.types.Panel):
    """Pushes and thrown balls that strike the character while contact keyframes solve: the planner
    does not know them in advance, so the motion is a reaction (drawn as arrows in the viewport)."""
    bl_idname = "PHYSKEY_PT_hits"
    bl_label = "Hits"
    bl_parent_id = "PHYSKEY_PT_contacts"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_header(self, context):
        n = len(context.scene.physkey.hits)
        if n:
            self.layout.label(text=str(n), translate=False)

    def draw(self, context):
        layout = self.layout
        props = context.scene.physkey
        row = layout.row()
        row.template_list("PHYSKEY_UL_hits", "", props, "hits", props, "active_hit", rows=3)
        col = row.column(align=True)
        for action, icon in (("ADD_PUSH", "FORCE_FORCE"), ("ADD_BALL", "SPHERE"), ("DUPLICATE", "DUPLICATE"),
                             ("REMOVE", "REMOVE")):
            col.operator("physkey.hit_edit", icon=icon, text="").action = action
        i = props.active_hit
        if not (0 <= i < len(props.hits)):
            return
        hit = props.hits[i]
        col = layout.column()
        col.prop(hit, "kind", expand=True)
        col.prop(hit, "frame")
        arm = active_character(context)
        if arm is not None:
            col.prop_search(hit, "body", arm.data, "bones", text="Bone")
        else:
            col.prop(hit, "body", text="Bone")
        col.prop(hit, "point", text="Point on Bone")
        row = col.row(align=True)
        row.prop(hit, "direction", text="")
        col.operator("physkey.hit_from_view", icon="VIEW_CAMERA")
        if hit.kind == "push":
            col.prop(hit, "magnitude", text="Impulse (N·s)")
        else:
            sub = col.column(align=True)
            sub.prop(hit, "speed")
            sub.prop(hit, "mass")
            sub.prop(hit, "radius")
            sub.prop(hit, "distance")
            sub.prop(hit, "friction")


class PHYSKEY_UL_pose_keys(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        row.alert = item.refused  # a pose the solver would refuse: said before solving
        icon = "ERROR" if item.refused else "INFO" if item.problem else "MARKER_HLT" if item.marked else "KEYFRAME"
        row.label(text=iface_("frame {}").format(item.frame), icon=icon, translate=False)  # INFO: clamped, or fitted
        row.prop(item, "weight", text="w")
        if context.scene.physkey.method == "track":  # followed as keyed: no arrival range
            return
        row.prop(item, "free", text="free", toggle=True)
        if item.free:
            row.prop(item, "range_min", text="")
            row.prop(item, "range_max", text="")


class PHYSKEY_PT_pose_keys(_Sidebar, bpy.types.Panel):
    bl_idname = "PHYSKEY_PT_pose_keys"
    bl_label = "Pose Keyframes"
    def draw(self, context):
        layout = self.layout
        props = context.scene.physkey
        if props.method == "track":
            layout.label(text="Make Physical follows the animation over the frame range; keyed frames (on a "
                              "capture: marked frames) must be hit.")
            row = layout.row(align=True)
            row.operator("physkey.sync_pose_keys", icon="FILE_REFRESH")
            row.operator("physkey.mark_pose_key", icon="MARKER_HLT")
        else:
            layout.label(text="Key poses on the character (I); each keyed frame is a pose keyframe.")
            layout.operator("physkey.sync_pose_keys", icon="FILE_REFRESH")
        layout.template_list("PHYSKEY_UL_pose_keys", "", props, "pose_keys", props, "active_pose_key", rows=4)
        i = props.active_pose_key
        if 0 <= i < len(props.pose_keys) and props.pose_keys[i].problem:
            key = props.pose_keys[i]
            layout.label(text=key.problem, icon="ERROR" if key.refused else "INFO", translate=False)


class PHYSKEY_UL_solutions(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        row = layout.row(align=True)
        if item.unstable:  # blew up: say when, instead of a cost that means nothing
            row.label(text=item.name, icon="CANCEL", translate=False)
            row.label(text=iface_("unstable at {:.2f} s").format(item.unstable_time), translate=False)
            _ghost_toggle(row, item)
            return
        row.label(text=item.name, icon="CHECKMARK" if item.success else "ERROR", translate=False)
        if math.isfinite(item.cost):  # an unfinished motion (a cancelled solve) has none
            row.label(text=iface_("cost {:.3g}").format(item.cost), translate=False)
        if item.keys_total:  # Make Physical passes poses (marked frames and the animation's own between), not keys
            passed = iface_("{}/{} poses") if item.fidelity_json else iface_("{}/{} keys")
            row.label(text=passed.format(item.keys_reached, item.keys_total), translate=False)
        row.label(text=iface_("{:.2f} s").format(item.duration), translate=False)
        if item.assist:
            row.label(text=iface_("β² {:.3f}").format(item.assist), translate=False)
        if item.has_quality:
            row.label(text=iface_("{:.1f} cm").format(100 * item.penetration),
                      icon="ERROR" if item.penetration > 0.02 else "NONE", translate=False)
        if item.words:  # what the animator would not accept, in the solver's words (and the rig's bones)
            from .rig_names import in_rig_names, rig_names
            from .timeline import in_frames
            row.label(text=in_frames(in_rig_names(item.words, rig_names(context)), item.start_frame, context.scene),
                      icon="INFO", translate=False)
        _ghost_toggle(row, item)


def _ghost_toggle(row, item) -> None:
    """The solution's ghost: shown or not, in its colour (a swatch the animator can change)."""
    row.prop(item, "ghost", text="", emboss=False, icon="GHOST_ENABLED" if item.ghost else "GHOST_DISABLED")
    swatch = row.row(align=True)
    swatch.scale_x = 0.35
    swatch.prop(item, "ghost_color", text="")


def _draw_quality(layout, item, scene, names: dict[str, str]) -> None:
    """The selected solution's quality figures (the solver's `quality` in result.json); for a deep
    penetration, what went into what and at which frame, so the animator can look. Bodies are named
    by the animator's rig bones where the character was made from a rig (`names`, `rig_names`)."""
    from .rig_names import in_rig_names
    from .timeline import frame_at, in_frames
    col = layout.column(align=True)
    deep = item.penetration > 0.02
    where = [names.get(b, b) for b in json.loads(item.penetration_bodies or "[]")]
    if deep and len(where) == 2 and item.penetration_time >= 0:
        frame = frame_at(item.penetration_time, item.start_frame, scene)
        text = iface_("Penetration {:.1f} cm: {} into {} at frame {}").format(100 * item.penetration, *where, frame)
    else:
        text = iface_("Penetration {:.1f} cm").format(100 * item.penetration)
    col.label(text=text, icon="ERROR" if deep else "NONE", translate=False)
    col.label(text=iface_("Feet slide {:.1f} cm where they touch · jerk {:.3g} rad/s³").format(
        100 * item.foot_sliding, item.jerk), translate=False)
    for phrase in filter(None, item.words.split(", ")):
        col.label(text=in_frames(in_rig_names(phrase, names), item.start_frame, scene), icon="INFO", translate=False)
    if item.object_penetration >= 0:
        col.label(text=iface_("Object: penetration {:.1f} cm · loose {:.2f} s").format(
            100 * item.object_penetration, item.object_loose), icon="ERROR" if item.object_penetration > 0.02
                  or item.object_loose > 0 else "NONE", translate=False)
    for g in json.loads(item.grasps_json or "[]"):
        if g.get("max_squeeze_n") is None:  # never held (or solved before the split was reported)
            col.label(text=iface_("{} holds {} {:.1f} s, up to {:.0f} N (it weighs {:.0f} N)").format(
                names.get(g["body"], g["body"]), g["object"], g["held_s"], g["max_force_n"], g["object_weight_n"]),
                translate=False)
            continue
        beyond = g["beyond_friction_s"]
        col.label(text=iface_("{} holds {} {:.1f} s: beyond friction {:.1f} s (squeeze up to {:.0f} N, shear "
                              "{:.0f} N)").format(names.get(g["body"], g["body"]), g["object"], g["held_s"], beyond,
                                                  g["max_squeeze_n"], g["max_shear_n"]),
                  icon="ERROR" if beyond > 0 else "NONE", translate=False)
        if g.get("max_couple_nm"):  # the welds' torque beyond the hands' forces (results since it is reported)
            col.label(text=iface_("  turning it with up to {:.0f} N·m").format(
                g["max_couple_nm"]), translate=False)
    if item.fidelity_json:
        _draw_fidelity(col, json.loads(item.fidelity_json), item, scene, names)
    if item.fall > 0 or (item.fall == 0 and not item.stumbled):  # a stumble is in the words, with its frame
        col.label(text=iface_("Fallen {:.2f} s").format(item.fall) if item.fall > 0 else iface_("No fall"),
                  icon="ERROR" if item.fall > 0 else "NONE", translate=False)


def _draw_fidelity(col, fid: dict, item, scene, names: dict[str, str]) -> None:
    """Make Physical's figures over the whole clip: centimetres off the animation (on average, and the
    worst frame with its furthest body), the feet's sliding where the animation plants them against its
    own, floating, and why it is not within the tolerances — bodies by the rig's bones (`names`)."""
    from .rig_names import in_rig_names
    from .timeline import frame_at, in_frames
    worst = fid["worst"]
    frame = frame_at(worst["time_s"], item.start_frame, scene)
    col.label(text=iface_("Off the animation {:.1f} cm on average, {:.0f} cm at frame {} ({} {:.0f} cm)").format(
        fid["mean_cm"], worst["cm"], frame, names.get(worst["body"], worst["body"]), worst["body_cm"]),
        icon="ERROR" if fid.get("within") is False else "NONE", translate=False)
    slide = fid["foot_sliding_cm"]
    col.label(text=iface_("Where the animation plants them, feet slide {:.1f} cm (its own {:.1f} cm)").format(
        slide["motion"], slide["reference"]), icon="ERROR" if slide["added"] > 1.0 else "NONE", translate=False)
    if fid["floating"]["s"] > 0:
        col.label(text=iface_("Floating {:.2f} s where the animation touches ({})").format(
            fid["floating"]["s"], names.get(fid["floating"]["body"], fid["floating"]["body"])), icon="ERROR",
            translate=False)
    if fid.get("why"):
        col.label(text=in_frames(in_rig_names(fid["why"], names), item.start_frame, scene), icon="INFO",
                  translate=False)


class PHYSKEY_PT_solve(_Sidebar, bpy.types.Panel):
    bl_idname = "PHYSKEY_PT_solve"
    bl_label = "Solve"
    def draw(self, context):
        layout = self.layout
        props = context.scene.physkey
        layout.prop(props, "method", text="")
        layout.prop(props, "num_seeds", text="Alternatives")
        layout.prop(props, "quality", expand=True)
        col = layout.column(align=True)
        if props.quality == "draft":
            from ..solver.formats.settings import draft_words
            if draft_words(props.method):
                col.label(text=iface_("Draft sets {}").format(draft_words(props.method)), icon="INFO", translate=False)
        if props.method in ("contact", "track"):
            col.prop(props, "mpc_rollouts", text="Rollouts")
            col.prop(props, "mpc_effort", text="Effort")
            if props.mpc_effort == "fixed":
                col.prop(props, "mpc_budget", text="Iterations/step")
            col.prop(props, "mpc_planner", text="Planner")
            col.prop(props, "mpc_particles", text="Particles")
            if props.method == "contact":
                col.prop(props, "mpc_grasp", text="Hands")
        elif props.method == "assist":
            col.prop(props, "assist_population", text="Population")
            col.prop(props, "assist_lambda_beta", text="Assist penalty λβ")
            col.prop(props, "assist_samples", text="Samples")
            col.prop(props, "assist_max_wall_s", text="Time limit (s)")
            col.prop(props, "assist_curriculum", text="Curriculum")
            col.prop(props, "assist_physical", text="Physical Versions")
        col.prop(props, "settings_json", text="More")  # further settings as JSON (docs/SETTINGS.md)
        from .taskio import shadowed_settings
        shadowed = shadowed_settings(props)
        if shadowed:
            col.label(text=iface_("More sets {}: the field above is not used").format(", ".join(shadowed)),
                      icon="ERROR", translate=False)
        if _solve_running(context):
            row = layout.row()
            # a bar, not an editable slider: the solve moves it (the mean over seeds, never backwards)
            row.progress(factor=props.progress, type="BAR", text=props.status or iface_("running"),
                         translate=False)
            row.operator("physkey.cancel_solve", icon="CANCEL", text="")
        else:
            row = layout.row(align=True)
            row.operator("physkey.solve", icon="PLAY")
            from .continuation import kept_action
            if kept_action(active_character(context)) is not None:  # the character plays a kept solution
                row.operator("physkey.solve_from_here", icon="NEXT_KEYFRAME")
            if props.status:
                layout.label(text=props.status, translate=False)  # translated when it was set
        layout.template_list("PHYSKEY_UL_solutions", "", props, "solutions", props, "active_solution", rows=3)
        i = props.active_solution
        unstable = 0 <= i < len(props.solutions) and props.solutions[i].unstable
        if unstable:
            layout.label(text=iface_("Blew up at {:.2f} s: preview only").format(props.solutions[i].unstable_time),
                         icon="ERROR", translate=False)
        elif 0 <= i < len(props.solutions) and props.solutions[i].has_quality:
            from .rig_names import rig_names
            _draw_quality(layout, props.solutions[i], context.scene, rig_names(context))
        row = layout.row()
        keep = row.row()
        keep.enabled = not unstable  # Keep refuses it anyway (solutions.keep), with the same reason
        keep.operator("physkey.keep_solution", icon="ACTION")
        row.operator("physkey.end_preview", icon="X", text="End Preview")
        row.operator("physkey.import_result", icon="IMPORT", text="Import…")


classes = (PHYSKEY_PT_character, PHYSKEY_PT_roles, PHYSKEY_PT_colliders, PHYSKEY_UL_contact_keyframes,
           PHYSKEY_PT_contacts,
           PHYSKEY_UL_hits, PHYSKEY_PT_hits,
           PHYSKEY_UL_pose_keys, PHYSKEY_PT_pose_keys, PHYSKEY_UL_solutions, PHYSKEY_PT_solve)
