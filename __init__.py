"""PhysKey — a Blender extension for physics-based keyframe animation.

This file is the extension entry point. `bpy` is imported only inside `register()` so that the
package (and its pure-Python `solver`) can be imported outside Blender.
"""


def register():
    from .addon import register as register_addon
    register_addon()


def unregister():
    from .addon import unregister as unregister_addon
    unregister_addon()
