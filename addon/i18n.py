"""The add-on's messages in the animator's language: Blender's own gettext, under the names Blender's
message extractor looks for (`iface_` for the interface, `rpt_` for reports and errors), and the
translation table `register()` hands to Blender.

Labels, tooltips and enum items that are plain literals Blender translates by itself. A message with
numbers or names in it is translated as its template (`rpt_("Kept as action '{}'").format(name)`), so
a translator sees one message rather than none; `n_` only marks a literal kept in a table (a label
chosen at run time) for the extractor, and Blender translates it where it is shown. The table is
`translations.py`, written by `tools/translations.py` with Blender's own i18n tools (see
docs/TRANSLATING.md). The add-on's plain-Python modules are also used without Blender (the tests):
there the messages stay as written.
"""
from __future__ import annotations

import sys

if "bpy" in sys.modules:  # inside Blender (importing bpy here would start a Blender in plain Python)
    from bpy.app.translations import pgettext_iface as iface_
    from bpy.app.translations import pgettext_n as n_
    from bpy.app.translations import pgettext_rpt as rpt_
else:
    def iface_(msgid: str, msgctxt: str | None = None) -> str:
        return msgid

    rpt_ = n_ = iface_

__all__ = ["iface_", "n_", "rpt_", "register", "unregister"]


def register(package: str) -> None:
    import bpy

    from .translations import translations_dict
    bpy.app.translations.register(package, translations_dict)


def unregister(package: str) -> None:
    import bpy
    bpy.app.translations.unregister(package)
