"""Editing the contact keyframe list: add, remove, duplicate, move, reverse; style presets; and
*Add Pair*: the active bone's point nearest the 3D cursor ↔ the 3D cursor on the selected object
(its environment body) or on the world."""
from __future__ import annotations

import bpy
import numpy as np
from bpy.props import EnumProperty, IntProperty
from mathutils import Vector

from ..solver.formats.objective_terms import STYLE_LOOK_AHEAD, STYLES, style_weights
from .i18n import rpt_
from .session import active_character, job_for
from .taskio import contact_keyframe_dict

STYLE_ITEMS = [(name, name.capitalize(), description) for name, (description, _weights) in STYLES.items()]


def _list(context):
    return context.scene.physkey.contact_keyframes


def _apply_style(item, style: str) -> None:
    item.weights = style_weights(style)
    item.style = style
    item.horizon = STYLE_LOOK_AHEAD.get(style, 0.0)


def _copy(src, dst) -> None:
    for attr in ("name", "tolerance", "sustain", "time_limit", "horizon", "weights", "style", "use_facing", "facing"):
        setattr(dst, attr, getattr(src, attr))
    dst.pairs.clear()
    for p in src.pairs:
        q = dst.pairs.add()
        q.body1, q.pos1, q.body2, q.pos2 = p.body1, p.pos1, p.body2, p.pos2


class PHYSKEY_OT_contact_keyframe_edit(bpy.types.Operator):
    """Add, remove, duplicate, move or reverse contact keyframes"""
    bl_idname = "physkey.contact_keyframe_edit"
    bl_label = "Edit Contact Keyframes"
    bl_options = {"REGISTER", "UNDO"}

    action: EnumProperty(items=[("ADD", "Add", ""), ("REMOVE", "Remove", ""), ("DUPLICATE", "Duplicate", ""),
                                ("UP", "Move Up", ""), ("DOWN", "Move Down", ""), ("REVERSE", "Reverse", "")])

    def execute(self, context):
        items, props = _list(context), context.scene.physkey
        i = props.active_contact_keyframe
        if self.action == "ADD":
            item = items.add()
            item.name = f"keyframe {len(items)}"
            item.weights = style_weights("seated")  # MuJoCo MPC's defaults; no style judged until one is chosen
            item.style = ""
            props.active_contact_keyframe = len(items) - 1
            return {"FINISHED"}
        if not (0 <= i < len(items)):
            self.report({"ERROR"}, "no contact keyframe selected")
            return {"CANCELLED"}
        if self.action == "REMOVE":
            items.remove(i)
            props.active_contact_keyframe = min(i, len(items) - 1)
        elif self.action == "DUPLICATE":
            _copy(items[i], items.add())
            items.move(len(items) - 1, i + 1)
            props.active_contact_keyframe = i + 1
        elif self.action in ("UP", "DOWN"):
            j = i - 1 if self.action == "UP" else i + 1
            if 0 <= j < len(items):
                items.move(i, j)
                props.active_contact_keyframe = j
        elif self.action == "REVERSE":  # e.g. get-up = lie-down reversed
            n = len(items)
            for k in range(n - 1):
                items.move(n - 1, k)
            props.active_contact_keyframe = n - 1 - i
        return {"FINISHED"}


class PHYSKEY_OT_contact_style(bpy.types.Operator):
    """Set the selected contact keyframe's style: its weights, and the posture it must be in to count"""
    bl_idname = "physkey.contact_style"
    bl_label = "Style"
    bl_options = {"REGISTER", "UNDO"}

    style: EnumProperty(items=STYLE_ITEMS)

    @classmethod
    def poll(cls, context):
        props = context.scene.physkey
        if not 0 <= props.active_contact_keyframe < len(props.contact_keyframes):
            cls.poll_message_set("no contact keyframe selected: add one first")
            return False
        return True

    def execute(self, context):
        items, i = _list(context), context.scene.physkey.active_contact_keyframe
        if not (0 <= i < len(items)):
            self.report({"ERROR"}, "no contact keyframe selected")
            return {"CANCELLED"}
        _apply_style(items[i], self.style)
        return {"FINISHED"}


def _nearest_on_segment(a, b, c):
    ab = b - a
    t = float(np.clip(np.dot(c - a, ab) / max(np.dot(ab, ab), 1e-12), 0.0, 1.0))
    return a + t * ab


def free_object_body(obj):
    """The environment body a free (dynamic) collider object belongs to — its body Empty for a
    preset's piece, else the object itself — or None when `obj` is not a free object."""
    if obj is None or obj.type == "ARMATURE":
        return None
    body = obj.parent if obj.parent is not None and obj.parent.physkey.is_body else obj
    members = [c for c in body.children if c.physkey.collider] if body is not obj else [obj]
    return body if members and any(m.physkey.collider and m.physkey.dynamic for m in members) else None


def _bottom_centre(body) -> np.ndarray:
    """The centre of the lowest face of a body's colliders' world bounding box, in the body's frame."""
    members = [c for c in body.children if c.physkey.collider] or [body]
    corners = np.array([tuple(m.matrix_world @ Vector(c)) for m in members for c in m.bound_box])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    bottom = Vector(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]))
    return np.array(body.matrix_world.normalized().inverted() @ bottom)


