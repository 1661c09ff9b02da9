"""What the track method's tests share (the motion they track, `fall`, is a fixture of conftest.py): a
track task of a motion with given keyframes and settings, its solve and objective."""
import numpy as np

from solver.formats.task import task_from_dict
from solver.methods import get_method
from solver.mpc.objectives.tracking import TrackingObjective
from solver.physics.rollout import RolloutEngine
from solver.run.cli import prepare_task

# Where the verdicts are checked, not how closely the tracking follows: a small planning budget.
QUICK = {"rollouts": 20, "max_iterations": 3}


def track(times, qpos, keyframes=(), **settings):
    task = task_from_dict({"schema_version": 1, "name": "track", "method": "track", "keyframes": list(keyframes),
                           "reference": {"times": np.asarray(times).tolist(), "qpos": np.asarray(qpos).tolist()},
                           "settings": settings})
    _, prep = prepare_task(task)
    return prep


def solve(prep, seed=0):
    with RolloutEngine(prep.engine_model(), 2) as engine:
        return get_method("track").solve(prep, seed, engine)


def objective(plan, reference, prep):
    """The tracking objective of `prep`'s keyframes and settings against `reference`."""
    return TrackingObjective(plan, reference, prep.keyframes, prep.settings.terms, prep.settings.keyframes.key_window)


def hinge_names():
    from solver.builders import characters
    return [j.name for b in characters.humanoid("default").bodies for j in b.joints if j.type == "hinge"]
