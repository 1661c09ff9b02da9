"""Everything that touches `bpy`. It reaches the solver only through task/result files and a
subprocess (`python -m solver run … --jsonl`), never by running optimization in Blender's process.

The operators, panels and properties arrive with the Blender extension issues; until then the
extension registers no classes.
"""

classes: tuple = ()


def register():
    import bpy
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    import bpy
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
