"""The SMC planner (Hämäläinen et al. 2014): its kD-tree's leaves, volumes and weights against a
hand-computed small case, its sampling against the mixture it should draw from, a 2-D multimodal toy
where it keeps both modes while predictive sampling collapses to one, its checkpoints, and the
"hold the pose" guess against MuJoCo's own actuator forces."""
import mujoco
import numpy as np
import pytest

from solver.formats.settings import SamplingSettings
from solver.mpc.objectives.contact import Costs
from solver.mpc.planners.base import ControlSpace, make_planner
from solver.mpc.planners.kdtree import KDTree, leaf_probabilities


def test_the_tree_splits_midway_along_the_widest_relative_gap():
    """[0, 1]²: (0.25, 0.5), then (0.75, 0.5) splits x at 0.5; (0.75, 0.9) lands right and splits y
    at 0.7. Volumes 0.5, 0.35, 0.15; the weights f·V by hand."""
    tree = KDTree(np.zeros(2), np.ones(2))
    assert tree.insert(np.array([0.25, 0.5])) == 0
    assert tree.insert(np.array([0.75, 0.5])) == 1
    assert tree.insert(np.array([0.75, 0.9])) == 2
    np.testing.assert_allclose(tree.cell_lo, [[0.0, 0.0], [0.5, 0.0], [0.5, 0.7]])
    np.testing.assert_allclose(tree.cell_hi, [[0.5, 1.0], [1.0, 0.7], [1.0, 1.0]])
    np.testing.assert_allclose(np.exp(tree.log_volumes()), [0.5, 0.35, 0.15])
    assert tree.leaf_of(np.array([0.1, 0.95])) == 0
    assert tree.leaf_of(np.array([0.6, 0.69])) == 1
    assert tree.leaf_of(np.array([0.6, 0.7])) == 2  # a point on a split goes above it
    assert tree.insert(np.array([0.75, 0.9])) == 2  # the same sample again: no new leaf
    assert len(tree) == 3
    f = np.array([1.0, 0.5, 2.0])
    p = leaf_probabilities(np.log(f), tree.log_volumes())
    w = f * np.array([0.5, 0.35, 0.15])
    np.testing.assert_allclose(p, w / w.sum())
    # a leaf of fitness 0 is never chosen; all zero: uniform
    np.testing.assert_allclose(leaf_probabilities(np.array([0.0, -np.inf, 0.0]), tree.log_volumes()),
                               np.array([0.5, 0.0, 0.15]) / 0.65)
    np.testing.assert_allclose(leaf_probabilities(np.full(3, -np.inf), tree.log_volumes()), np.full(3, 1 / 3))


def test_a_fixed_dimension_is_never_split_and_counts_one():
    tree = KDTree(np.array([0.0, 2.0]), np.array([1.0, 2.0]))  # the second dimension is fixed
    tree.insert(np.array([0.2, 2.0]))
    tree.insert(np.array([0.6, 2.0]))
    np.testing.assert_allclose(np.exp(tree.log_volumes()), [0.4, 0.6])


def _space(nu, knots=1, lo=-1.0, hi=1.0):
    return ControlSpace(nu=nu, lo=np.full(nu, lo), hi=np.full(nu, hi), act_group=np.zeros(nu, dtype=int),
                        offsets=np.linspace(0.0, 0.35, knots), spline="cubic")


def _costs(total):
    total = np.asarray(total, dtype=float)
    return Costs(total=total.copy(), components=total[:, None].copy(), membership=np.ones((1, 5), dtype=bool),
                 per_step=np.zeros((len(total), 1))).exclude(~np.isfinite(total))


def test_samples_follow_the_mixture_of_the_leaves():
    """Leaves chosen ∝ f·V (with exp(−(c − c_min)/τ), τ = median − min), each sample Gaussian around
    its leaf's sample with σ × the leaf's widths."""
    settings = SamplingSettings(rollouts=8, planner="smc", knots=1, planner_options={"temperature": 1.0})
    planner = make_planner(_space(2, lo=-100.0, hi=100.0), settings, np.random.default_rng(0))
    for x in ([5, 5], [15, 5], [-5, 5], [5, 15], [5, -5]):
        planner._add(np.array(x, dtype=float), 0.0, fresh=True)
    np.testing.assert_allclose(planner.tree.cell_lo[0], [0, 0])
    np.testing.assert_allclose(planner.tree.cell_hi[0], [10, 10])
    # costs 0, 1, 1, 2, 3: c_min 0, median 1 → f = e^0, e^-1, e^-1, e^-2, e^-3
    planner.costs = np.array([0.0, 1.0, 1.0, 2.0, 3.0])
    f = np.exp(-np.array([0.0, 1.0, 1.0, 2.0, 3.0]))
    v = np.exp(planner.tree.log_volumes())
    np.testing.assert_allclose(planner.leaf_weights(), f * v / np.sum(f * v))
    # only leaf 0 can win: the others' cost +inf → fitness 0; samples are N((5, 5), (0.5·10)²)
    planner.costs = np.array([0.0, np.inf, np.inf, np.inf, np.inf])
    draws = planner.draw(40000)
    np.testing.assert_allclose(draws.mean(axis=0), [5, 5], atol=0.1)
    np.testing.assert_allclose(draws.std(axis=0), [5, 5], rtol=0.02)


TOY_MODES = np.array([[-0.5, -0.5], [0.5, 0.5]])


