"""Particles across runs: the sequential Monte Carlo idea (Hämäläinen et al. 2014) applied to whole
MPC runs, segment by segment.

K particles — whole agents — attempt each keyframe segment from checkpoints taken where the last
segment ended. Those that reach the keyframe survive and are resampled by cost (systematic
resampling over soft-min weights); a particle drawn more than once continues with a fresh noise
stream, so the copies explore differently. If no particle completes a segment, the segment is
retried with twice the planning effort and fresh noise (`retries` times), then the solve backs up
one keyframe (`backups` times) and redoes the previous segment with fresh noise (the same noise
would only lead back to the same state) — the first segment, with nothing before it, starts over
itself; past that it stops and reports the
run that got furthest. Every stream derives from the seed, so a solve stays deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core import schema
from ...formats.solution import Progress
from ...physics.rollout import RolloutEngine
from ..agent import Agent, AgentRun, AgentSetup
from .checkpoint import Checkpoint, fingerprint
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
    iterations: int = 0  # planning iterations spent by every particle, failed attempts included
    # the cheapest run of each other lineage that reached the last keyframe, cheapest first: the
    # seed's alternative solutions (motions that differ from the first segment on)
    alternatives: list = field(default_factory=list)

    def summary(self) -> dict:
        return {"attempts": self.attempts, "backups": self.backups, "furthest_keyframe": self.furthest,
                "lineages": self.lineages, "iterations": self.iterations, "stopped_at": self.stopped_at}


def run_particles(setup: AgentSetup, seed: int, engine: RolloutEngine, progress=None, poll_keyframes=None,
                  segments: Segments | None = None, retried: int | None = None) -> tuple[AgentRun, ParticleLog]:
    """One seed's solve with `settings.particles` particles; the best final particle's run (or the
    run that got furthest) and what the particles did. With one particle and no failure this is
    the single run, byte for byte. `poll_keyframes` returns keyframes appended while solving; they
    are taken between segments (where the single run would reach them too: after the current). With
    the setup's `reference`, the keyframes are a tracking solve's (`agent.Agent`). `segments` runs each batch
    of segments (default: here, one after another); the result does not depend on where. The
    segment of keyframe `retried` gets no retries (another run already retried it in vain)."""
    settings = setup.settings
    n = settings.particles
    keyframes = list(setup.keyframes)
    given = len(keyframes)
    log = ParticleLog()

    def resume(cp: Checkpoint) -> Agent:
        return setup.resume(cp, engine, keyframes)  # the keyframes appended so far included

    segments = segments if segments is not None else LocalSegments(resume)
    first = setup.agent(seed, engine).checkpoint()
    starts = {0: [_with_stream(first, fresh_stream(seed, 0, 0, 0, i)) if i else first for i in range(n)]}
    ancestry = {0: list(range(n))}
    k, furthest, survivors, chosen, redo = 0, None, [], [], None
    while True:
        new = poll_keyframes() if poll_keyframes is not None else None
        if new:
            keyframes, starts = _appended(starts, keyframes, new, setup, engine)
        if k >= len(keyframes):
            break
        nkf = len(keyframes)
        appended = [schema.to_dict(kf) for kf in keyframes[given:]]
        survivors = []  # (index among this segment's particles, its outcome)
        for attempt in range((0 if k == retried else settings.retries) + 1):
            fresh = attempt or k == redo  # a retry, or a backed-up segment: not the noise that led here
            jobs = [SegmentJob(cp, k, fresh_stream(seed, k, attempt, log.backups, i + 1) if fresh else None,
                               2 ** attempt, appended, retry_press(settings.retry_contact, attempt))
                    for i, cp in enumerate(starts[k])]

            retries = sum(a["attempt"] > 0 for a in log.attempts) + (attempt > 0)

            def report(j: int, spent_before: int, jobs=jobs, nkf=nkf, k=k, retries=retries):
                return _segment_progress(progress, k, j, n, nkf,
                                         log.iterations + spent_before - jobs[j].checkpoint.meta["iterations"],
                                         retries, log.backups)
            tries = []
            for i, outcome in enumerate(segments.run(jobs, report)):
                log.iterations += outcome.iterations
                tries.append(attempt_report(jobs[i], outcome, keyframes[k].tolerance))
                if outcome.reached:
                    survivors.append((i, outcome))
                elif furthest is None or outcome.further_than(furthest):
                    furthest = outcome
            best = min((o.last_cost for _, o in survivors if o.last_cost is not None), default=None)
            log.attempts.append({"keyframe": k, "attempt": attempt, "survivors": len(survivors),
                                 "best_cost": None if best is None else round(float(best), 6), "particles": tries})
            if survivors:
                break
        if not survivors:
            if log.backups < settings.backups:
                log.backups += 1
                # redo the previous segment from its start with fresh noise; the first segment has
                # nothing before it, so it starts again itself (its retries again too)
                k = redo = max(k - 1, 0)
                continue
            break
        costs = np.array([o.last_cost if o.last_cost is not None else np.inf for _, o in survivors])
        rng = np.random.default_rng([seed, k, log.backups, 1_000_003])
        chosen = systematic_resample(softmin_weights(costs), n, rng)
        checkpoints, seen = [], set()
        for j, s in enumerate(chosen):
            cp = survivors[s][1].checkpoint
            if s in seen:  # a copy: the same state, its own noise from here on
                cp = _with_stream(cp, fresh_stream(seed, k + 1, log.backups, j, 2))
            seen.add(int(s))
            checkpoints.append(cp)
        starts[k + 1] = checkpoints
        ancestry[k + 1] = [ancestry[k][survivors[s][0]] for s in chosen]
        k += 1
        for old in [j for j in starts if j < k - (settings.backups - log.backups)]:
            del starts[old]  # no back-up left can return that far: its checkpoints go (memory)
    if k >= len(keyframes):  # every final particle reached the last keyframe: the cheapest whole run wins
        distinct = sorted({int(s) for s in chosen})  # copies share one run
        runs = [resume(survivors[s][1].checkpoint).result() for s in distinct]
        costs = [float(np.mean(r.cost_per_step)) for r in runs]
        lineage = {int(s): ancestry[k][j] for j, s in enumerate(chosen)}
        order = sorted(range(len(runs)), key=lambda i: costs[i])  # ties: the lower particle first
        firsts = {}
        for i in order:  # each lineage's cheapest run, cheapest lineage first
            firsts.setdefault(lineage[distinct[i]], i)
        log.furthest, log.lineages = len(keyframes), len(set(ancestry[k]))
        log.alternatives = [runs[i] for i in list(firsts.values())[1:]]
        return runs[order[0]], log
    log.furthest, log.stopped_at = furthest.index, k
    return resume(furthest.checkpoint).result(), log


def _segment_progress(progress, k: int, i: int, n: int, nkf: int, iterations_before: int, retries: int = 0,
                      backups: int = 0):
    """The agent's per-control-step progress as the whole solve's: segment k of nkf, particle i of n
    (the effort of earlier particles and attempts included, and the retries and back-ups so far)."""
    if progress is None:
        return None

    def report(p: Progress) -> None:
        within = min(max(p.fraction * nkf - k, 0.0), 1.0)  # the agent's fraction of its current keyframe
        progress(Progress(min(1.0, (k + (i + within) / n) / nkf), p.cost, reached=k, keyframes=nkf,
                          iterations=p.iterations + iterations_before, retries=retries, backups=backups))
    return report


def _appended(starts: dict, keyframes: list, new: list, setup: AgentSetup, engine) -> tuple[list, dict]:
    """Keyframes appended while solving: every checkpoint carries them on, as a single run's tracker
    would (a finished run resumes with them from its current time)."""
    extended = keyframes + list(new)
    out = {}
    for level, cps in starts.items():
        out[level] = []
        for cp in cps:
            agent = setup.resume(cp, engine, keyframes)
            agent.extend_keyframes(new)
            agent.fingerprint = fingerprint(setup.built, setup.settings, extended)
            out[level].append(agent.checkpoint())
    return extended, out


def _with_stream(cp: Checkpoint, stream: dict) -> Checkpoint:
    return Checkpoint(dict(cp.meta, rng=stream), cp.arrays)
