"""Spline knots → per-step control signals, for a whole batch at once.

Kinds follow MuJoCo MPC's planners: `zero` (hold the previous knot), `linear`, and `cubic` (Hermite
with finite-difference slopes: the mean of the neighbouring secants, one-sided at the ends).
Times outside the knot span hold the end values.
"""
from __future__ import annotations

import numpy as np

KINDS = ("zero", "linear", "cubic")


def _secant_slopes(knot_times: np.ndarray, values: np.ndarray) -> np.ndarray:
    dt = np.diff(knot_times)  # (K-1,)
    secant = np.diff(values, axis=-2) / dt[:, None]  # (..., K-1, nu)
    slopes = np.empty_like(values)
    if values.shape[-2] == 1:
        slopes[...] = 0.0
        return slopes
    slopes[..., 0, :] = secant[..., 0, :]
    slopes[..., -1, :] = secant[..., -1, :]
    slopes[..., 1:-1, :] = 0.5 * (secant[..., :-1, :] + secant[..., 1:, :])
    return slopes


def evaluate(knot_times, values, times, kind: str = "cubic") -> np.ndarray:
    """Evaluate splines at `times`.

    knot_times: (K,) strictly increasing; values: (..., K, nu); times: (T,).
    Returns (..., T, nu).
    """
    if kind not in KINDS:
        raise ValueError(f"spline kind must be one of {KINDS}, got {kind!r}")
    knot_times = np.asarray(knot_times, dtype=float)
    values = np.asarray(values, dtype=float)
    times = np.asarray(times, dtype=float)
    if knot_times.ndim != 1 or values.shape[-2] != knot_times.shape[0]:
        raise ValueError(f"values have {values.shape[-2]} knots but knot_times has {knot_times.shape}")
    if knot_times.size > 1 and np.any(np.diff(knot_times) <= 0):
        raise ValueError("knot_times must be strictly increasing")
    k = knot_times.size
    if k == 1:
        return np.broadcast_to(values, values.shape[:-2] + (times.size, values.shape[-1])).copy()
    t = np.clip(times, knot_times[0], knot_times[-1])
    i = np.clip(np.searchsorted(knot_times, t, side="right") - 1, 0, k - 2)  # interval index per time
    t0, t1 = knot_times[i], knot_times[i + 1]
    h = t1 - t0
    s = ((t - t0) / h)[:, None]  # (T, 1) phase within the interval
    v0, v1 = values[..., i, :], values[..., i + 1, :]
    if kind == "zero":
        return np.where(s >= 1.0, v1, v0)
    if kind == "linear":
        return v0 + s * (v1 - v0)
    m = _secant_slopes(knot_times, values)
    m0, m1 = m[..., i, :], m[..., i + 1, :]
    s2, s3 = s * s, s * s * s
    h00, h10, h01, h11 = 2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2
    return h00 * v0 + h10 * h[:, None] * m0 + h01 * v1 + h11 * h[:, None] * m1
