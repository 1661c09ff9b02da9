"""How many planning iterations each control step gets.

Fixed (`budget` N): N per step, the old behaviour. Adaptive (no budget): plan until the best cost
stops improving — an iteration's best candidate improves on the plan it started from (candidate 0,
the nominal) by less than `improvement`, relatively — or a cap; more (twice the cap, and at
least two) for `boost_s` seconds after a keyframe switch and whenever the character's state
degrades (the best cost of the step's first iteration rising by more than `degrade_rise` over the
last step's, or the head dropping faster than `fall_speed`). Within one step the sampling noise
shrinks by `anneal` per extra iteration (as DIAL-MPC anneals), except for a `wide_fraction` of the
samples that keep the full spread (MuJoCo MPC's two-level noise). Every decision comes from costs
and states, never from the clock, so a solve is deterministic per seed.
"""
from __future__ import annotations

import math

from ..formats.settings import EffortSettings


class Effort:
    """The per-control-step planning loop's stopping rule and noise schedule."""

    def __init__(self, settings: EffortSettings, control_dt: float):
        self.s = settings
        self.control_dt = control_dt
        self.fixed = settings.budget is not None
        self.boost_until = -math.inf
        self.last_cost: float | None = None  # the previous control step's final best cost
        self.last_head: float | None = None
        self.boosted = False
        self.final_cost: float | None = None
        # Raised by the particle layer to retry a segment with more effort: × the cap (or the budget), at
        # least that many iterations per control step, and the improvement threshold ÷ it.
        self.escalation = 1

    def get_state(self) -> dict:
        """What carries over between control steps (for checkpoints; JSON)."""
        return {"boost_until": None if self.boost_until == -math.inf else self.boost_until,
                "last_cost": self.last_cost, "last_head": self.last_head}

    def set_state(self, state: dict) -> None:
        self.boost_until = -math.inf if state["boost_until"] is None else state["boost_until"]
        self.last_cost, self.last_head = state["last_cost"], state["last_head"]

    # -- one control step ------------------------------------------------------------------------
    def begin_step(self, t: float, keyframe_switched: bool, head_height: float | None) -> None:
        """Called before a control step's first iteration."""
        if keyframe_switched:
            self.boost_until = t + self.s.boost_s
        falling = (head_height is not None and self.last_head is not None
                   and (self.last_head - head_height) > self.s.fall_speed * self.control_dt)
        self.last_head = head_height
        self.boosted = t < self.boost_until - 1e-9 or falling
        self.final_cost: float | None = None

    def cap(self) -> int:
        cap = self.escalation * self.s.max_iterations
        return 2 * cap if self.boosted else cap

    def noise_scale(self, iteration: int) -> float:
        """Scale of the narrow samples' noise in iteration `iteration` (0-based) of this step."""
        return 1.0 if self.fixed else self.s.anneal ** iteration

    def wide_fraction(self) -> float:
        return 0.0 if self.fixed else self.s.wide_fraction

    def more(self, done: int, nominal_cost: float, best_cost: float) -> bool:
        """Whether to plan another iteration after `done` iterations, the last of which scored its
        starting plan `nominal_cost` and its best candidate `best_cost` (+inf: diverged)."""
        if self.fixed:
            return done < self.escalation * self.s.budget
        if done == 1:
            rising = (self.last_cost is not None and math.isfinite(best_cost)
                      and best_cost > self.last_cost * (1.0 + self.s.degrade_rise))
            self.boosted = self.boosted or rising
        if math.isfinite(best_cost):
            self.final_cost = best_cost
        if done >= self.cap():
            return False
        if done < max(2 if self.boosted else 1, self.escalation) or not math.isfinite(best_cost):
            return True
        if not math.isfinite(nominal_cost):  # the old plan diverged and a new one was found
            return True
        threshold = self.s.improvement / self.escalation
        return (nominal_cost - best_cost) > threshold * max(abs(nominal_cost), 1e-12)

    def end_step(self) -> None:
        """Called after a control step's last iteration."""
        self.last_cost = self.final_cost
