"""What an agent is asked to do: reach contact keyframes in order, or follow a reference motion through
its track keyframes. The agent plans, steps and checkpoints alike for both; a job says what differs —
the objective, the keyframe watch, how far the character is from a keyframe, and when one may count.
"""
from __future__ import annotations

from dataclasses import replace

import mujoco
import numpy as np

from ..physics.model import BuiltModel
from ..physics.posture import SETTLE_HOLD_S, SETTLE_LIMIT_S, SETTLED_SPEED, STYLE_DIP_S
from ..physics.quality import RISEN_HEAD_HEIGHT
from ..physics.reference import Reference
from .keyframe_tracker import KeyframeTracker, pair_distance, placements, resting_on
from .objectives.contact import Objective, pressed
from .objectives.tracking import ReferenceTracker, TrackingObjective, pose_columns

TOPPLING_SPEED = 0.5  # m/s: a centre of mass crossing the floor faster than this is leaving its support
SETTLE_COM_VEL = 10.0  # the least CoM Vel. weight while the clip settles (MuJoCo MPC's default for the term)


class ContactJob:
    """Contact keyframes (`ContactSettings`): each keyframe's pairs approached until they hold."""
    approaches = True  # a keyframe is approached, so one that stalls on the way may fail early

    def objective(self, plan: BuiltModel, keyframes: list, settings) -> Objective:
        return Objective(plan, settings.terms.speed_limit, settings.terms.speed_weight)

    def tracker(self, keyframes: list, settings) -> KeyframeTracker:
        return KeyframeTracker(list(keyframes), overtime=settings.recovery.overtime)

    def prepare(self, space) -> None:
        """Nothing to add to the control space: plans are the controls themselves."""

    def aim(self, keyframe, press: float, settling: bool = False, held: bool = False):
        """The keyframe the planner is given: its contact term weighed `press` times (a retry's); while
        `settling` (the last keyframe's pairs met, the clip waiting for the character to come to rest), its
        centre of mass held still with at least SETTLE_COM_VEL: the paper's standing reach weighs no stillness,
        and a reach held with the root still swaying at 0.3–0.6 m/s fell 2 s later; and its feet kept flat
        (`Feet Flat`) only while it is `held` (its pairs and style met: the sustain and the settle) — weighed
        through the rise before, it cost the stand its first tries (RESULTS, "Feet on their edges")."""
        kf = keyframe if press == 1.0 else pressed(keyframe, press)
        if settling and kf.weight("CoM Vel.") < SETTLE_COM_VEL:
            kf = replace(kf, weights=dict(kf.weights, **{"CoM Vel.": SETTLE_COM_VEL}))
        if not held and kf.weight("Feet Flat"):
            kf = replace(kf, weights=dict(kf.weights, **{"Feet Flat": 0.0}))
        return kf

    def distance(self, agent, keyframe) -> float:
        """Its pairs' distance now (m)."""
        held = agent.grasper.held(agent.data) if agent.grasper else frozenset()
        return pair_distance(agent.m, agent.data, keyframe, held)

    def may_end(self, agent, index: int) -> bool:
        """The last keyframe, where it asks the character to stay up, ends the clip only with the head
        above RISEN_HEAD_HEIGHT: nothing after it would catch a fall begun within its sustain (a box put
        down and let go of ended a clip with the character on its way to the floor)."""
        keyframes = agent.tracker.keyframes
        if agent.head is None or index != len(keyframes) - 1 or not keyframes[index].upright:
            return True
        return float(agent.data.xpos[agent.head, 2]) >= RISEN_HEAD_HEIGHT

    def watch_stumble(self, agent) -> None:
        """After a simulation step: the current keyframe fails where the character catches itself on the floor
        (`KeyframeTracker.watch_stumble`) — as a fall does, so not where falls are let be (`give_up_fallen_s` 0:
        a ball hit that may knock the character down)."""
        if agent.settings.recovery.give_up_fallen_s <= 0:
            return
        t = agent.data.time - agent.m.opt.timestep  # a step's contacts are of the pose it started from
        agent.tracker.watch_stumble(t, agent.floor_catch.body(agent.data, agent.tracker.current))

    def holds_style(self, agent, index: int) -> bool:
        """Whether keyframe `index`, its pairs met, holds its style now: a "standing" keyframe only with
        the character standing, a "seated" one with its weight on a seat, a "lying" one lying
        (`posture.Posture.not_in_style`); the tracker keeps why not, so a keyframe that runs out of time so
        fails for its style, said. Styles that ask nothing measurable hold. A keyframe being held keeps its
        hold through a loss of style shorter than STYLE_DIP_S (a seat's force dipping for a step)."""
        keyframes, tracker = agent.tracker.keyframes, agent.tracker
        if index >= len(keyframes):
            return True
        short = agent.posture.not_in_style(keyframes[index].style, agent.data)
        t = float(agent.data.time)
        if short is None or tracker.within_since is None:
            tracker.style_lost_at = None
        else:
            if tracker.style_lost_at is None:
                tracker.style_lost_at = t
            if t - tracker.style_lost_at < STYLE_DIP_S - 1e-9:
                short = None
        tracker.style_short = short
        return short is None

    def steady(self, agent, index: int) -> bool:
        """Whether the last keyframe may count now that its sustain is over: never with the centre of mass
        crossing the floor faster than TOPPLING_SPEED where it asks the character to stay up (a reach on
        another humanoid 'succeeded' with its torso going sideways at 0.94 m/s, toppling), and only once
        the character has come to rest (`settled`): the clip ends at rest, its settle included."""
        keyframes = agent.tracker.keyframes
        if index != len(keyframes) - 1:
            return True
        if keyframes[index].upright:
            mujoco.mj_subtreeVel(agent.m, agent.data)  # fills subtree_linvel only: the simulation is untouched
            if float(np.linalg.norm(agent.data.subtree_linvel[agent.root_body, :2])) >= TOPPLING_SPEED:
                return False
        return settled(agent.tracker, agent.data.time)

    def watch_rest(self, agent) -> None:
        """After each simulation step of the last keyframe: note whether the root is at rest (`settled`
        reads how long it has been), so a character still all through its sustain ends the clip there."""
        tracker = agent.tracker
        if tracker.index == len(tracker.keyframes) - 1:
            note_rest(tracker, agent.data.time, agent.posture.root_speed(agent.data))

    def placed(self, agent, index: int) -> bool:
        """Every object keyframe `index` puts on something (box ↔ shelf) rests on it now: a box held
        10 cm above its shelf is not yet put there, however near its mark."""
        if index >= len(agent.tracker.keyframes):
            return True
        if index not in agent.placements:
            agent.placements[index] = placements(agent.built.scene, agent.m, agent.tracker.keyframes[index])
        return resting_on(agent.m, agent.data, agent.placements[index])


