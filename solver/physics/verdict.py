"""A solution's quality figures in the words an animator reads them ("ends crouched", "feet slide
12 cm", "feet roll onto their edges", "falls for 0.4 s", "stumbles at 1.2 s", "carries crouched"), said only
where a figure is past what an animator would accept — the same thresholds the success of a keyframe and the
benchmarks hold solutions to. Blender shows them beside the numbers; `bench mpc` reports them per seed."""
from __future__ import annotations

from .foot_roll import ROLLED_DEG
from .posture import CARRY_PELVIS_SHARE, SETTLED_SPEED, STANDING_HEAD_SHARE, STANDING_TILT_DEG

SLIDING_WORDS_M = 0.05  # planted feet sliding more than this in a clip show
SINKING_WORDS_M = 0.02  # anything deeper than this shows (a hand sunk into an armrest)
# s: an object held at least this long is carried, and a crouched carry shows (a box knocked against the
# character as it falls touches it and nothing else for a few steps: no carry)
CARRY_WORDS_S = 0.5
# s: a seated character's foot up by the seat for at least this long shows (a foot swung past it does not)
FEET_UP_WORDS_S = 0.5

# Why a keyframe failed (`KeyframeTracker.failure`), as the animator reads it on the solution's row.
FAILURE_WORDS = {"time limit": "not reached in its time", "style": "met, but not in its style",
                 "fell": "not reached: fell", "stalled": "not reached: stopped coming closer",
                 "stumbled": "not reached: caught itself on the floor"}


def failure_words(keyframe: str, failure: str | None, detail: str | None = None) -> str | None:
    """Why the solve stopped at `keyframe` (its name): "'stand' met, but not in its style (head at 81% of its
    standing height)", "'grasp' not reached: caught itself on the floor (shin_left on the floor at 1.10 s)";
    None without a failure."""
    if failure is None:
        return None
    what = FAILURE_WORDS.get(failure, f"not reached: {failure}")
    return f"'{keyframe}' {what}" + (f" ({detail})" if detail else "")


def quality_words(quality: dict, ends_standing: bool = False, may_end_moving: bool = False) -> list[str]:
    """The phrases of `quality` (`quality.motion_quality`'s figures) an animator would not accept;
    `ends_standing`: the clip is meant to end standing, so a low head or a leaning torso at its end is said;
    `may_end_moving`: the clip is meant to end in motion (a capture that ends mid-stride), so its end speed is not."""
    words = []
    end = quality.get("end") or {}
    if ends_standing and end.get("head_share") is not None and end["head_share"] < STANDING_HEAD_SHARE:
        words.append(f"ends crouched (head at {end['head_share']:.0%} of standing)")
    if ends_standing and end.get("torso_tilt_deg") is not None and end["torso_tilt_deg"] > STANDING_TILT_DEG:
        words.append(f"ends leaning {end['torso_tilt_deg']:.0f}°")
    if not may_end_moving and end.get("root_speed_mps") is not None and end["root_speed_mps"] >= SETTLED_SPEED:
        words.append(f"ends moving at {end['root_speed_mps']:.2f} m/s")
    if quality.get("fall_s"):
        words.append(f"falls for {quality['fall_s']:.1f} s")
    if quality.get("stumble"):
        words.append(f"stumbles at {quality['stumble']['time_s']:.2f} s ({quality['stumble']['body']} on the floor)")
    if quality.get("foot_sliding_m", 0.0) > SLIDING_WORDS_M:
        most = quality.get("foot_sliding_most")  # absent from results written before it was measured
        where = (f" ({most['body']} {100 * most['m']:.0f} cm from {most['from_s']:.2f} s to {most['farthest_s']:.2f} s)"
                 if most else "")
        words.append(f"feet slide {100 * quality['foot_sliding_m']:.0f} cm{where}")
    roll = quality.get("foot_roll")  # absent from results written before it was measured
    if roll and roll["deg"] > ROLLED_DEG:
        words.append(f"feet roll onto their edges for {roll['rolled_s']:.1f} s in all "
                     f"({roll['body']} {roll['deg']:.0f}° at {roll['time_s']:.2f} s)")
    pitch = quality.get("foot_end_pitch")  # absent from results written before it was measured
    if ends_standing and pitch and abs(pitch["deg"]) > ROLLED_DEG:
        on, up = ("heel", "toes") if pitch["deg"] > 0 else ("toes", "heel")
        words.append(f"ends with {pitch['body']} on its {on} ({up} {abs(pitch['deg']):.0f}° up)")
    carry = quality.get("carry")
    if carry and carry["held_s"] >= CARRY_WORDS_S and carry["pelvis_share"] < CARRY_PELVIS_SHARE:
        words.append(f"carries crouched for {carry['crouched_s']:.1f} s of {carry['held_s']:.1f} s "
                     f"(pelvis at {carry['pelvis_share']:.0%} of standing)")
    up = quality.get("feet_up")
    if up and up["s"] >= FEET_UP_WORDS_S:
        words.append(f"a foot up by the seat for {up['s']:.1f} s (from {up['from_s']:.2f} s)")
    if quality.get("max_penetration_m", 0.0) > SINKING_WORDS_M:
        at = quality.get("max_penetration_at") or {}  # which body, into what and when (absent from old results)
        what = f"{at['bodies'][0]} " if at.get("bodies") else ""
        into = f" into {at['bodies'][1]}" if at.get("bodies") else ""
        when = f" at {at['time_s']:.2f} s" if at.get("time_s") is not None else ""
        words.append(f"{what}sinks {100 * quality['max_penetration_m']:.1f} cm{into}{when}")
    return words
