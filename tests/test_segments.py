"""Particles' keyframe segments may run anywhere: a solve whose segments run in another order, each
from its checkpoint written to disk and read back into a model compiled afresh (as on another
machine), gives the bytes of the solve that ran them here one after another."""
from pathlib import Path

import pytest
from test_particles import _prepared as _doc

from solver.formats.task import task_from_dict
from solver.methods.contact import CONTACT
from solver.mpc.recovery.checkpoint import Checkpoint
from solver.mpc.recovery.particles import run_particles
from solver.mpc.recovery.segments import SegmentJob, run_segment
from solver.physics.rollout import RolloutEngine


class ElsewhereSegments:
    """Runs a batch backwards, each job's checkpoint and outcome through an npz file, on its own
    compile of the task: what a Ray task on another node does, without Ray."""

    def __init__(self, doc: dict, folder: Path):
        self.prep = CONTACT.prepare(task_from_dict(doc))
        self.engine = RolloutEngine(self.prep.plan.model, 1)
        self.folder, self.files, self.batches = folder, 0, 0

    def _through_disk(self, cp: Checkpoint) -> Checkpoint:
        self.files += 1
        path = self.folder / f"cp{self.files}.npz"
        cp.save(path)
        return Checkpoint.load(path)

    def run(self, jobs, report):
        self.batches += 1
        out = [None] * len(jobs)
        for j in reversed(range(len(jobs))):
            job = jobs[j]
            cp = self._through_disk(job.checkpoint)
            moved = SegmentJob.from_plain(dict(job.to_plain(), meta=cp.meta, arrays=cp.arrays))
            outcome = run_segment(moved, self.prep.resumer(self.engine, moved.appended, moved.edited))
            outcome.checkpoint = self._through_disk(outcome.checkpoint)
            out[j] = outcome
        return out


def _unreachable(doc):
    doc["keyframes"][1]["pairs"] = [{"body1": "pelvis", "pos1": [0, 0, 0], "body2": "world", "pos2": [10, 0, 1]}]
    doc["keyframes"][1]["time_limit"] = 0.15
    return doc


@pytest.mark.parametrize("doc", [_doc(particles=3, segment_retries=1, backups=1),
                                 _unreachable(_doc(particles=2, segment_retries=1, backups=1))],
                         ids=["resampled", "retried-and-backed-up"])
def test_segments_run_elsewhere_give_the_same_solve(doc, tmp_path):
    prep = CONTACT.prepare(task_from_dict(doc))
    elsewhere = ElsewhereSegments(doc, tmp_path)
    with RolloutEngine(prep.plan.model, 2) as engine:
        here, log_here = run_particles(prep.agent_setup(), 1, engine)
        there, log_there = run_particles(prep.agent_setup(), 1, engine,
                                         segments=elsewhere)
    elsewhere.engine.close()
    assert elsewhere.batches == len(log_here.attempts) >= 2
    assert log_here.summary() == log_there.summary()
    for name in ("times", "qpos", "ctrl", "keyframe_index", "distance", "control_times", "cost_per_step", "origins"):
        assert getattr(here, name).tobytes() == getattr(there, name).tobytes(), name
    assert (here.success, here.failed_keyframe, here.reached) == (there.success, there.failed_keyframe, there.reached)
