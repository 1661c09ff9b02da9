"""Particles across runs: the sequential Monte Carlo idea (Hämäläinen et al. 2014) applied to whole
MPC runs, segment by segment.

K particles — whole agents — attempt each keyframe segment from checkpoints taken where the last
segment ended. Those that reach the keyframe survive and are resampled by cost (systematic
resampling over soft-min weights); a particle drawn more than once continues with a fresh noise
stream, so the copies explore differently. If no particle completes a segment, the segment is
retried with twice the planning effort and fresh noise (`segment_retries` times), then the solve backs up
one keyframe (`backups` times) and redoes the previous segment with fresh noise (the same noise
would only lead back to the same state) — the first segment, with nothing before it, starts over
itself; past that it stops and reports the
run that got furthest. Every stream derives from the seed, so a solve stays deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...core import schema
from ...formats.solution import Progress
from ...physics.rollout import RolloutEngine
from ..agent import Agent, AgentRun, AgentSetup
from .checkpoint import Checkpoint
from .segments import LocalSegments, SegmentJob, Segments, attempt_report


def softmin_weights(costs: np.ndarray) -> np.ndarray:
    """Weights ∝ exp(−(c − min c) / spread): the cheaper, the likelier; uniform when all are equal."""
    c = np.asarray(costs, dtype=float)
    finite = np.isfinite(c)
    c = np.where(finite, c, c[finite].max() if finite.any() else 0.0)  # no cost known: as bad as the worst
    spread = float(np.std(c))
    w = np.exp(-(c - c.min()) / spread) if spread > 0 else np.ones_like(c)
    return w / w.sum()


def systematic_resample(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` indices drawn in proportion to `weights` with one uniform number (low variance: each index
    appears ⌊n·w⌋ or ⌈n·w⌉ times), in ascending order."""
    cum = np.cumsum(weights)
    cum[-1] = 1.0
    return np.searchsorted(cum, (rng.random() + np.arange(n)) / n, side="right")


def retry_press(retry_contact: float, attempt: int) -> float:
    """How much more than its keyframe try `attempt` of a segment weighs the contact term: the first
    try and the first retry (twice the effort, fresh noise) the keyframe's own weight, each later
    retry `retry_contact` more per retry past the first. A seated shuffle that settles short of its
    mark gets there only pressed; a climb's first retry reaches its mark three times in four as
    keyed and half as often pressed (benchmarks/RESULTS.md), so the press comes second."""
    return 1.0 + retry_contact * max(attempt - 1, 0)


def fresh_stream(seed: int, *key: int) -> dict:
    """The state of a noise stream derived from the seed and `key` (segment, attempt, particle…)."""
    return np.random.default_rng([seed, *key]).bit_generator.state


@dataclass
class ParticleLog:
    """What the particle layer did: per attempt of a segment, how many particles reached its keyframe,
    and what each particle did (`segments.attempt_report`)."""
    attempts: list = field(default_factory=list)
    backups: int = 0
    furthest: int = 0  # keyframes reached by the run that got furthest
    lineages: int = 0  # distinct first-segment ancestors among the final particles
    stopped_at: int | None = None  # the keyframe a run that stopped short failed for, its retries and back-ups spent
    # keyframes edited while solving: which, by what name, and whether taken (no particle had started it)
    edits: list = field(default_factory=list)
    keyframes: list = field(default_factory=list)  # the solve's keyframes at its end, those appended and edited in
    iterations: int = 0  # planning iterations spent by every particle, failed attempts included
    # the cheapest run of each other lineage that reached the last keyframe, cheapest first: the
    # seed's alternative solutions (motions that differ from the first segment on)
    alternatives: list = field(default_factory=list)

    def summary(self) -> dict:
        out = {"attempts": self.attempts, "backups": self.backups, "furthest_keyframe": self.furthest,
               "lineages": self.lineages, "iterations": self.iterations, "stopped_at": self.stopped_at}
        if self.edits:
            out["edits"] = self.edits
        return out


def run_particles(setup: AgentSetup, seed: int, engine: RolloutEngine, progress=None, poll_keyframes=None,
                  segments: Segments | None = None, retried: int | None = None) -> tuple[AgentRun, ParticleLog]:
    """One seed's solve with `settings.particles` particles; the best final particle's run (or the
    run that got furthest) and what the particles did. With one particle and no failure this is
    the single run, byte for byte. `poll_keyframes` returns the keyframes appended or edited while solving
    (`methods.contact.keyframe_changes`); they are taken between segments: an appended one after the
    others, an edited one where the segment to run next is its own or an earlier one. The
    setup's job says whose keyframes they are (`jobs`). `segments` runs each batch of segments
    (default: here, one after another); the result does not depend on where. The segment of keyframe
    `retried` gets no retries (another run already retried it in vain)."""
    return _ParticleSolve(setup, seed, engine, progress, segments, retried).run(poll_keyframes)