class TrackingJob:
    """A reference motion (`TrackSettings`) followed through its track keyframes, each met at its time."""
    approaches = False  # a track keyframe is met at its time, not approached

    def __init__(self, reference: Reference, built: BuiltModel):
        self.reference = reference
        self.pose_columns = pose_columns(built)

    def objective(self, plan: BuiltModel, keyframes: list, settings) -> TrackingObjective:
        return TrackingObjective(plan, self.reference, list(keyframes), settings.terms, settings.keyframes.key_window)

    def tracker(self, keyframes: list, settings) -> ReferenceTracker:
        return ReferenceTracker(list(keyframes))

    def prepare(self, space) -> None:
        """Plans ride on the reference's own torques where it has them."""
        if self.reference.feedforward is not None:
            space.feedforward, space.feedforward_dt = self.reference.feedforward, self.reference.dt

    def aim(self, keyframe, press: float, settling: bool = False, held: bool = False):
        return keyframe

    def distance(self, agent, keyframe) -> float:
        """Its pose's distance relative to the keyframe's tolerances."""
        q = agent.data.qpos[self.pose_columns]
        return keyframe.distance(q[:3], q[3:7], q[7:])

    def may_end(self, agent, index: int) -> bool:
        return True

    def watch_stumble(self, agent) -> None:
        """A reference says itself where bodies touch (`track.expected_touch`): judged on the finished motion."""

    def holds_style(self, agent, index: int) -> bool:
        return True

    def steady(self, agent, index: int) -> bool:
        return True

    def watch_rest(self, agent) -> None:
        """A reference's end is its own: no settle."""

    def placed(self, agent, index: int) -> bool:
        return True


def note_rest(tracker: KeyframeTracker, t: float, root_speed: float) -> None:
    """Start or end the root's current stretch at rest (slower than SETTLED_SPEED) at t."""
    if root_speed >= SETTLED_SPEED:
        tracker.still_since = None
    elif tracker.still_since is None:
        tracker.still_since = t


def settled(tracker: KeyframeTracker, t: float) -> bool:
    """Whether the character, holding its last keyframe past its sustain, has come to rest at t: its root
    slower than SETTLED_SPEED for SETTLE_HOLD_S (`note_rest`). A character still moving SETTLE_LIMIT_S after
    the keyframe's sustain ends the clip anyway; the quality figures say how fast it still moves
    (`quality.end_state`)."""
    if tracker.still_since is not None and t - tracker.still_since >= SETTLE_HOLD_S - 1e-9:
        return True
    return t - tracker.within_since - tracker.current.sustain >= SETTLE_LIMIT_S - 1e-9


def job_for(reference: Reference | None, built: BuiltModel) -> ContactJob | TrackingJob:
    """The job of a solve: tracking where it follows a reference motion, contact keyframes otherwise."""
    return ContactJob() if reference is None else TrackingJob(reference, built)

