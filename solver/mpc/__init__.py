"""Sampling MPC for contact keyframes: the agent loop (`agent`), the objective (`objectives`) and the
planners behind the ask/tell contract of `planner` (predictive sampling, PartwiseMPC, …)."""
