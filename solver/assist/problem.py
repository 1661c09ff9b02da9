"""The optimization problem of assisted keyframes: parameter vector ↔ controls, and eq. (4).

Parameters Φ = {Δθ, β, Δt} live in one CMA-ES vector x (all means start at 0):
Δθ = θ_scale · x (n_a knots per actuated joint, piecewise linear in time); β = clip(x, 0, 1)
(n_a piecewise-constant values, one global value, or none); Δt_k = min + (max − min)(clip(x, −1, 1) + 1)/2
for each free interval (fixed intervals are not optimized).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formats.pose_keyframes import Keyframes, pose_error
from ..formats.settings import AssistSettings
from ..physics.airborne import clearance_of, in_the_air
from ..physics.model import BuiltModel
from ..physics.rollout import state_layout
from .keyframe_motion import Reference


@dataclass
class Decoded:
    dtheta: np.ndarray  # (P, n_a, nu)
    beta: np.ndarray  # (P, n_beta)
    dt: np.ndarray  # (P, K-1) all intervals, fixed ones included
    keyframe_times: np.ndarray  # (P, K), column 0 = 0


class Problem:
    """Everything needed to score a population: layout, reference, controls, objective."""

    def __init__(self, built: BuiltModel, kfs: Keyframes, settings: AssistSettings):
        self.built, self.kfs, self.s = built, kfs, settings
        m = built.model
        self.dt_sim = m.opt.timestep
        self.nu = built.nu_character
        # Actuator i drives hinge joint column joint_col[i] of the keyframe joint vector.
        hinge_names = [j.name for j in built.scene.joints() if j.type == "hinge"]
        self.joint_col = np.array([hinge_names.index(m.joint(int(m.actuator_trnid[a, 0])).name)
                                   for a in range(self.nu)])
        self.lo, self.hi = m.actuator_ctrlrange[:self.nu, 0], m.actuator_ctrlrange[:self.nu, 1]
        self.n_free = int(kfs.free.sum())
        self.n_beta = {"time": settings.pieces, "global": 1, "none": 0}[settings.beta_mode]
        self.ndim = settings.pieces * self.nu + self.n_beta + self.n_free
        self.t_max = float(kfs.dt_max.sum())
        self.knot_times = np.linspace(0.0, self.t_max, settings.pieces)
        self.reference = Reference(built, kfs, built.assist_bodies)
        self.joint_lead, self.assist_lead = self._leads() if settings.reference_lead else (np.zeros(self.nu), 0.0)
        lay = state_layout(m)
        self.qpos_slice = lay["qpos"]
        root = int(m.jnt_qposadr[m.joint("root").id])
        self.char_cols = np.arange(root, root + kfs.qpos.shape[1])
        self.airborne = self._airborne_keys() if settings.w_apex > 0 else []

    def _airborne_keys(self) -> list[int]:
        """The keys whose pose is in the air (`physics.airborne`), the start pose not counted."""
        poses = np.tile(np.asarray(self.built.initial_qpos(), dtype=float), (len(self.kfs.qpos), 1))
        poses[:, self.char_cols] = self.kfs.qpos
        return [k for k, _ in in_the_air(clearance_of(self.built.model, self.built.character_bodies), list(poses))]

    def _leads(self) -> tuple[np.ndarray, float]:
        """How far ahead (s) each servo and the assist springs read the reference.

        A servo's force kp(θ* − θ) − kv·θ̇ follows a target moving at speed v with a lag of v·kv/kp; with
        θ* = θ_ref(t + kv/kp) it is kp(θ_ref − θ) + kv(θ̇_ref − θ̇) wherever the reference is linear in
        time (between keyframes), i.e. damping relative to the reference instead of to rest. kv counts
        the joint's own damping; the assist springs likewise use kv/kp per kg."""
        m = self.built.model
        kp = m.actuator_gainprm[:self.nu, 0]
        kv = -m.actuator_biasprm[:self.nu, 2]
        damping = m.dof_damping[m.jnt_dofadr[m.actuator_trnid[:self.nu, 0]]]
        joint = np.round((kv + damping) / np.maximum(kp, 1e-9), 9)  # equal gains, equal lead
        assist = self.s.assist_kv_per_kg / self.s.assist_kp_per_kg if self.s.assist_kp_per_kg > 0 else 0.0
        return joint, assist

    # -- parameters ------------------------------------------------------------------------------
    def decode(self, x: np.ndarray) -> Decoded:
        x = np.atleast_2d(x)
        P, n = x.shape[0], self.s.pieces * self.nu
        dtheta = self.s.theta_scale * x[:, :n].reshape(P, self.s.pieces, self.nu)
        beta = np.clip(x[:, n:n + self.n_beta], 0.0, 1.0)
        dt = np.broadcast_to(self.kfs.dt_min, (P, len(self.kfs.dt_min))).copy()
        if self.n_free:
            u = (np.clip(x[:, n + self.n_beta:], -1.0, 1.0) + 1.0) / 2.0
            free = self.kfs.free
            dt[:, free] = self.kfs.dt_min[free] + u * (self.kfs.dt_max[free] - self.kfs.dt_min[free])
        times = np.concatenate([np.zeros((P, 1)), np.cumsum(dt, axis=1)], axis=1)
        return Decoded(dtheta, beta, dt, times)

    def time_of_parameter(self) -> np.ndarray:
        """For each coordinate of x, the time it starts to matter (for the curriculum's variances)."""
        t = [np.repeat(self.knot_times, self.nu)]
        if self.s.beta_mode == "time":
            t.append(np.arange(self.s.pieces) * self.t_max / self.s.pieces)
        elif self.s.beta_mode == "global":
            t.append(np.zeros(1))
        start = np.concatenate([[0.0], np.cumsum(self.kfs.dt_min)])[:-1]
        t.append(start[self.kfs.free])
        return np.concatenate(t)

    # -- controls ----------------------------------------------------------------------------------
    def beta_per_step(self, beta: np.ndarray, times: np.ndarray) -> np.ndarray:
        P = beta.shape[0]
        if self.n_beta == 0:
            return np.zeros((P, len(times)))
        if self.n_beta == 1:
            return np.broadcast_to(beta, (P, len(times))).copy()
        idx = np.minimum((times / self.t_max * self.s.pieces).astype(int), self.s.pieces - 1)
        return beta[:, idx]

    def controls(self, d: Decoded, nstep: int, beta_off: bool = False):
        """Per-step ctrl (PD targets then β for every assist channel) and mocap targets."""
        times = np.arange(nstep) * self.dt_sim  # control of step i acts from t = i·dt
        # lead → (interval, phase): servos with equal gains, and springs with the same lead, share one lookup
        located = {}

        def locate(lead):
            if lead not in located:
                located[lead] = self.reference.locate(d.keyframe_times, times + lead)
            return located[lead]
        ref = np.empty((d.keyframe_times.shape[0], nstep, self.nu))  # (P, T, nu)
        for lead in np.unique(self.joint_lead):
            cols = self.joint_lead == lead
            ref[..., cols] = self.reference.joint_angles(*locate(float(lead)))[..., self.joint_col[cols]]
        tc = np.clip(times, 0.0, self.t_max)  # piecewise-linear residual between the shared knots
        i0 = np.clip(np.searchsorted(self.knot_times, tc, side="right") - 1, 0, len(self.knot_times) - 2)
        w = ((tc - self.knot_times[i0]) / (self.knot_times[i0 + 1] - self.knot_times[i0]))[None, :, None]
        resid = (1 - w) * d.dtheta[:, i0] + w * d.dtheta[:, i0 + 1]
        targets = np.clip(ref + resid, self.lo, self.hi)
        beta = np.zeros((len(targets), nstep)) if beta_off else self.beta_per_step(d.beta, times)
        nassist = len(self.built.assist_bodies)
        ctrl = np.concatenate([targets, np.repeat(beta[..., None], nassist, axis=2)], axis=2)
        mocap = self.reference.keypoint_targets(*locate(float(self.assist_lead)))
        return ctrl, mocap, beta

    def nstep_for(self, d: Decoded) -> int:
        return int(np.ceil(d.keyframe_times[:, -1].max() / self.dt_sim - 1e-9))

    # -- eq. (4) -------------------------------------------------------------------------------------
    def end_step(self, d: Decoded, upto: int, nstep: int) -> np.ndarray:
        """(P,) the rollout step whose state is each candidate's pose at keyframe `upto`: its last
        step that matters."""
        return np.clip(np.round(d.keyframe_times[:, upto] / self.dt_sim).astype(int) - 1, 0, nstep - 1)

    def keyframe_error(self, d: Decoded, state: np.ndarray, upto: int,
                       diverged_at: np.ndarray | None = None) -> np.ndarray:
        """Σ_k w_k ‖q̂^k − q_{t_k}‖² over keyframes 1..upto, each at the candidate's own time; +inf
        for a candidate whose rollout diverged (`diverged_at`, from the rollout engine) at or before
        its keyframe `upto` (a blow-up after its own end does not matter: its motion ends there)."""
        P = state.shape[0]
        qpos = state[..., self.qpos_slice][..., self.char_cols]  # (P, T, nq_char)
        err = np.zeros(P)
        for k in range(1, upto + 1):
            step = self.end_step(d, k, qpos.shape[1])
            q = qpos[np.arange(P), step]
            err += self.kfs.weights[k] * pose_error(q, self.kfs.qpos[k])
        bad = ~np.isfinite(err)
        if diverged_at is not None:
            bad |= (diverged_at >= 0) & (diverged_at <= self.end_step(d, upto, qpos.shape[1]))
        else:
            bad |= ~np.all(np.isfinite(qpos), axis=(1, 2))
        return np.where(bad, np.inf, err)

    def apex_shortfall(self, d: Decoded, state: np.ndarray, upto: int) -> np.ndarray:
        """Σ w_apex · w_k · h² over the airborne keys k ≤ `upto`, h how far the root's highest point between
        the keys around k (the candidate's own times; up to k itself while k is the last key scored) stays
        below the keyed pose's root height (m). The keyframe error compares poses at the key's instant
        only: a jump whose pose there is close rose 17 of the 25 cm keyed, and an animator judges the
        apex (`physics.airborne`)."""
        P, T = state.shape[:2]
        out = np.zeros(P)
        keys = [k for k in self.airborne if k <= upto]
        if not keys:
            return out
        z = state[..., self.qpos_slice][..., self.char_cols[2]]  # (P, T) root height
        t = (np.arange(T) + 1) * self.dt_sim  # the time of each step's state (`end_step`)
        for k in keys:
            lo = d.keyframe_times[:, k - 1][:, None]
            hi = d.keyframe_times[:, min(k + 1, upto)][:, None]
            within = (t[None, :] > lo) & (t[None, :] <= hi)
            highest = np.max(np.where(within, z, -np.inf), axis=1)
            short = np.maximum(self.kfs.qpos[k][2] - highest, 0.0)
            out += self.s.w_apex * self.kfs.weights[k] * np.where(np.isfinite(short), short, 0.0) ** 2
        return out

    def regularizers(self, d: Decoded, upto: int, beta_scale: float = 1.0) -> np.ndarray:
        """λ_β Σβ² + λ_Δθ Σ‖Δθ‖² + λ_Δt ΣΔt² over the parameters that act before keyframe `upto`."""
        t_end = d.keyframe_times[:, upto][:, None]
        knot_on = self.knot_times[None, :] <= t_end  # (P, n_a)
        internal = np.sum(np.sum(d.dtheta ** 2, axis=2) * knot_on, axis=1)
        if self.n_beta == self.s.pieces:
            starts = np.arange(self.s.pieces) * self.t_max / self.s.pieces
            assist = np.sum(d.beta ** 2 * (starts[None, :] < t_end), axis=1)
        else:
            assist = np.sum(d.beta ** 2, axis=1)
        timing = np.sum(d.dt[:, :upto] ** 2, axis=1)
        return beta_scale * self.s.lambda_beta * assist + self.s.lambda_dtheta * internal + self.s.lambda_dt * timing
