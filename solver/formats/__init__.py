"""Floor 1, the formats: scene, task, every method's settings, the keyframes of each method, a solution,
perturbations, the objective's term names. What a task file and a result hold, with their defaults and checks."""
