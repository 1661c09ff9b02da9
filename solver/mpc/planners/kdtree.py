"""The adaptive kD-tree of the SMC sampler (Hämäläinen et al. 2014, §3.3; Hämäläinen et al. 2006):
the parameter box [lo, hi] split into hypercube leaves, one sample in each.

Inserting a sample splits the leaf it lands in midway between the new sample and the one already
there, along the dimension where the two differ most relative to the leaf's width. A leaf's volume
then measures how densely the samples lie around it, so a leaf's weight w_i = f(x_i) · V_i (eq. (1))
is a one-sample estimate of the fitness integral over the leaf, and drawing leaves ∝ w_i and
samples N(x_i, diag((σ d_ij)²)) from them samples the fitness adaptively (Algorithm 1).

Volumes are kept as logarithms relative to the whole box (the root's volume is 1): in the planner's
tens of dimensions the volumes themselves underflow.
"""
from __future__ import annotations

import numpy as np


class KDTree:
    """Leaves of the box [lo, hi], one sample each. Dimensions where lo == hi are never split and
    count 1 in every volume."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        self.lo = np.asarray(lo, dtype=float).ravel()
        self.hi = np.asarray(hi, dtype=float).ravel()
        self.span = self.hi - self.lo
        self.free = self.span > 0
        dim = self.lo.size
        self._n = 0  # rows in use of the arrays below, which grow by doubling
        self._points = np.empty((16, dim))
        self._cell_lo = np.empty((16, dim))  # per leaf (= per sample, in insertion order)
        self._cell_hi = np.empty((16, dim))
        # Inner nodes: split dimension and value, children; a child < 0 is the leaf −(child + 1).
        self._dim: list[int] = []
        self._val: list[float] = []
        self._below: list[int] = []
        self._above: list[int] = []
        self._leaf_parent: list[tuple[int, bool]] = []  # per leaf: (inner node, on its "above" side); (-1, …) = root

    def __len__(self) -> int:
        return self._n

    @property
    def points(self) -> np.ndarray:
        """(n, dim) the samples, in insertion order (leaf i holds sample i)."""
        return self._points[:self._n]

    @property
    def cell_lo(self) -> np.ndarray:
        return self._cell_lo[:self._n]

    @property
    def cell_hi(self) -> np.ndarray:
        return self._cell_hi[:self._n]

    def leaf_of(self, x: np.ndarray) -> int:
        """The leaf whose hypercube holds x (points on a split go above it)."""
        if not self._n:
            raise ValueError("the tree is empty")
        if not self._dim:
            return 0
        node = 0
        while True:
            child = self._above[node] if x[self._dim[node]] >= self._val[node] else self._below[node]
            if child < 0:
                return -child - 1
            node = child

    def insert(self, x: np.ndarray) -> int:
        """Add sample x (clipped into the box); its leaf's index, which is its index in `points`.
        A sample equal to the one of the leaf it lands in is not added: that leaf's index is returned."""
        x = np.clip(np.asarray(x, dtype=float).ravel(), self.lo, self.hi)
        n = self._n
        if n == 0:
            self._append(x, self.lo.copy(), self.hi.copy(), (-1, False))
            return 0
        j = self.leaf_of(x)
        old = self._points[j]
        width = self._cell_hi[j] - self._cell_lo[j]
        gap = np.where(width > 0, np.abs(x - old) / np.where(width > 0, width, 1.0), 0.0)
        d = int(np.argmax(gap))
        if gap[d] == 0.0:
            return j
        mid = 0.5 * (x[d] + old[d])
        lo_new, hi_new = self._cell_lo[j].copy(), self._cell_hi[j].copy()
        new_above = x[d] > old[d]
        if new_above:
            self._cell_hi[j, d] = mid
            lo_new[d] = mid
        else:
            self._cell_lo[j, d] = mid
            hi_new[d] = mid
        # leaf j becomes an inner node's child on one side, the new leaf on the other
        node = len(self._dim)
        parent, above = self._leaf_parent[j]
        if parent >= 0:
            (self._above if above else self._below)[parent] = node
        self._dim.append(d)
        self._val.append(mid)
        self._below.append(-(n + 1) if not new_above else -(j + 1))
        self._above.append(-(n + 1) if new_above else -(j + 1))
        self._leaf_parent[j] = (node, not new_above)
        self._append(x, lo_new, hi_new, (node, new_above))
        return n

    def _append(self, x, lo, hi, parent) -> None:
        if self._n == len(self._points):
            grow = lambda a: np.concatenate([a, np.empty_like(a)])  # noqa: E731
            self._points, self._cell_lo, self._cell_hi = grow(self._points), grow(self._cell_lo), grow(self._cell_hi)
        self._points[self._n], self._cell_lo[self._n], self._cell_hi[self._n] = x, lo, hi
        self._n += 1
        self._leaf_parent.append(parent)

    def widths(self) -> np.ndarray:
        """(n, dim) each leaf's width along each dimension."""
        return self.cell_hi - self.cell_lo

    def log_volumes(self) -> np.ndarray:
        """(n,) log of each leaf's volume as a share of the box's."""
        if not self.free.any():
            return np.zeros(self._n)
        share = self.widths()[:, self.free] / self.span[self.free]
        return np.log(share).sum(axis=1)


def leaf_probabilities(log_fitness: np.ndarray, log_volumes: np.ndarray) -> np.ndarray:
    """Selection probabilities ∝ w_i = f_i · V_i from log f and log V (a leaf with f = 0, log f = −inf,
    is never chosen); uniform over the leaves if every weight is zero."""
    log_w = np.asarray(log_fitness, dtype=float) + np.asarray(log_volumes, dtype=float)
    if not np.isfinite(log_w).any():
        return np.full(len(log_w), 1.0 / len(log_w))
    w = np.exp(log_w - np.max(log_w[np.isfinite(log_w)]))
    w[~np.isfinite(log_w)] = 0.0
    return w / w.sum()
