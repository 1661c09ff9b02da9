"""Floor 2, physics and result files: the compiled model, batched rollouts, cost features, sticky-hand
welds, motion quality figures, how different alternatives are, a reference motion on the planning grid,
and the run's output folder."""
