"""Operators for the animator's own rig: find its humanoid bones, and make the physics humanoid with
its proportions (linked to it, so Keep bakes onto it as well)."""
from __future__ import annotations

import bpy

from .humanoid_map import MappingError
from .i18n import iface_, rpt_


def _own_rig(context):
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" and not obj.physkey.is_character else None


class PHYSKEY_OT_map_humanoid(bpy.types.Operator):
    """Find which bones are the pelvis, spine, chest, head, legs and arms; the slots you picked are kept"""
    bl_idname = "physkey.map_humanoid"
    bl_label = "Find Humanoid Bones"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if _own_rig(context) is None:
            cls.poll_message_set("Select your character's armature (not a PhysKey physics character)")
            return False
        return True

    def execute(self, context):
        from .humanoid_map import map_humanoid
        from .retarget import bone_infos, store_mapping, stored_mapping
        rig = _own_rig(context)
        try:  # the slots the animator picked are kept; the rest is found around them
            mapping = map_humanoid(bone_infos(rig), given=stored_mapping(rig))
        except MappingError as e:
            store_mapping(rig, e.partial)  # what was found, every slot listed: the rest picked by hand
            self.report({"ERROR"}, str(e))
            return {"FINISHED"}  # the slots it stored are kept (and undoable), not rolled back
        store_mapping(rig, mapping)
        self.report({"INFO"}, rpt_("Mapped {} bones of '{}'").format(len(mapping), rig.name))
        return {"FINISHED"}


class PHYSKEY_OT_character_from_rig(bpy.types.Operator):
    """Make PhysKey's physics humanoid with this rig's proportions; Keep bakes solved motions onto the rig"""
    bl_idname = "physkey.character_from_rig"
    bl_label = "Make Physics Character"
    bl_options = {"REGISTER", "UNDO"}

    mass: bpy.props.FloatProperty(name="Mass (kg)", default=0.0, min=0.0,
                                  description="The character's mass; 0: from its height, as the default humanoid's")

    @classmethod
    def poll(cls, context):
        return PHYSKEY_OT_map_humanoid.poll(context)

    def execute(self, context):
        from ..solver.core.errors import InvalidInput
        from .retarget import make_physics_character
        from .shapes import add_bone_shapes, character_material
        rig = _own_rig(context)
        if context.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        try:
            physics, mapping, note = make_physics_character(context, rig, mass=self.mass or None)
        except (MappingError, InvalidInput) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        add_bone_shapes(context, physics, character_material())
        if note:  # its units converted: said where the animator sees it (and kept in the Your Rig panel)
            self.report({"WARNING"}, note)
        from .preferences import start_with_default_method
        start_with_default_method(context.scene)
        for o in context.selected_objects:
            o.select_set(False)
        physics.select_set(True)
        context.view_layer.objects.active = physics
        ankle = max((j.strength for b in physics.data.bones for j in b.physkey.joints if j.name.startswith("ankle")),
                    default=0.0)
        self.report({"INFO"}, rpt_("Made '{}' from {} bones of '{}', its ankles a person's ({:.0f} N·m); solve with "
                                   "it, Keep bakes onto both").format(physics.name, len(mapping), rig.name, ankle))
        return {"FINISHED"}


class PHYSKEY_UL_humanoid_map(bpy.types.UIList):
    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index):
        from .humanoid_map import slot_label
        row = layout.row(align=True)
        row.label(text=slot_label(item.name), translate=False)  # translated by slot_label
        row.prop_search(item, "bone", data.id_data.data, "bones", text="")  # the rig's armature


class PHYSKEY_PT_own_rig(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "PhysKey"
    bl_idname = "PHYSKEY_PT_own_rig"
    bl_label = "Your Rig"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        obj = context.active_object
        if obj is not None and obj.physkey.is_character and obj.physkey.animator_rig is not None:
            layout.label(text=iface_("Keep bakes onto '{}' "
                                     "too").format(obj.physkey.animator_rig.name), icon="LINKED", translate=False)
            return
        if _own_rig(context) is None:
            layout.label(text="Select your character's armature", icon="INFO")
            return
        if obj.physkey.units_note:
            layout.label(text=obj.physkey.units_note, icon="INFO", translate=False)
        layout.operator("physkey.map_humanoid", icon="VIEWZOOM")
        if len(obj.physkey.humanoid_map):
            layout.template_list("PHYSKEY_UL_humanoid_map", "", obj.physkey, "humanoid_map", obj.physkey,
                                 "active_humanoid_slot", rows=6)
        layout.operator("physkey.character_from_rig", icon="ARMATURE_DATA")


classes = (PHYSKEY_OT_map_humanoid, PHYSKEY_OT_character_from_rig, PHYSKEY_UL_humanoid_map, PHYSKEY_PT_own_rig)
