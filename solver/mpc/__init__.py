"""Sampling MPC: the agent loop (`agent`, one planning iteration in `iteration`, its effort in
`effort`, contact keyframes checked off in `keyframe_tracker`), what it minimizes (`objectives/`),
the planners behind the ask/tell contract of `planners/base` (predictive sampling, PartwiseMPC, …),
and recovery across runs (`recovery/`: checkpoints, segments, particles)."""
