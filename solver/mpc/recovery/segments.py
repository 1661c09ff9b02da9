"""Keyframe segments, the unit of work particles are made of: one particle, resumed from a
checkpoint, runs until it passes keyframe `k` or its run ends.

A segment depends only on its job (the checkpoint, and a fresh noise stream for a retry), so where it
runs does not change what it gives: `LocalSegments` runs a batch one job after another in this
process (the default); `ray_pool.RaySegments` runs them as Ray tasks across a cluster. Either way the
outcomes come back in the jobs' order, and a solve gives the same bytes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional, Protocol

import numpy as np

from ...formats.solution import Progress
from ..agent import Agent
from ..keyframe_tracker import PROGRESS_STEP
from .checkpoint import Checkpoint

# (job index in the batch, iterations the batch spent before it) → the job's per-step progress callback
StepReport = Callable[[int, int], Optional[Callable[[Progress], None]]]


@dataclass
class SegmentJob:
    checkpoint: Checkpoint  # where the particle starts
    keyframe: int  # the segment ends when the particle passes this keyframe (or its run ends)
    stream: dict | None = None  # fresh noise (a retry, a backed-up segment); None: the checkpoint's own
    escalation: int = 1  # planning effort ×, with a fresh stream
    # keyframes appended to the solve's task while it ran (task-file JSON): elsewhere, the task alone
    # would not match the checkpoint
    appended: list = field(default_factory=list)
    press: float = 1.0  # the contact term's weight × (a retry presses on to the mark: `retry_contact`)
    edited: dict = field(default_factory=dict)  # the task's keyframes edited while it ran: index (text) → JSON

    def to_plain(self) -> dict:
        """Plain data (dicts, numbers, arrays), what crosses to another machine."""
        return {"meta": self.checkpoint.meta, "arrays": self.checkpoint.arrays, "keyframe": self.keyframe,
                "stream": self.stream, "escalation": self.escalation, "appended": self.appended, "press": self.press,
                "edited": self.edited}

    @classmethod
    def from_plain(cls, d: dict) -> SegmentJob:
        return cls(Checkpoint(d["meta"], d["arrays"]), d["keyframe"], d["stream"], d["escalation"], d["appended"],
                   d["press"], d["edited"])


@dataclass
class SegmentOutcome:
    checkpoint: Checkpoint  # where the particle stopped
    reached: bool  # it passed the keyframe
    index: int  # keyframes it has reached in all
    time: float  # its simulation time
    last_cost: float | None
    iterations: int  # planning iterations this segment spent

    def to_plain(self) -> dict:
        return {"meta": self.checkpoint.meta, "arrays": self.checkpoint.arrays, "reached": self.reached,
                "index": self.index, "time": self.time, "last_cost": self.last_cost, "iterations": self.iterations}

    @classmethod
    def from_plain(cls, d: dict) -> SegmentOutcome:
        return cls(Checkpoint(d["meta"], d["arrays"]), d["reached"], d["index"], d["time"], d["last_cost"],
                   d["iterations"])

    def further_than(self, other: SegmentOutcome) -> bool:
        """More keyframes reached, then a longer run."""
        return (self.index, self.time) > (other.index, other.time)


def attempt_report(job: SegmentJob, outcome: SegmentOutcome, tolerance: float) -> dict:
    """What one particle's segment did, for the solve's log: how long it ran (s of motion), why it
    stopped short of the keyframe (None: it reached it), how close it came, and the longest time it
    went without coming `PROGRESS_STEP` × the keyframe's tolerance closer than when it last did, out
    of the tolerance (to the segment's end, for one that failed) — what tells a run stuck for seconds
    from one that fell."""
    times = np.asarray(outcome.checkpoint.arrays["record.times"])
    dist = np.asarray(outcome.checkpoint.arrays["record.dist"])
    kf = np.asarray(outcome.checkpoint.arrays["record.kf_idx"])
    t0 = float(np.asarray(job.checkpoint.arrays["record.times"])[-1])
    rows = np.flatnonzero((times > t0 + 1e-12) & (kf == job.keyframe))
    meta = outcome.checkpoint.meta
    reason = None if outcome.reached else (meta["tracker"]["failure"] or meta.get("unstable_reason") or "ended")
    out = {"seconds": round(outcome.time - t0, 4), "failure": reason, "closest": None, "longest_stall_s": None}
    if len(rows):
        mark, since, longest = np.inf, t0, 0.0  # mark: the distance at the last progress
        for t, d in zip(times[rows], dist[rows]):
            if d <= tolerance or d < mark - PROGRESS_STEP * tolerance:  # holding the keyframe is no stall
                mark, since = d, t
            longest = max(longest, t - since)
        out["closest"], out["longest_stall_s"] = round(float(dist[rows].min()), 4), round(float(longest), 4)
    return out


class Segments(Protocol):
    def run(self, jobs: list[SegmentJob], report: StepReport) -> list[SegmentOutcome]:
        """Every job's outcome, in the jobs' order."""


def run_segment(job: SegmentJob, resume: Callable[[Checkpoint], Agent], report=None) -> SegmentOutcome:
    """One segment: the particle of `job.checkpoint` steps until it passes `job.keyframe` or is done."""
    agent = resume(job.checkpoint)
    agent.retry_with(job.stream, job.escalation, job.press)
    while not agent.done and agent.tracker.index <= job.keyframe:
        agent.step(report)
    return SegmentOutcome(agent.checkpoint(), agent.tracker.index > job.keyframe, int(agent.tracker.index),
                          float(agent.data.time), None if agent.last_cost is None else float(agent.last_cost),
                          agent.iterations - int(job.checkpoint.meta["iterations"]))


class LocalSegments:
    """A batch's segments one after another, here, with progress at every control step."""

    def __init__(self, resume: Callable[[Checkpoint], Agent]):
        self.resume = resume

    def run(self, jobs: list[SegmentJob], report: StepReport) -> list[SegmentOutcome]:
        out, spent = [], 0
        for j, job in enumerate(jobs):
            out.append(run_segment(job, self.resume, report(j, spent)))
            spent += out[-1].iterations
        return out


def report_outcome(report: StepReport, j: int, spent_before: int, outcome: SegmentOutcome) -> None:
    """A segment that ran elsewhere, reported when it comes back (one progress report for the segment, with
    its motion for the live preview: a segment at a time where it is not run here)."""
    callback = report(j, spent_before)
    keyframes = outcome.checkpoint.meta["tracker"]["keyframes"]
    arrays = outcome.checkpoint.arrays
    if callback is not None and outcome.last_cost is not None:
        callback(Progress(min(outcome.index / keyframes, 1.0), outcome.last_cost, reached=outcome.index,
                          keyframes=keyframes, iterations=int(outcome.checkpoint.meta["iterations"]),
                          motion_time=outcome.time, motion=(arrays["record.times"], arrays["record.qpos"]),
                          reached_times=list(outcome.checkpoint.meta["tracker"]["reached"])))