def _run_toy(name, seed, steps=25, n=45, **options):
    """Plan on a 2-D landscape with two equally good minima at ±(0.5, 0.5), one iteration per
    control step; per step, how many of the planner's samples lie within 0.25 of each mode (for SMC
    its whole population, for predictive sampling its candidates)."""
    settings = SamplingSettings(rollouts=n, planner=name, exploration=0.05, knots=1, planner_options=options)
    planner = make_planner(_space(2), settings, np.random.default_rng(seed))
    near = []
    for k in range(steps):
        x = planner.propose(None, 0.015 * k).reshape(n, 2)
        planner.tell(_costs(np.min(np.linalg.norm(x[:, None, :] - TOY_MODES[None], axis=2), axis=1) ** 2))
        population = planner.tree.points if name == "smc" else x
        near.append((np.linalg.norm(population[:, None, :] - TOY_MODES[None], axis=2) < 0.25).sum(axis=0))
    return np.array(near)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_smc_keeps_both_modes_where_predictive_sampling_keeps_one(seed):
    near = _run_toy("smc", seed, temperature=0.1, greedy_fraction=0.1)[-15:]
    assert np.mean(near.min(axis=1) >= 1) >= 0.8, near  # both modes alive in most steps
    assert near.sum(axis=0).min() >= 15, near  # and each with samples over the steps
    near = _run_toy("baseline", seed)[-15:]
    assert near.min(axis=1).max() == 0, near  # one mode only, every step


def test_a_planner_restored_from_its_state_proposes_the_same():
    settings = SamplingSettings(rollouts=12, planner="smc")
    a = make_planner(_space(3, knots=3), settings, np.random.default_rng(4))
    for k in range(3):
        cand = a.propose(None, 0.015 * k)
        a.tell(_costs(np.sum(cand ** 2, axis=(1, 2))))
    b = make_planner(_space(3, knots=3), settings, np.random.default_rng(99))
    b.set_state(a.get_state())
    b.rng = np.random.default_rng(7)
    a.rng = np.random.default_rng(7)
    np.testing.assert_array_equal(a.propose(None, 0.045), b.propose(None, 0.045))
    np.testing.assert_array_equal(a.tree.cell_lo, b.tree.cell_lo)


def test_the_hold_guess_cancels_gravity_at_every_driven_joint():
    """With motors, u = the bias force / gear at each driven joint: MuJoCo's actuator force under u
    equals its bias force there (a character in the air, at rest, not clipped)."""
    from solver.builders import characters
    from solver.formats.scene import SCHEMA_VERSION, Environment, Pose, SceneDesc
    from solver.mpc.planners.hold import pose_holder
    from solver.physics.model import build_model
    from solver.physics.rollout import get_state
    scene = SceneDesc(schema_version=SCHEMA_VERSION, name="air", character=characters.humanoid("default"),
                      environment=Environment(floor=False), initial_pose=Pose(root_pos=[0, 0, 3.0]))
    built = build_model(scene)
    m = built.model
    d = mujoco.MjData(m)
    d.qpos[:] = built.initial_qpos()
    d.qpos[m.jnt_qposadr[m.joint("knee_right").id]] = -1.0
    d.qpos[m.jnt_qposadr[m.joint("shoulder1_left").id]] = 0.8
    d.qvel[:] = np.random.default_rng(0).normal(size=m.nv)  # the hold ignores the velocity
    mujoco.mj_forward(m, d)
    u = pose_holder(built)(get_state(m, d))
    d.qvel[:] = 0.0
    d.ctrl[:built.nu_character] = u
    mujoco.mj_forward(m, d)
    dofs = m.jnt_dofadr[m.actuator_trnid[:built.nu_character, 0]]
    inside = np.abs(u) < 1.0
    assert inside.sum() >= 15
    np.testing.assert_allclose(d.qfrc_actuator[dofs][inside], d.qfrc_bias[dofs][inside], rtol=1e-9, atol=1e-9)
    assert np.abs(d.qfrc_bias[dofs]).max() > 1.0  # gravity does load the joints


def test_with_partwise_each_batch_tries_the_last_batchs_composed_candidates():
    """PartwiseMPC's recombination as SMC guesses: after a batch, one candidate per partitioning whose
    every part takes its knots from the rollout best for that part — tried first in the next batch."""
    from solver.formats.scene import GROUPS
    from solver.mpc.planners.partwise import compose
    space = ControlSpace(nu=len(GROUPS), lo=-np.ones(len(GROUPS)), hi=np.ones(len(GROUPS)),
                         act_group=np.arange(len(GROUPS)), offsets=np.array([0.0]), spline="cubic")
    settings = SamplingSettings(rollouts=16, planner="smc", knots=1, planner_options={"partwise": True})
    planner = make_planner(space, settings, np.random.default_rng(3))
    cand = planner.propose(None, 0.0)
    comp = np.abs(cand[:, 0, :])  # group g's cost: |its actuator's control|
    costs = Costs(total=comp.sum(1), components=comp, membership=np.eye(len(GROUPS), dtype=bool),
                  per_step=np.zeros((len(cand), 1)))
    planner.tell(costs)
    expected = [compose(cand, costs, p, planner.part_columns) for p in planner.partitionings]
    assert len(expected) == len(settings.partitionings_or_default()) >= 2
    # the per-group best, all groups at once: each actuator's smallest |control| over the batch
    finest = [p for p in planner.partitionings if len(p) == len(GROUPS)]
    if finest:
        np.testing.assert_allclose(np.abs(expected[planner.partitionings.index(finest[0])][0]),
                                   np.abs(cand[:, 0, :]).min(axis=0))
    nxt = planner.propose(None, 0.0)  # another iteration of the same control step
    for k, c in enumerate(expected):
        np.testing.assert_array_equal(nxt[1 + k], c)
    assert list(planner._origins[1:1 + len(expected)]) == [1] * len(expected)  # ORIGINS: "composed"
