"""Contact keyframes checked off in order: the tracker's success/failure bookkeeping (MuJoCo MPC's
transition logic) and the distance it watches."""
from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from ..formats.contact_keyframes import WORLD, ContactKeyframe
from ..formats.scene import SceneDesc
from ..physics.pair_points import pair_offset
from ..physics.quality import FALLEN_HEAD_HEIGHT, RISEN_HEAD_HEIGHT
from ..physics.touching import touching_bodies

PROGRESS_STEP = 0.1  # of a keyframe's tolerance: coming closer by less than this is not progress
CLOSING_S = 2.0  # a keyframe that made progress within this long is still closing in (see `overtime`)
STYLE_STEP = 0.01  # of `Posture.style_gap`: coming closer to a keyframe's style by less than this is not progress


@dataclass
class KeyframeTracker:
    """Success/failure bookkeeping of an ordered keyframe list (MuJoCo MPC's transition logic)."""
    keyframes: list[ContactKeyframe]
    index: int = 0
    start: float = 0.0
    within_since: float | None = None  # first instant of the current stretch within tolerance
    reached: list = field(default_factory=list)
    failed: bool = False
    failure: str | None = None  # why the current keyframe failed: "time limit", "style", "fell", "stalled" or
    # "stumbled"
    fallen_since: float | None = None  # first instant of the current stretch fallen (see `watch_fall`)
    head_was_up: bool = False  # the head has risen (RISEN_HEAD_HEIGHT) since the current keyframe became active
    progress_mark: float | None = None  # the distance at the last progress towards the current keyframe
    progress_since: float | None = None  # when that was (see `note_progress`)
    overtime: float = 0.0  # how far past its time limit a keyframe still closing in may run, × the limit
    style_short: str | None = None  # the current keyframe's pairs met, its style not: why ("head at 81% …")
    style_lost_at: float | None = None  # when the style of a keyframe being held was last lost (see `jobs`)
    still_since: float | None = None  # first instant of the root's current stretch at rest (see `jobs.settled`)
    stumbled_on: str | None = None  # for "stumbled": what caught the character ("shin_left on the floor at 1.10 s")
    style_mark: float | None = None  # the style gap at the last progress towards the style (see `watch_style`)
    style_since: float | None = None  # when that was

    def __post_init__(self):
        self.reached = [None] * len(self.keyframes)

    # What a checkpoint keeps of the tracker (the keyframes themselves are the run's, fingerprinted).
    STATE = ("index", "start", "within_since", "reached", "failed", "failure", "fallen_since", "head_was_up",
             "progress_mark", "progress_since", "style_short", "still_since", "style_lost_at", "stumbled_on",
             "style_mark", "style_since")

    def get_state(self) -> dict:
        """Everything the tracker carries between control steps, as JSON (for checkpoints)."""
        return {**{name: getattr(self, name) for name in self.STATE}, "keyframes": len(self.keyframes)}

    def set_state(self, state: dict) -> None:
        for name in self.STATE:
            setattr(self, name, state.get(name))  # later fields are absent from checkpoints made before them
        self.reached = list(state["reached"])

    @property
    def done(self) -> bool:
        return self.failed or self.index >= len(self.keyframes)

    @property
    def current(self) -> ContactKeyframe:
        return self.keyframes[min(self.index, len(self.keyframes) - 1)]

    def update(self, t: float, distance: float, steady=lambda: True) -> None:
        """Advance with the current keyframe's distance (norm of stacked pair displacements) at t; a
        keyframe held for its sustain counts once `steady()` says the character may stop there."""
        if self.done:
            return
        kf = self.current
        if distance > kf.tolerance:
            self.within_since = None
            if t - self.start > kf.time_limit + 1e-9 and not self.in_overtime(t):
                # Its pairs were met but not its style (a "stand" in a crouch): the style is what failed.
                self.failed, self.failure = True, "style" if self.style_short else "time limit"
            return
        if self.within_since is None:
            self.within_since = t
        if t - self.within_since >= kf.sustain - 1e-9 and steady():
            self.reach(t)

    def reach(self, t: float) -> None:
        """The current keyframe is reached at t: the next one starts."""
        self.reached[self.index] = t
        self.index += 1
        self.start, self.within_since = t, None
        self.head_was_up, self.fallen_since = False, None
        self.progress_mark, self.progress_since = None, None
        self.style_short, self.still_since, self.style_lost_at = None, None, None
        self.style_mark, self.style_since = None, None

    def note_progress(self, t: float, distance: float, held: bool = True) -> None:
        """Mark progress towards the current keyframe: its distance came `PROGRESS_STEP` × its tolerance
        closer than at the last progress, or it is held within the tolerance (sustaining the keyframe is
        progress; `held` False: within it but not yet met, as a box hovering over its shelf, which only
        coming closer advances). The first distance of a keyframe sets the mark as of the keyframe's
        start: no progress of its own."""
        if self.done:
            return
        kf, mark = self.current, self.progress_mark
        if mark is None:  # the keyframe's first distance: the mark it started from
            self.progress_mark, self.progress_since = distance, self.start
        elif (held and distance <= kf.tolerance) or distance < mark - PROGRESS_STEP * kf.tolerance:
            self.progress_mark, self.progress_since = distance, t

    def closing(self, t: float) -> bool:
        """Whether the current keyframe has made progress since its start, the last time within
        `CLOSING_S` of t."""
        since = self.progress_since
        return since is not None and since > self.start and t - since < CLOSING_S - 1e-9

    def in_overtime(self, t: float) -> bool:
        """Whether the current keyframe, past its time limit at t, may run on: it is still closing in
        and within `overtime` × its limit past it. A slow approach that is getting there — a seated
        shuffle along a tall bench, still 4 cm a second closer when its 10 s ran out — is worth its
        last seconds; its retry would start the whole approach again."""
        kf = self.current
        return self.closing(t) and t - self.start <= kf.time_limit * (1.0 + self.overtime) + 1e-9

    def watch_stall(self, t: float, distance: float, give_up_s: float, held: bool = True) -> None:
        """Note progress (`note_progress`, with `held`), and fail the current keyframe ("stalled") once
        its distance has gone `give_up_s` without progress (`give_up_s` 0: never). A run stuck short of
        its keyframe would otherwise spend the rest of the time limit — seconds of motion, each costing
        planning — before its retry, with fresh noise and more effort, could start."""
        self.note_progress(t, distance, held)
        if self.done or give_up_s <= 0:
            return
        if t - self.progress_since >= give_up_s - 1e-9:
            self.failed, self.failure = True, "stalled"

    def watch_style(self, t: float, gap: float, give_up_s: float) -> None:
        """Fail the current keyframe for its style ("style") once its pairs have been met without its style
        (`style_short`) for `give_up_s` without the style coming `STYLE_STEP` closer (`gap`:
        `Posture.style_gap`; `give_up_s` 0: never). A stand met in a crouch that stays a crouch would
        otherwise run to the time limit and on through its overtime — seconds of motion, each costing
        planning — before the retry that may stand up could start. A character still rising is coming
        closer, and runs on."""
        if self.done or give_up_s <= 0 or self.style_short is None:
            self.style_mark, self.style_since = None, None
            return
        if self.style_mark is None or gap < self.style_mark - STYLE_STEP:
            self.style_mark, self.style_since = gap, t
        elif t - self.style_since >= give_up_s - 1e-9:
            self.failed, self.failure = True, "style"

    def watch_fall(self, t: float, head_height: float, give_up_s: float, lying: bool = True) -> None:
        """Fail the current keyframe once the head has stayed below `FALLEN_HEAD_HEIGHT`, the torso lying
        (`lying`: at least `posture.LYING_TILT_DEG` from upright, True without a torso), for `give_up_s` after
        having risen to `RISEN_HEAD_HEIGHT` during this keyframe, where the keyframe asks the character to
        stay up (`ContactKeyframe.upright`; `give_up_s` 0: never): a fallen character does not get up to meet
        a seated or standing keyframe, a clip that lies back and sits up again is no success, and the time
        left to its limit is better spent retrying from the last reached keyframe. Getting up from lying (the
        head low from the keyframe's start, or bobbing across the line before it has risen clear of it) is
        not a fall, nor sitting low with the torso up."""
        up = head_height >= FALLEN_HEAD_HEIGHT or not lying
        self.head_was_up = self.head_was_up or head_height >= RISEN_HEAD_HEIGHT
        if self.done or give_up_s <= 0 or not self.current.upright or up or not self.head_was_up:
            self.fallen_since = None
            return
        if self.fallen_since is None:
            self.fallen_since = t
        if t - self.fallen_since >= give_up_s - 1e-9:
            self.failed, self.failure = True, "fell"

    def watch_stumble(self, t: float, body: str | None) -> None:
        """Fail the current keyframe ("stumbled") where it asks the character to stay up and, its head risen
        in it (as for a fall), `body` — a knee, a hand, found by the caller: `stumble.FloorCatch` — touches the
        floor the keyframe does not put it on. A stand or a carry caught on a knee is no success an animator
        keeps (the finished clip's `stumble` marks it), and a retry from the last keyframe reached may find
        one that stays on its feet."""
        if self.done or body is None or not self.current.upright or not self.head_was_up:
            return
        self.failed, self.failure, self.stumbled_on = True, "stumbled", f"{body} on the floor at {t:.2f} s"

    def append(self, keyframes: list[ContactKeyframe], t: float) -> None:
        """Keyframes added while running; a finished (successful) run resumes with them."""
        if self.index >= len(self.keyframes):
            self.start, self.within_since = t, None
            self.head_was_up, self.fallen_since = False, None
            self.progress_mark, self.progress_since = None, None
        self.keyframes.extend(keyframes)
        self.reached.extend([None] * len(keyframes))


