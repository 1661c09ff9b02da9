"""The names of PhysKey's solve methods and MPC planners, and where each is implemented.

This is the ground floor: task validation, the CLI's choices and Blender's menus read the names
and descriptions here without importing any optimizer. A new method or planner is its own module
plus one line here; `resolve` imports the module on first use (`methods.get_method`,
`mpc.planners.base.make_planner`) (a contact solve need not pay for pycma and scipy, ≈ 0.6 s of every start-up).
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import InvalidInput


@dataclass(frozen=True)
class Entry:
    """A registered implementation: `module:attribute` inside the solver package, and the label and
    one-line description users see (CLI help, Blender menus)."""
    target: str
    label: str
    description: str


# name → Entry; order is the order users see.
METHODS = {
    "contact": Entry("methods.contact:CONTACT", "Contact keyframes", "PartwiseMPC: sampling MPC towards contact pairs"),
    "assist": Entry("methods.assist:ASSIST", "Assisted keyframes", "CMA-ES with assist forces towards key poses"),
    "simulate": Entry("methods.simulate:SIMULATE", "Simulate", "Play the scene forward"),
    "track": Entry("methods.track:TRACK", "Make physical",
                   "Sampling MPC follows a reference motion with no assist (an assisted solution, your animation)"),
}
PLANNERS = {
    "partwise": Entry("mpc.planners.partwise:PartwisePlanner", "Partwise",
                      "Predictive sampling that recombines the best body-part plans (PartwiseMPC)"),
    "baseline": Entry("mpc.planners.sampling:SamplingPlanner", "Predictive sampling",
                      "MuJoCo MPC's predictive sampling: the best sample becomes the plan"),
    "cem": Entry("mpc.planners.cem:CrossEntropyPlanner", "Cross-entropy",
                 "The plan is refit to the mean of the elite samples"),
    "smc": Entry("mpc.planners.smc:SMCPlanner", "Sequential Monte Carlo",
                 "A population of plans carried between control steps, sampled through an adaptive kD-tree "
                 "(Hämäläinen et al. 2014): keeps several strategies alive at once"),
}


def check_name(kind: str, registry: dict[str, Entry], name: str, path: str) -> None:
    """InvalidInput at `path` unless `name` is registered; the message lists the registered names."""
    if name not in registry:
        raise InvalidInput(path, f"unknown {kind} '{name}' (have: {', '.join(registry)})")


def resolve(registry: dict[str, Entry], name: str):
    """The object a registered name stands for (its module imported now)."""
    import importlib
    module, attr = registry[name].target.split(":")
    solver_package = __package__.rpartition(".")[0]  # this module is in solver's core/
    return getattr(importlib.import_module(f"{solver_package}.{module}"), attr)
