"""Everything that touches `bpy`. It reaches the solver only through task/result files and a
subprocess (`python -m solver run … --jsonl`), never by running optimization in Blender's process;
it imports the solver's pure schema and MJCF modules so there is one format.
"""


def _classes():
    from . import contact_ops, hit_ops, operators, panels, preferences, properties, rig_ops, solve_ops
    return (properties.classes + operators.classes + solve_ops.classes + contact_ops.classes + hit_ops.classes
            + panels.classes + rig_ops.classes + preferences.classes)


def _stop_solves(*_args):
    """Kill running solver processes (on file load, add-on disable and exit): nothing is left
    running behind the animator's back; solutions already on disk stay there."""
    from .ghosts import forget
    from .session import close_all_jobs
    close_all_jobs()
    forget()  # the next file's solutions are other files


def _after_load(*_args):
    """A file saved during a solve says it is still solving; no solve survives a load, so say where
    its solutions are instead (on disk, next to the file: Import Solutions brings them back). Contact
    keyframes saved before a later objective term keep their weights (`file_upgrade`), and the status says so."""
    import bpy

    from .file_upgrade import upgrade_contact_weights
    from .i18n import rpt_
    upgraded = upgrade_contact_weights(bpy.data.scenes)
    if upgraded:
        for scene in bpy.data.scenes:
            scene.physkey.status = rpt_("contact keyframes saved by an earlier PhysKey ({}): their weights kept, "
                                        "the newer terms at their defaults").format(upgraded)
    for scene in bpy.data.scenes:
        if scene.physkey.running:
            scene.physkey.running = False
            scene.physkey.status = rpt_("the file was saved during a solve: Import… its folder from //physkey")


def register():
    import atexit

    import bpy

    from . import i18n
    from .draw import register as register_draw
    from .ghosts import register as register_ghosts
    from .properties import register_properties
    i18n.register(__name__)
    for cls in _classes():
        bpy.utils.register_class(cls)
    register_properties()
    register_draw()
    register_ghosts()
    from .operators import menu_export, menu_import
    bpy.types.TOPBAR_MT_file_import.append(menu_import)  # File ▸ Import / Export, as importers do
    bpy.types.TOPBAR_MT_file_export.append(menu_export)
    bpy.app.handlers.persistent(_stop_solves)  # survive file loads (it is what reacts to them)
    if _stop_solves not in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.append(_stop_solves)
    bpy.app.handlers.persistent(_after_load)
    if _after_load not in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.append(_after_load)
    atexit.register(_stop_solves)


def unregister():
    import atexit

    import bpy

    from .draw import unregister as unregister_draw
    from .ghosts import unregister as unregister_ghosts
    from .operators import menu_export, menu_import
    from .properties import unregister_properties
    _stop_solves()
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    bpy.types.TOPBAR_MT_file_export.remove(menu_export)
    unregister_draw()
    unregister_ghosts()
    atexit.unregister(_stop_solves)
    if _stop_solves in bpy.app.handlers.load_pre:
        bpy.app.handlers.load_pre.remove(_stop_solves)
    if _after_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_after_load)
    unregister_properties()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
    from . import i18n
    i18n.unregister(__name__)