def pair_distance(model: mujoco.MjModel, data: mujoco.MjData, kf: ContactKeyframe,
                  held: frozenset = frozenset()) -> float:
    """Norm of the stacked pair displacements at the data's current kinematics.

    A pair whose two bodies a grasp weld holds together (`held`: (body, object) names) counts as met.
    The weld closed with the hand within the grasp keyframe's tolerance of its point and keeps it
    there, so whatever gap it closed with would otherwise be charged again to every later keyframe
    that keeps the hand on the object, and the planner could do nothing about it: a 2 kg box lifted
    to 8 cm of its mark failed the lift's 0.1 m because the hands had closed 3–4 cm off theirs."""
    total = 0.0
    for p in kf.pairs:
        if (p.body1, p.body2) in held or (p.body2, p.body1) in held:
            continue
        total += float(np.sum(pair_offset(model, data, p) ** 2))
    return float(np.sqrt(total))


def placements(scene: SceneDesc, model: mujoco.MjModel, kf: ContactKeyframe) -> list[tuple[int, int]]:
    """(object, support) body ids of keyframe `kf`'s pairs that put a free object on a fixed
    environment body (box ↔ shelf). A pair with `world` is a point in space (a waypoint of a carry),
    not a support."""
    free = {b.name for b in scene.environment.bodies if b.kind == "free"}
    fixed = {b.name for b in scene.environment.bodies if b.kind != "free"} - {WORLD}
    out = []
    for p in kf.pairs:
        for obj, support in ((p.body1, p.body2), (p.body2, p.body1)):
            if obj in free and support in fixed:
                out.append((model.body(obj).id, model.body(support).id))
    return out


def resting_on(model: mujoco.MjModel, data: mujoco.MjData, pairs: list[tuple[int, int]]) -> bool:
    """Whether every (object, support) of `pairs` touches: MuJoCo has a contact between them now."""
    if not pairs:
        return True
    touching = touching_bodies(model, data)
    return all(pair in touching for pair in pairs)
