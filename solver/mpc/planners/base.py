"""The planner contract: a sampling planner proposes candidate plans and is told their costs
(ask/tell, as pycma's `OOOptimizer`); the agent (`agent.py`) owns rollouts and scoring.

A plan is a spline of `knots` control vectors over the horizon (`ControlSpace`). Each iteration
the agent asks `propose(state, t, noise)` for N candidates (N × knots × nu, within the control
range; `noise`: how far this iteration's samples spread, the agent's adaptive effort), rolls them
out from `state`, scores them with the objective and calls `tell(costs)`; the planner updates its
nominal plan, which `action(t)` reads for the character's controls. Planners are registered by name
in `solver/core/registry.py` (`PLANNERS`); each is one module defining a `Planner` subclass and, if
it has settings of its own, an `Options` dataclass (read from the task's `settings.planner_options`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...core import schema, splines
from ...core.registry import PLANNERS, check_name, resolve
from ...formats.settings import SamplingSettings
from ...physics.model import BuiltModel
from ..objectives.contact import Costs

# Where a candidate came from; an iteration reports its best candidate's origin.
ORIGINS = ("nominal", "composed", "sampled")
NOMINAL, COMPOSED, SAMPLED = range(len(ORIGINS))


@dataclass
class ControlSpace:
    """What a planner plans over: the character's `nu` actuators within [lo, hi], knots on a spline
    of kind `spline` at `offsets` from the horizon's start, and the body-part group of each
    actuator (`act_group`, indices into scene.GROUPS)."""
    nu: int
    lo: np.ndarray
    hi: np.ndarray
    act_group: np.ndarray
    offsets: np.ndarray
    spline: str
    # Controls every plan is added to, per row of a time grid of step `feedforward_dt` (held past its
    # end): a tracking solve's inverse dynamics of its reference. Plans are then corrections to it.
    feedforward: np.ndarray | None = None
    feedforward_dt: float = 0.0
    # The controls (nu,) that hold the pose of a physics state where it is — gravity-compensating
    # torques, or servo targets at the current angles — for planners that try that as a guess.
    hold: Callable[[np.ndarray], np.ndarray] | None = None

    @classmethod
    def of(cls, plan: BuiltModel, act_group: np.ndarray, settings: SamplingSettings) -> ControlSpace:
        nu = plan.nu_character
        rng = plan.model.actuator_ctrlrange[:nu]
        return cls(nu=nu, lo=rng[:, 0], hi=rng[:, 1], act_group=np.asarray(act_group),
                   offsets=np.linspace(0.0, settings.horizon, settings.knots), spline=settings.spline)

    def hold_plan(self, state: np.ndarray, t: float) -> np.ndarray | None:
        """Knots (knots, nu) of the plan that holds `state`'s pose over the horizon starting at t (a
        correction to the feedforward where there is one), or None where `hold` is not known."""
        if self.hold is None:
            return None
        knots = np.tile(self.hold(state), (len(self.offsets), 1))
        if self.feedforward is not None:
            rows = np.clip(np.rint((t + self.offsets) / self.feedforward_dt).astype(int), 0, len(self.feedforward) - 1)
            knots = knots - self.feedforward[rows]
        return knots

    def look_ahead(self, horizon: float) -> None:
        """Plan over `horizon` seconds from here on (the active keyframe's own, or the settings'):
        the same knots, spread over it."""
        if horizon != self.offsets[-1]:
            self.offsets = np.linspace(0.0, horizon, len(self.offsets))

    def controls(self, knot_start: float, knots: np.ndarray, times: np.ndarray,
                 offsets: np.ndarray | None = None) -> np.ndarray:
        """Controls of plans `knots` (…, knots, nu) starting at `knot_start`, at `times`, clamped; the
        knots at `offsets` from it (default: this horizon's)."""
        offsets = self.offsets if offsets is None else offsets
        u = splines.evaluate(knot_start + offsets, knots, times, self.spline)
        if self.feedforward is not None:
            rows = np.clip(np.rint(np.asarray(times) / self.feedforward_dt).astype(int), 0, len(self.feedforward) - 1)
            u = u + self.feedforward[rows]
        return np.clip(u, self.lo, self.hi)


@dataclass
class Outcome:
    """What `tell` learnt: the best candidate (index, total cost: +inf when every candidate
    diverged, and the previous plan is then kept) and where that candidate came from."""
    best_index: int
    best_cost: float
    origin: int  # index into ORIGINS


@dataclass(frozen=True)
class Noise:
    """How far an iteration's samples spread (the agent's adaptive effort): each sample's noise × `scale`,
    except the first `wide_fraction` of the samples, which keep the full noise."""
    scale: float = 1.0
    wide_fraction: float = 0.0

    def scales(self, n: int) -> np.ndarray | None:
        """(n, 1, 1) noise scale per sample, or None for all ones (then the samples are drawn exactly
        as with no scaling)."""
        if self.scale == 1.0:
            return None
        scales = np.full(n, self.scale)
        scales[: int(round(self.wide_fraction * n))] = 1.0
        return scales[:, None, None]


FULL_NOISE = Noise()


@dataclass
class NoOptions:
    """A planner with no settings beyond `SamplingSettings`."""


class Planner(ABC):
    """Base of the sampling planners: the nominal plan, its shift along the receding horizon and
    the control it gives. Subclasses decide the candidates (`propose`) and the update (`tell`)."""

    Options: type = NoOptions

    def __init__(self, space: ControlSpace, settings: SamplingSettings, options, rng: np.random.Generator):
        self.space, self.s, self.options, self.rng = space, settings, options, rng
        self.sigma = settings.exploration * 0.5 * (space.hi - space.lo)  # noise std per actuator
        self.nominal = np.clip(np.zeros((settings.knots, space.nu)), space.lo, space.hi)
        self.knot_start = 0.0
        self.plan_offsets = space.offsets  # where the carried plans' knots lie from knot_start

    @classmethod  # noqa: B027 (an optional hook: most planners need no checks of their own)
    def check(cls, settings: SamplingSettings, options, path: str) -> None:
        """Refuse settings this planner cannot run (InvalidInput); `SamplingSettings.check` has checked
        what every planner needs."""

    def shifted(self, knots: np.ndarray, t: float) -> np.ndarray:
        """Knots of a plan made at `knot_start` re-sampled on the horizon starting at t (which may be
        longer or shorter than the one it was made on)."""
        return splines.evaluate(self.knot_start + self.plan_offsets, knots, t + self.space.offsets, self.space.spline)

    def planned_at(self, t: float) -> None:
        """The plans now carried (the nominal, and whatever a subclass keeps) were made on the horizon
        starting at t."""
        self.knot_start, self.plan_offsets = t, self.space.offsets

    def action(self, t: float) -> np.ndarray:
        """The nominal plan's control at time t."""
        return self.space.controls(self.knot_start, self.nominal, np.array([t]), self.plan_offsets)[0]

    def get_state(self) -> dict[str, np.ndarray]:
        """Everything the planner carries between iterations (for checkpoints; the RNG is the
        agent's to save). Subclasses add theirs."""
        return {"nominal": self.nominal.copy(), "knot_start": np.array([self.knot_start]),
                "plan_offsets": np.array(self.plan_offsets)}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        self.nominal = np.array(state["nominal"], dtype=float)
        self.knot_start = float(np.asarray(state["knot_start"]).reshape(-1)[0])
        self.plan_offsets = np.array(state.get("plan_offsets", self.space.offsets), dtype=float)

    @abstractmethod
    def propose(self, state: np.ndarray, t: float, noise: Noise = FULL_NOISE) -> np.ndarray:
        """The candidates of this iteration: (N, knots, nu) knots on the horizon starting at t, their
        sampling noise spread as `noise` says."""

    @abstractmethod
    def tell(self, costs: Costs) -> Outcome:
        """The costs of the proposed candidates (+inf for rollouts that diverged); update the plan."""


def planner_class(name: str) -> type[Planner]:
    """The planner registered as `name` (InvalidInput listing the registered names otherwise)."""
    check_name("planner", PLANNERS, name, "settings.planner")
    return resolve(PLANNERS, name)


def planner_options(settings: SamplingSettings, path: str = "settings"):
    """The chosen planner's own settings, checked, with the planner's checks of the whole."""
    cls = planner_class(settings.planner)
    options = schema.from_dict(cls.Options, settings.planner_options, f"{path}.planner_options")
    cls.check(settings, options, path)
    return options


def make_planner(space: ControlSpace, settings: SamplingSettings, rng: np.random.Generator) -> Planner:
    """The planner `settings.planner` names, ready to plan."""
    return planner_class(settings.planner)(space, settings, planner_options(settings), rng)
