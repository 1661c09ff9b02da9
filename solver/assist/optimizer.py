"""CMA-ES (pycma, ask/tell) over the assisted-keyframes parameters, with the horizon curriculum.

The whole population is one batched rollout. With the curriculum, stage s optimizes the motion up to
keyframe s; it ends when CMA's mean variance falls below ¼ of its initial value (or its share of the
sample budget is spent: at most 10% per early stage), and the next stage starts from the best solution
with reduced variance on
the parameters that act before the previous stage's end. Each stage's best motion is reported as a
playable partial solution. With `lambda_beta_start` < 1 the final stage starts with a cheaper assist
and raises λ_β to its value over ANNEAL_SHARE of its budget: the assisted motion is found first, then
the assist is priced out of it, which keeps the keyframe error low at a high λ_β.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..physics.rollout import RolloutEngine
from .problem import Decoded, Problem

# pycma warns (at import, and again when it loads its plotting module lazily) that matplotlib is
# missing; plotting is not used, so that one warning is silenced for good.
warnings.filterwarnings("ignore", message="Could not import matplotlib")
import cma  # noqa: E402

# A diverged candidate's value as told to pycma. pycma 4.x replaces NaN f-values by the population
# median (a blown-up candidate would rank mid-field) and warns about every ±inf one on each `tell`
# (and inf − inf = NaN in its flat-fitness and tolfun checks), so instead of +inf it gets this finite
# penalty, kept above every finite value of its generation and graded so that a candidate that blew
# up later ranks better (a direction out of an all-diverged start).
PENALTY = 1e30
EARLIER_STD = 0.3  # std multiplier of parameters settled by earlier curriculum stages
VARIANCE_DROP = 0.25  # advance the curriculum when the mean variance falls below this fraction
STAGE_SHARE = 0.1  # at most this fraction of the sample budget per early curriculum stage
ANNEAL_SHARE = 0.6  # share of the final stage over which λ_β rises to its value (lambda_beta_start < 1)
ATTEMPT_STRIDE = 1_000_003  # a search started over draws CMA-ES noise this far from the seed's first (prime)


@dataclass
class Evaluation:
    fitness: np.ndarray  # eq. (4); +inf for diverged candidates
    kf_error: np.ndarray
    decoded: Decoded
    state: np.ndarray | None = None
    survived: np.ndarray | None = None  # (P,) fraction of its own horizon simulated before diverging (1: stable)

    @property
    def diverged(self) -> np.ndarray:
        return ~np.isfinite(self.fitness)

    def for_cma(self) -> np.ndarray:
        """Finite f-values for pycma: the fitness, or for a diverged candidate a penalty above every
        finite value, smaller the longer it survived (see PENALTY)."""
        finite = np.isfinite(self.fitness)
        top = max(PENALTY, 10.0 * float(np.max(np.abs(self.fitness[finite]), initial=0.0)))
        survived = self.survived if self.survived is not None else np.zeros(len(self.fitness))
        return np.where(finite, self.fitness, top * (2.0 - survived))


@dataclass
class History:
    samples: list = field(default_factory=list)
    wall_s: list = field(default_factory=list)
    best: list = field(default_factory=list)
    stage: list = field(default_factory=list)
    beta_scale: list = field(default_factory=list)  # the λ_β factor each generation was scored with


class AssistOptimizer:
    def __init__(self, problem: Problem, engine: RolloutEngine, initial_state: np.ndarray):
        self.p, self.engine, self.state0 = problem, engine, initial_state

    def simulate(self, x: np.ndarray, beta_off: bool = False, nstep: int | None = None, keep=False):
        d = self.p.decode(x)
        nstep = nstep or self.p.nstep_for(d)
        ctrl, mocap, beta = self.p.controls(d, nstep, beta_off=beta_off)
        traj = self.engine.run(self.state0, ctrl, mocap, copy=keep)
        return d, traj, beta

    def evaluate(self, X: np.ndarray, upto: int, beta_scale: float = 1.0) -> Evaluation:
        d = self.p.decode(X)
        nstep = int(np.ceil(d.keyframe_times[:, upto].max() / self.p.dt_sim - 1e-9))
        ctrl, mocap, _ = self.p.controls(d, nstep)
        traj = self.engine.run(self.state0, ctrl, mocap, copy=False)
        kf = self.p.keyframe_error(d, traj.state, upto, traj.diverged_at)
        end = self.p.end_step(d, upto, nstep)
        survived = np.where(np.isfinite(kf), 1.0, np.clip(traj.diverged_at / (end + 1.0), 0.0, 1.0))
        fitness = kf + self.p.apex_shortfall(d, traj.state, upto) + self.p.regularizers(d, upto, beta_scale)
        return Evaluation(fitness=fitness, kf_error=kf, decoded=d, state=traj.state, survived=survived)

    def motion_of(self, ev: Evaluation, i: int, upto: int) -> tuple[np.ndarray, np.ndarray]:
        """(times, qpos) of candidate `i`'s rollout in `ev` up to its keyframe `upto` — the motion `_solution`
        replays for it (a live preview of the best so far). Only for a candidate with a finite fitness: one
        that blew up before its keyframe scores +inf."""
        end = int(self.p.end_step(ev.decoded, upto, ev.state.shape[1])[i]) + 1
        return self.from_start(ev.state[i, :end])

    def from_start(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(times, qpos) of a rollout's states `rows` with the start state before them."""
        times = np.concatenate([[float(self.state0[0])], rows[:, 0]])
        return times, np.concatenate([self.state0[self.p.qpos_slice][None], rows[:, self.p.qpos_slice]])

    def strategy(self, x0: np.ndarray, stds: np.ndarray, seed: int) -> cma.CMAEvolutionStrategy:
        """A pycma strategy around x0 with per-parameter initial stds (× sigma0), full or separable."""
        s = self.p.s
        return cma.CMAEvolutionStrategy(x0, s.sigma0, {
            "popsize": s.population, "seed": seed, "verbose": -9, "CMA_stds": list(stds),
            "CMA_diagonal": bool(s.cma_diagonal), "tolfun": 1e-9, "tolx": 1e-9})

    def run(self, seed: int, on_generation=None, on_stage=None, attempt: int = 0):
        """Optimize; returns (best x, its fitness, History, samples evaluated). `attempt` > 0 starts
        the search over with noise of its own (a seed's first search is attempt 0)."""
        s, p = self.p.s, self.p
        K = len(p.kfs.qpos)
        stages = list(range(1, K)) if s.curriculum else [K - 1]
        x_best = np.zeros(p.ndim)
        f_best = np.inf
        hist = History()
        samples, start = 0, time.perf_counter()
        param_time = p.time_of_parameter()
        prev_end = 0.0
        for si, upto in enumerate(stages):
            final = si == len(stages) - 1
            stds = np.ones(p.ndim)
            if si > 0:
                stds[param_time < prev_end] = EARLIER_STD
            es = self.strategy(x_best, stds, int(seed) * 1009 + si + 1 + attempt * ATTEMPT_STRIDE)
            var0 = float(np.mean(es.stds ** 2))
            # Early stages are short and only set the final stage up: each may take at most
            # STAGE_SHARE of the budget; the full-horizon stage gets the rest.
            stage_budget = s.samples * STAGE_SHARE if not final else s.samples - samples
            stage_samples, f_best = 0, np.inf
            stage_wall0, scale = time.perf_counter() - start, 1.0
            while True:
                if final and s.lambda_beta_start < 1.0:
                    done = max(stage_samples / max(stage_budget, 1.0),
                               (time.perf_counter() - start - stage_wall0) / max(s.max_wall_s - stage_wall0, 1e-9))
                    new = s.lambda_beta_start ** max(0.0, 1.0 - done / ANNEAL_SHARE)
                    if new != scale:  # the objective changed: bests under the old one no longer compare
                        scale, f_best = new, np.inf
                X = np.asarray(es.ask())
                ev = self.evaluate(X, upto, scale)
                fit = ev.for_cma()
                es.tell(list(X), list(fit))
                samples += len(X)
                stage_samples += len(X)
                i = int(np.argmin(fit))
                motion = None
                if fit[i] < f_best:
                    f_best, x_best = float(fit[i]), X[i].copy()
                    motion = self.motion_of(ev, i, upto) if np.isfinite(ev.fitness[i]) else None
                wall = time.perf_counter() - start
                hist.samples.append(samples)
                hist.wall_s.append(wall)
                hist.best.append(f_best)
                hist.stage.append(upto)
                hist.beta_scale.append(scale)
                if on_generation:
                    on_generation(samples, f_best, upto, motion)  # motion: a new best's, else None
                out_of_budget = samples + s.population > s.samples or wall > s.max_wall_s
                if out_of_budget and final:
                    break
                if not final and (float(np.mean(es.stds ** 2)) < VARIANCE_DROP * var0
                                  or stage_samples >= stage_budget or out_of_budget):
                    break
                if final and es.stop() and scale == 1.0:
                    break
            prev_end = float(p.decode(x_best).keyframe_times[0, upto])
            if on_stage:
                on_stage(upto, x_best, f_best)
        return x_best, f_best, hist, samples