def _target(context, exclude) -> tuple:
    """(object, body name) of the first selected object not in `exclude` (its body Empty when it is a
    preset's piece), or (None, 'world')."""
    others = [o for o in context.selected_objects if o not in exclude and o.type != "ARMATURE"]
    if not others:
        return None, "world"
    target = others[0].parent if others[0].parent is not None and others[0].parent.physkey.is_body else others[0]
    return target, target.name


class PHYSKEY_OT_add_pair(bpy.types.Operator):
    """Pair the active bone's point nearest the 3D cursor with the 3D cursor on the selected object (or the world);
    with a free object active (a box), pair its bottom with the 3D cursor: put it there"""
    bl_idname = "physkey.add_pair"
    bl_label = "Add Pair"
    bl_options = {"REGISTER", "UNDO"}

    keyframe: IntProperty(default=-1, description="Contact keyframe (-1: the selected one)")

    def execute(self, context):
        props, items = context.scene.physkey, _list(context)
        i = self.keyframe if self.keyframe >= 0 else props.active_contact_keyframe
        if not (0 <= i < len(items)):
            self.report({"ERROR"}, "no contact keyframe selected: add one first")
            return {"CANCELLED"}
        box = free_object_body(context.active_object)
        if box is not None:  # an object to put somewhere: its bottom ↔ the cursor
            members = set(box.children) | {box}
            target, body2 = _target(context, members)
            if target is box:
                target, body2 = None, "world"
            cursor = np.array(context.scene.cursor.location)
            local2 = cursor if target is None else np.array(target.matrix_world.normalized().inverted()
                                                            @ Vector(cursor))
            pair = items[i].pairs.add()
            pair.body1, pair.pos1, pair.body2, pair.pos2 = box.name, _bottom_centre(box), body2, local2
            self.report({"INFO"}, rpt_("Pair: {} ↔ {}").format(box.name, body2))
            return {"FINISHED"}
        arm = active_character(context)
        own = context.active_object if arm is not None and arm.physkey.animator_rig == context.active_object \
            else None  # the animator's own rig: its bone, translated onto the physics body
        source = own or arm
        bone = source.data.bones.active if source is not None else None
        if bone is None:
            self.report({"ERROR"}, "no active bone: select a bone of the character")
            return {"CANCELLED"}
        from .taskio import checked_character
        try:  # a pair on an armature that is no physics character, or is stale, would be refused only at Solve
            checked_character(arm)
        except ValueError as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        cursor = np.array(context.scene.cursor.location)
        pb = source.pose.bones[bone.name]
        world = source.matrix_world @ pb.matrix
        head = np.array(world.to_translation())
        tail = np.array(world @ Vector((0.0, bone.length, 0.0)))
        point = _nearest_on_segment(head, tail, cursor)
        if own is not None:
            from .retarget import to_body_frame
            try:
                body1, local1 = to_body_frame(own, arm, bone.name, point)
            except ValueError as e:
                self.report({"ERROR"}, str(e))
                return {"CANCELLED"}
        else:
            body1 = bone.name
            local1 = np.array(world.normalized().inverted() @ Vector(point))  # world units, bone frame
        target, body2 = _target(context, (arm, own))
        local2 = cursor if target is None else np.array(target.matrix_world.normalized().inverted() @ Vector(cursor))
        pair = items[i].pairs.add()
        pair.body1, pair.pos1, pair.body2, pair.pos2 = body1, local1, body2, local2
        self.report({"INFO"}, rpt_("Pair: {} ↔ {}").format(bone.name, body2) if body1 == bone.name else
                    rpt_("Pair: {} (the physics {}) ↔ {}").format(bone.name, body1, body2))
        return {"FINISHED"}


class PHYSKEY_OT_send_keyframe(bpy.types.Operator):
    """Send the selected contact keyframe to the contact solve running in this scene: one the solve has (wherever
    the list has moved it) is replaced for the seeds that have not started it yet; a new one, or a copy made
    since the solve started, is added after the others"""
    bl_idname = "physkey.send_keyframe"
    bl_label = "Send to Running Solve"

    @classmethod
    def poll(cls, context):
        if job_for(context.scene) is None or context.scene.physkey.method != "contact":
            cls.poll_message_set("no contact solve is running in this scene")
            return False
        return True

    def execute(self, context):
        props = context.scene.physkey
        job = job_for(context.scene)
        if job is None or props.method != "contact":
            self.report({"ERROR"}, "no contact solve is running in this scene")
            return {"CANCELLED"}
        i = props.active_contact_keyframe
        if not (0 <= i < len(props.contact_keyframes)) or not len(props.contact_keyframes[i].pairs):
            self.report({"ERROR"}, "select a contact keyframe with at least one pair")
            return {"CANCELLED"}
        item = props.contact_keyframes[i]
        index = job.solve_index(item, i)
        if index is not None:
            job.edit_keyframe(index, contact_keyframe_dict(item))
            self.report({"INFO"}, rpt_("Sent the edited '{}' to the running solve: the seeds that have not started "
                                       "it take it").format(item.name))
        else:
            job.send_new(props.contact_keyframes, item, contact_keyframe_dict(item))
            self.report({"INFO"}, rpt_("Sent '{}' to the running solve").format(item.name))
        return {"FINISHED"}


classes = (PHYSKEY_OT_contact_keyframe_edit, PHYSKEY_OT_contact_style, PHYSKEY_OT_add_pair, PHYSKEY_OT_send_keyframe)
