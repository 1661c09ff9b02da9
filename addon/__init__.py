"""Everything that touches `bpy`. It reaches the solver only through task/result files and a
subprocess (`python -m solver run … --jsonl`), never by running optimization in Blender's process;
it imports the solver's pure schema and MJCF modules so there is one format.
"""


def _classes():
    from . import operators, panels, properties
    return properties.classes + operators.classes + panels.classes


def register():
    import bpy

    from .properties import register_properties
    for cls in _classes():
        bpy.utils.register_class(cls)
    register_properties()


def unregister():
    import bpy

    from .properties import unregister_properties
    unregister_properties()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