class _ParticleSolve:
    """One seed's particles from segment to segment: where each segment starts (`starts`, checkpoints
    per keyframe index), which first-segment particle each descends from (`ancestry`), and the run
    that got furthest."""

    def __init__(self, setup: AgentSetup, seed: int, engine: RolloutEngine, progress, segments, retried):
        self.setup, self.seed, self.engine, self.progress, self.retried = setup, seed, engine, progress, retried
        self.settings = setup.settings.recovery
        self.n = self.settings.particles
        self.keyframes = list(setup.keyframes)
        self.log = ParticleLog()
        self.segments = segments if segments is not None else LocalSegments(self.resume)
        first = setup.agent(seed, engine).checkpoint()
        self.starts = {0: [_with_stream(first, fresh_stream(seed, 0, 0, 0, i)) if i else first
                           for i in range(self.n)]}
        self.ancestry = {0: list(range(self.n))}
        self.furthest = None

    def resume(self, cp: Checkpoint) -> Agent:
        return self.setup.resume(cp, self.engine, self.keyframes)  # the keyframes appended so far included

    def run(self, poll_keyframes) -> tuple[AgentRun, ParticleLog]:
        k, survivors, chosen, redo, log = 0, [], [], None, self.log
        while True:
            changes = poll_keyframes() if poll_keyframes is not None else None
            if changes:
                self.take(changes, k)
            if k >= len(self.keyframes):
                break
            survivors = self.segment(k, redo)
            if not survivors:
                if log.backups < self.settings.backups:
                    log.backups += 1
                    # redo the previous segment from its start with fresh noise; the first segment has
                    # nothing before it, so it starts again itself (its retries again too)
                    k = redo = max(k - 1, 0)
                    continue
                break
            chosen = self.resample(k, survivors)
            k += 1
            for old in [j for j in self.starts if j < k - (self.settings.backups - log.backups)]:
                del self.starts[old]  # no back-up left can return that far: its checkpoints go (memory)
        log.keyframes = self.keyframes
        if k >= len(self.keyframes):
            return self.finish(k, survivors, chosen), log
        log.furthest, log.stopped_at = self.furthest.index, k
        return self.resume(self.furthest.checkpoint).result(), log

    def take(self, changes: list, k: int) -> None:
        """Keyframes appended or edited while solving, with segment `k` next: every checkpoint carries them on,
        as a single run's tracker would; an edit of a keyframe before `k` is not taken (the seed has reached
        it), and is logged either way."""
        agents = {level: [self.setup.resume(cp, self.engine, self.keyframes) for cp in cps]
                  for level, cps in self.starts.items()}
        every = [a for level in agents.values() for a in level]
        keyframes, done = list(self.keyframes), []
        for index, keyframe in changes:
            if index is not None:
                # taken only where no particle's start has begun it (one may have passed it with the one before)
                ok = k <= index < len(keyframes) and all(agent.may_replace(index) for agent in every)
                self.log.edits.append({"keyframe": int(index), "name": keyframe.name, "taken": ok})
                if not ok:
                    continue
                keyframes[index] = keyframe
            else:
                keyframes.append(keyframe)
            for agent in every:
                _carry(agent, index, keyframe)
            done.append((index, keyframe))
        if not done:
            return
        if self.furthest is not None:  # one that got past an edited keyframe is no longer a run of this solve
            agent = self.setup.resume(self.furthest.checkpoint, self.engine, self.keyframes)
            ok = all(_carry(agent, i, kf) for i, kf in done)
            self.furthest = replace(self.furthest, checkpoint=agent.checkpoint()) if ok else None
        self.starts = {level: [agent.checkpoint() for agent in level_agents] for level, level_agents in agents.items()}
        self.keyframes = keyframes

    def segment(self, k: int, redo: int | None) -> list:
        """Every particle attempts segment `k` (retried with fresh noise and more effort while none
        reaches its keyframe); the (particle index, outcome) of those that do."""
        log, settings, seed, keyframes = self.log, self.settings, self.seed, self.keyframes
        nkf = len(keyframes)
        appended = [schema.to_dict(kf) for kf in keyframes[len(self.setup.keyframes):]]
        edited = {str(i): schema.to_dict(kf) for i, (kf, was) in enumerate(zip(keyframes, self.setup.keyframes))
                  if kf != was}
        survivors = []
        for attempt in range((0 if k == self.retried else settings.segment_retries) + 1):
            fresh = attempt or k == redo  # a retry, or a backed-up segment: not the noise that led here
            jobs = [SegmentJob(cp, k, fresh_stream(seed, k, attempt, log.backups, i + 1) if fresh else None,
                               2 ** attempt, appended, retry_press(settings.retry_contact, attempt), edited)
                    for i, cp in enumerate(self.starts[k])]
            retries = sum(a["attempt"] > 0 for a in log.attempts) + (attempt > 0)

            def report(j: int, spent_before: int, jobs=jobs, retries=retries, attempt=attempt):
                return _segment_progress(self.progress, k, j, self.n, nkf,
                                         log.iterations + spent_before - jobs[j].checkpoint.meta["iterations"],
                                         retries, log.backups, attempt)
            tries = []
            for i, outcome in enumerate(self.segments.run(jobs, report)):
                log.iterations += outcome.iterations
                tries.append(attempt_report(jobs[i], outcome, keyframes[k].tolerance))
                if outcome.reached:
                    survivors.append((i, outcome))
                elif self.furthest is None or outcome.further_than(self.furthest):
                    self.furthest = outcome
            best = min((o.last_cost for _, o in survivors if o.last_cost is not None), default=None)
            log.attempts.append({"keyframe": k, "attempt": attempt, "survivors": len(survivors),
                                 "best_cost": None if best is None else round(float(best), 6), "particles": tries})
            if survivors:
                break
        return survivors

    def resample(self, k: int, survivors: list) -> np.ndarray:
        """The particles that start segment k + 1, drawn from the survivors of segment k by cost (a copy
        drawn twice continues with noise of its own); the survivors' indices drawn."""
        seed, backups = self.seed, self.log.backups
        costs = np.array([o.last_cost if o.last_cost is not None else np.inf for _, o in survivors])
        chosen = systematic_resample(softmin_weights(costs), self.n, np.random.default_rng([seed, k, backups,
                                                                                            1_000_003]))
        checkpoints, seen = [], set()
        for j, s in enumerate(chosen):
            cp = survivors[s][1].checkpoint
            if s in seen:  # a copy: the same state, its own noise from here on
                cp = _with_stream(cp, fresh_stream(seed, k + 1, backups, j, 2))
            seen.add(int(s))
            checkpoints.append(cp)
        self.starts[k + 1] = checkpoints
        self.ancestry[k + 1] = [self.ancestry[k][survivors[s][0]] for s in chosen]
        return chosen

    def finish(self, k: int, survivors: list, chosen: np.ndarray) -> AgentRun:
        """Every final particle reached the last keyframe: the cheapest whole run wins, and each other
        lineage's cheapest run is an alternative."""
        distinct = sorted({int(s) for s in chosen})  # copies share one run
        runs = [self.resume(survivors[s][1].checkpoint).result() for s in distinct]
        costs = [float(np.mean(r.cost_per_step)) for r in runs]
        lineage = {int(s): self.ancestry[k][j] for j, s in enumerate(chosen)}
        order = sorted(range(len(runs)), key=lambda i: costs[i])  # ties: the lower particle first
        firsts = {}
        for i in order:  # each lineage's cheapest run, cheapest lineage first
            firsts.setdefault(lineage[distinct[i]], i)
        self.log.furthest, self.log.lineages = len(self.keyframes), len(set(self.ancestry[k]))
        self.log.alternatives = [runs[i] for i in list(firsts.values())[1:]]
        return runs[order[0]]


