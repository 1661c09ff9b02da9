"""The frames *Make Physical* follows: the preview or frame range, within the frames the character's
animation keys, refused where nothing animates it or the range misses the animation."""
from __future__ import annotations

import numpy as np

from .i18n import rpt_


def track_range(scene, character=None, warn=None) -> tuple[int, int]:
    """The frames Make Physical follows: the preview range where it is set, else the scene's frame range — within
    the frames the `character`'s action animates (of the animator's rig where it has one), said to `warn`: a
    capture imported into a longer range would otherwise be followed held still to the range's end. A range
    that shares at most one frame with the animation is refused (ValueError): a pose held still would be
    followed and marked a success."""
    if scene.use_preview_range:
        first, last = scene.frame_preview_start, scene.frame_preview_end
    else:
        first, last = scene.frame_start, scene.frame_end
    if last <= first:
        raise ValueError(rpt_("Make Physical follows the animation over the frame range, which is a single frame "
                              "({}): set the end frame after the start").format(first))
    if character is not None and not _animated(character):  # its rest or current pose, held still, is no reference
        raise ValueError(rpt_("nothing animates '{}' (nor a rig it was made from): Make Physical follows an "
                              "animation — key it or import a capture").format(character.name))
    keyed = _animated_frames(character)
    if keyed is not None:
        lo, hi = max(first, keyed[0]), min(last, keyed[1])
        if hi <= lo:  # held still over the whole range: nothing to follow, not a success to mark
            raise ValueError(rpt_("the {} {}–{} misses the animation, keyed from frame {} to {}: set it over the "
                                  "frames to make physical").format(
                rpt_("preview range") if scene.use_preview_range else rpt_("frame range"), first, last,
                keyed[0], keyed[1]))
        if (lo, hi) != (first, last):
            if warn is not None:
                warn(rpt_("the animation is keyed from frame {} to {}: followed frames {}–{}, not the whole frame "
                          "range {}–{}").format(keyed[0], keyed[1], lo, hi, first, last))
            first, last = lo, hi
    return first, last


def _animation(character):
    """The animation data of what moves `character`: its animator's rig's where it has one, else its own."""
    return (character.physkey.animator_rig or character).animation_data


def _animated(character) -> bool:
    """Whether an action or NLA strips drive `character` (its animator's rig where it has one)."""
    ad = _animation(character)
    return ad is not None and (ad.action is not None or any(track.strips for track in ad.nla_tracks))


def _animated_frames(character) -> tuple[int, int] | None:
    """The frames (first, last) the action driving `character` (its animator's rig's where it has one) keys;
    None where no single action drives it (none, or NLA strips besides)."""
    if character is None:
        return None
    ad = _animation(character)
    if ad is None or ad.action is None or any(track.strips for track in ad.nla_tracks):
        return None
    start, end = ad.action.frame_range
    return int(np.floor(start)), int(np.ceil(end))
