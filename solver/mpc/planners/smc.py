"""The sequential Monte Carlo sampler of Hämäläinen et al. 2014 ("Online motion synthesis using
sequential Monte Carlo", §3.3–3.5 and §4.5) as a planner over our spline knots: a multimodal,
adaptive sampler that carries a population of plans from one control step to the next.

Per control step (Algorithm 2):
1. prune the previous step's samples to the M = `keep_fraction` · N whose leaves weigh most
   (w = f · V), shift them onto the new horizon and rebuild the kD-tree from them in random order;
2. add guesses: the previous best shifted by one step, `uniform_fraction` · N samples uniform in the
   control range, a plan that holds the current pose (gravity-compensating torques, or servo
   targets at the current angles) and, with `partwise`, the previous batch's composed candidates
   (PartwiseMPC's recombination of body-part plans; these are tried in every batch);
3. re-evaluate every kept sample (their fitness is stale) and the guesses, then sample adaptively:
   choose a leaf ∝ w and draw N(x_i, diag((σ d_ij)²)) with d_ij the leaf's widths (`leaf_sigma` σ);
   each sample is inserted, splitting its leaf;
4. the last `greedy_fraction` of each batch samples around the best leaf with the small spread
   `greedy_sigma` (§3.5);
5. the best sample is the plan.

The paper draws and inserts one sample at a time; the rollout engine evaluates a batch at once, so
here a planning iteration's N candidates are drawn from the tree as it stood after the previous
batch, and extra iterations of a control step (adaptive effort) continue the same tree. The first
candidate of every batch is the best plan so far (as the other planners' nominal), so an iteration
never loses it. The paper's objective is a fitness in [0, 1]; ours is a cost, so the fitness is f =
exp(−(c − c_min) / τ) with τ = `temperature` × (median cost − c_min) of the step's samples: at 0.1,
a sample a tenth of the way from the best to the median cost weighs 1/e of the best per unit volume,
so the leaves' volumes (large around lone samples) do not outweigh the fitness. Pruning keeps the M
heaviest leaves in one pass, where the paper removes the lightest one at a time (each removal
enlarging its neighbour's volume). The paper's values: M = 0.1 N, 20% uniform samples, σ = 0.5, σ_g
= 0.005 and N_g / N varied ("the balance between local and global search"). Here each actuator's
control spans [−1, 1] (or a joint's range), so a leaf never split is 2 wide and σ_g = 0.005 spreads
the greedy samples by 0.01, a fifth of predictive sampling's noise: measured on the armchair sit
(seeds 0–1), the defaults σ_g = 0.025 (predictive sampling's spread) and N_g = N/2 reach both
keyframes where σ_g = 0.005 or N_g ≤ N/4 miss one (benchmarks/RESULTS.md). With N_g = N/10
the population keeps more modes alive (tests/test_smc.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InvalidInput
from ...formats.settings import setting
from ..objectives.contact import Costs
from .base import COMPOSED, FULL_NOISE, NOMINAL, SAMPLED, Noise, Outcome, Planner
from .kdtree import KDTree, leaf_probabilities
from .partwise import compose, part_columns_of, partitionings_of


@dataclass
class SMCOptions:
    keep_fraction: float = setting(0.1, "Share M/N of the samples carried to the next control step (the paper's 0.1)",
                                   nonneg=True, max=1.0)
    uniform_fraction: float = setting(0.2, "Share of each control step's samples drawn uniformly in the control "
                                           "range (the paper's 20%)", nonneg=True, max=1.0)
    leaf_sigma: float = setting(0.5, "σ: a sample's spread around its leaf's sample, × the leaf's width (the paper's "
                                     "0.5)", positive=True)
    greedy_fraction: float = setting(0.5, "Share of each batch sampled around the best leaf (the paper's N_g / N)",
                                     nonneg=True, max=1.0)
    greedy_sigma: float = setting(0.025, "σ_g: the greedy samples' spread, × the best leaf's width (the paper: 0.005 "
                                         "in its units)", positive=True)
    temperature: float = setting(0.1, "Fitness exp(−(cost − best) / τ), τ = this × (median cost − best)",
                                 positive=True)
    hold_guess: bool = setting(True, "Each control step, try a plan that holds the current pose")
    partwise: bool = setting(False, "Each batch, try PartwiseMPC's composed candidates of the previous batch (one per "
                                    "partitioning: each body part's knots from the rollout best for that part)")


class SMCPlanner(Planner):
    Options = SMCOptions

    def __init__(self, space, settings, options, rng):
        super().__init__(space, settings, options, rng)
        self.shape = self.nominal.shape  # (knots, nu)
        self.box_lo = np.broadcast_to(space.lo, self.shape).ravel()
        self.box_hi = np.broadcast_to(space.hi, self.shape).ravel()
        self.step_t = None  # the control step the population belongs to
        self.tree = KDTree(self.box_lo, self.box_hi)
        self.costs = np.empty(0)  # per sample in the tree; stale until `fresh`
        self.fresh = np.empty(0, dtype=bool)
        self.partitionings = partitionings_of(settings) if options.partwise else []
        self.part_columns = part_columns_of(space, self.partitionings)
        self.composed = np.empty((0,) + self.shape)  # the last batch's composed candidates

    @classmethod
    def check(cls, settings, options, path):
        needed = 4 + (len(settings.partitionings_or_default()) if options.partwise else 0)
        if settings.rollouts < needed:
            raise InvalidInput(f"{path}.rollouts",
                               f"the SMC planner needs at least {needed} rollouts here, got {settings.rollouts}")

    # -- checkpoints -------------------------------------------------------------------------------
    def get_state(self):
        t = self.tree
        return dict(super().get_state(), smc_step_t=np.array([np.nan if self.step_t is None else self.step_t]),
                    smc_points=t.points.copy(), smc_costs=self.costs.copy(), smc_fresh=self.fresh.copy(),
                    smc_composed=self.composed.copy())

    def set_state(self, state):
        super().set_state(state)
        step_t = float(np.asarray(state["smc_step_t"]).reshape(-1)[0])
        self.step_t = None if np.isnan(step_t) else step_t
        self.tree = KDTree(self.box_lo, self.box_hi)  # the same insertion order gives the same tree
        for x in np.asarray(state["smc_points"], dtype=float):
            self.tree.insert(x)
        self.costs = np.array(state["smc_costs"], dtype=float)
        self.fresh = np.array(state["smc_fresh"], dtype=bool)
        self.composed = np.array(state["smc_composed"], dtype=float).reshape((-1,) + self.shape)

    # -- fitness and sampling ----------------------------------------------------------------------
    def log_fitness(self, costs: np.ndarray) -> np.ndarray:
        """log f = −(c − c_min) / τ; −inf for +inf costs."""
        finite = np.isfinite(costs)
        if not finite.any():
            return np.full(len(costs), -np.inf)
        best = float(costs[finite].min())
        tau = self.options.temperature * (float(np.median(costs[finite])) - best)
        tau = tau if tau > 0 else 1e-12
        return np.where(finite, -(np.where(finite, costs, best) - best) / tau, -np.inf)

    def leaf_weights(self) -> np.ndarray:
        """Selection probability of each leaf (∝ f · V)."""
        return leaf_probabilities(self.log_fitness(self.costs), self.tree.log_volumes())

    def draw(self, n: int) -> np.ndarray:
        """n samples from the tree's mixture: a leaf ∝ w, then N(x_i, diag((σ d_i)²)), clipped."""
        if n <= 0:
            return np.empty((0, self.box_lo.size))
        p = self.leaf_weights()
        leaves = self.rng.choice(len(p), size=n, p=p)
        spread = self.options.leaf_sigma * self.tree.widths()[leaves]
        x = self.tree.points[leaves] + self.rng.standard_normal(spread.shape) * spread
        return np.clip(x, self.box_lo, self.box_hi)

    def greedy(self, n: int, best: int) -> np.ndarray:
        """n samples around leaf `best` with the small spread σ_g (§3.5)."""
        if n <= 0:
            return np.empty((0, self.box_lo.size))
        spread = self.options.greedy_sigma * self.tree.widths()[best]
        x = self.tree.points[best] + self.rng.standard_normal((n, spread.size)) * spread
        return np.clip(x, self.box_lo, self.box_hi)

    def best_leaf(self) -> int:
        """The evaluated sample with the lowest cost this step (a stale one before any is)."""
        costs = np.where(self.fresh, self.costs, np.inf)
        if not np.isfinite(costs).any():
            costs = self.costs
        return int(np.argmin(costs))

    # -- a control step's first batch --------------------------------------------------------------
    def begin_step(self, state: np.ndarray, t: float) -> list[np.ndarray]:
        """Prune, shift and rebuild (Algorithm 2, lines 2–10); the guesses (lines 11–15): the
        previous best shifted, uniform samples and the hold plan. Returns the batch's fixed
        candidates after the best-so-far (kept samples to re-evaluate, then the guesses)."""
        n = self.s.rollouts
        old_points, old_costs = self.tree.points, self.costs
        keep = min(int(round(self.options.keep_fraction * n)), len(old_points))
        kept = np.empty((0, self.box_lo.size))
        kept_costs = np.empty(0)
        if keep > 0:
            log_w = self.log_fitness(old_costs) + self.tree.log_volumes()
            order = np.argsort(-log_w, kind="stable")[:keep]
            order = order[self.rng.permutation(len(order))]  # random insertion order (line 7)
            knots = old_points[order].reshape((-1,) + self.shape)
            kept = self.shifted(knots, t).reshape(len(order), -1)
            kept_costs = old_costs[order]
        self.tree = KDTree(self.box_lo, self.box_hi)
        self.costs, self.fresh = np.empty(0), np.empty(0, dtype=bool)
        fixed = [x for x in np.clip(kept, self.box_lo, self.box_hi)]
        for x, c in zip(fixed, kept_costs):
            self._add(x, c, fresh=False)
        n_uniform = int(round(self.options.uniform_fraction * n))
        fixed += list(self.rng.uniform(self.box_lo, self.box_hi, size=(n_uniform, self.box_lo.size)))
        hold = self.space.hold_plan(state, t) if self.options.hold_guess else None
        if hold is not None:
            fixed.append(np.clip(hold.ravel(), self.box_lo, self.box_hi))
        self.step_t = t
        return fixed[: n - 2]  # room for the best-so-far and at least one adaptive sample

    def _add(self, x: np.ndarray, cost: float, fresh: bool) -> int:
        i = self.tree.insert(x)
        if i == len(self.costs):
            self.costs = np.append(self.costs, cost)
            self.fresh = np.append(self.fresh, fresh)
        elif fresh and (not self.fresh[i] or cost < self.costs[i]):  # the same sample again: its latest cost
            self.costs[i], self.fresh[i] = cost, True
        return i

    # -- the planner contract ----------------------------------------------------------------------
    def propose(self, state, t, noise: Noise = FULL_NOISE) -> np.ndarray:
        n = self.s.rollouts
        first = self.step_t is None or abs(t - self.step_t) > 1e-12
        best_so_far = self.shifted(self.nominal, t).ravel() if first else self.nominal.ravel()
        composed = [x.ravel() for x in self.shifted(self.composed, t)] if len(self.composed) else []
        fixed = composed + (self.begin_step(state, t) if first else [])
        fixed = fixed[: n - 2]
        n_composed = min(len(composed), len(fixed))
        origins = [NOMINAL] + [COMPOSED] * n_composed + [SAMPLED] * (len(fixed) - n_composed)
        rest = n - 1 - len(fixed)
        n_greedy = min(int(round(self.options.greedy_fraction * n)), rest - 1) if len(self.tree) else 0
        if len(self.tree):
            adaptive = self.draw(rest - n_greedy)
            greedy = self.greedy(n_greedy, self.best_leaf())
        else:  # the very first step: nothing to sample from yet but the guesses
            adaptive = self.rng.uniform(self.box_lo, self.box_hi, size=(rest, self.box_lo.size))
            greedy = np.empty((0, self.box_lo.size))
        samples = np.concatenate([best_so_far[None], np.asarray(fixed).reshape(-1, self.box_lo.size),
                                  adaptive, greedy])
        origins += [SAMPLED] * (len(adaptive) + len(greedy))
        self._candidates = np.clip(samples, self.box_lo, self.box_hi).reshape((n,) + self.shape)
        self._origins = np.array(origins)
        self._t = t
        return self._candidates

    def tell(self, costs: Costs) -> Outcome:
        total = costs.total
        flat = self._candidates.reshape(len(total), -1)
        for x, c in zip(flat, total):
            self._add(x, float(c), fresh=True)
        if self.partitionings:
            self.composed = np.array([compose(self._candidates, costs, p, self.part_columns)
                                      for p in self.partitionings])
        best_here = int(np.argmin(total))
        # the plan: the best sample of the step so far (candidate 0 re-evaluates it every batch)
        self.nominal = self._candidates[best_here].copy()
        self.planned_at(self._t)
        return Outcome(best_index=best_here, best_cost=float(total[best_here]), origin=int(self._origins[best_here]))