def _segment_progress(progress, k: int, i: int, n: int, nkf: int, iterations_before: int, retries: int = 0,
                      backups: int = 0, attempt: int = 0):
    """The agent's per-control-step progress as the whole solve's: segment k of nkf, particle i of n
    (the effort of earlier particles and attempts included, the retries and back-ups so far, and which
    try at this segment it is)."""
    if progress is None:
        return None

    def report(p: Progress) -> None:
        within = min(max(p.fraction * nkf - k, 0.0), 1.0)  # the agent's fraction of its current keyframe
        progress(Progress(min(1.0, (k + (i + within) / n) / nkf), p.cost, reached=k, keyframes=nkf,
                          iterations=p.iterations + iterations_before, retries=retries, backups=backups,
                          motion_time=p.motion_time, motion=p.motion if i == 0 else None,  # one particle shown
                          reached_times=p.reached_times if i == 0 else None, attempt=attempt))
    return report


def _carry(agent: Agent, index: int | None, keyframe) -> bool:
    """One change to the solve's keyframes carried into `agent`'s run: appended (index None), or keyframe `index`
    replaced where the run may still take it (`Agent.may_replace`); whether it was."""
    if index is None:
        agent.extend_keyframes([keyframe])
        return True
    return agent.replace_keyframe(index, keyframe)


def _with_stream(cp: Checkpoint, stream: dict) -> Checkpoint:
    return Checkpoint(dict(cp.meta, rng=stream), cp.arrays)
