"""Files saved by an earlier PhysKey, read without losing what the animator set.

Blender drops a vector property's stored values when its length changed since the file was saved: a
contact keyframe's `weights` from before a new objective term would read back all zeros (no pull on its
pairs, no posture), silently. The stored values are still in the file until the property is first read,
so on load they are taken as they are and the new terms get their defaults, and the animator is told.
"""
from __future__ import annotations

from ..solver.formats.objective_terms import DEFAULT_WEIGHTS, TERM_NAMES


def _stored(item):
    """The IDProperties Blender keeps a property group's own properties in (system ones from 5.0 on)."""
    getter = getattr(item, "bl_system_properties_get", None)
    return getter() if getter is not None else item


def upgrade_contact_weights(scenes) -> int:
    """Give every contact keyframe of `scenes` whose stored weights are fewer than the terms today its
    stored weights, in order, and the later terms' defaults; return how many were upgraded."""
    upgraded = 0
    for scene in scenes:
        for item in scene.physkey.contact_keyframes:
            stored = _stored(item)
            if stored is None or "weights" not in stored:
                continue
            old = [float(w) for w in stored["weights"]]
            if len(old) >= len(TERM_NAMES):
                continue
            del stored["weights"]
            item.weights = old + [DEFAULT_WEIGHTS[t] for t in TERM_NAMES[len(old):]]
            upgraded += 1
    return upgraded
