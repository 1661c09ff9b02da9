"""Operators on the scene's hits (pushes and thrown balls, `addon/hits.py`): add one at the current
frame on the selected bone, duplicate, remove, point it along the view."""
from __future__ import annotations

import math

import bpy
from bpy.props import EnumProperty
from mathutils import Vector

from .session import active_character
from .timeline import scene_fps


def _bone_for_new_hit(context) -> str:
    """The selected bone of the character when there is one, else its torso (or first bone)."""
    arm = active_character(context)
    if arm is None:
        return "torso"
    bone = context.active_pose_bone if context.mode == "POSE" and context.active_object == arm else None
    if bone is not None:
        return bone.name
    return "torso" if "torso" in arm.data.bones else (arm.data.bones[0].name if arm.data.bones else "torso")


def _view_direction(context) -> Vector | None:
    """The 3D view's looking direction made horizontal (a push away from the viewer), or None outside a view."""
    rv3d = getattr(context, "region_data", None)
    if rv3d is None or not hasattr(rv3d, "view_rotation"):
        return None
    d = rv3d.view_rotation @ Vector((0.0, 0.0, -1.0))
    d.z = 0.0
    return d.normalized() if d.length > 1e-6 else None


class PHYSKEY_OT_hit_edit(bpy.types.Operator):
    """Add a push or a thrown ball at the current frame on the selected bone, duplicate or remove the selected hit"""
    bl_idname = "physkey.hit_edit"
    bl_label = "Edit Hits"
    bl_options = {"REGISTER", "UNDO"}

    action: EnumProperty(items=[("ADD_PUSH", "Add Push", "A push on the selected bone at the current frame"),
                                ("ADD_BALL", "Add Ball", "A ball thrown at the selected bone, striking at the "
                                 "current frame"),
                                ("DUPLICATE", "Duplicate", ""), ("REMOVE", "Remove", "")])

    def execute(self, context):
        scene = context.scene
        props = scene.physkey
        hits, i = props.hits, props.active_hit
        if self.action in ("ADD_PUSH", "ADD_BALL"):
            hit = hits.add()
            hit.kind = "push" if self.action == "ADD_PUSH" else "ball"
            hit.body = _bone_for_new_hit(context)
            direction = _view_direction(context)
            if direction is not None:
                hit.direction = direction
            if hit.kind == "ball":
                hit.mass, hit.speed = 3.0, 6.0  # the hit-reaction preset's ball: a heavy medicine ball
            earliest = scene.frame_start + (hit.distance / hit.speed if hit.kind == "ball" else 0.0) * scene_fps(scene)
            hit.frame = max(scene.frame_current, math.ceil(earliest))
            hit.name = f"{hit.kind} {len(hits)}"
            props.active_hit = len(hits) - 1
            return {"FINISHED"}
        if not (0 <= i < len(hits)):
            self.report({"ERROR"}, "no hit selected")
            return {"CANCELLED"}
        if self.action == "REMOVE":
            hits.remove(i)
            props.active_hit = min(i, len(hits) - 1)
        else:
            src, dst = hits[i], hits.add()
            for key in src.bl_rna.properties.keys():
                if key != "rna_type":
                    setattr(dst, key, getattr(src, key))
            hits.move(len(hits) - 1, i + 1)
            props.active_hit = i + 1
        return {"FINISHED"}


class PHYSKEY_OT_hit_from_view(bpy.types.Operator):
    """Point the selected hit the way the 3D view looks (horizontally): it pushes away from you"""
    bl_idname = "physkey.hit_from_view"
    bl_label = "Direction from View"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        props = context.scene.physkey
        if not 0 <= props.active_hit < len(props.hits):
            cls.poll_message_set("no hit selected")
            return False
        if _view_direction(context) is None:
            cls.poll_message_set("only in a 3D view looking sideways")
            return False
        return True

    def execute(self, context):
        props = context.scene.physkey
        props.hits[props.active_hit].direction = _view_direction(context)
        return {"FINISHED"}


classes = (PHYSKEY_OT_hit_edit, PHYSKEY_OT_hit_from_view)
