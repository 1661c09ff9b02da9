"""Floor 0, the ground: one-line errors, where data lives, bounds, the registry of methods and planners,
JSON ↔ dataclass, rotations, splines, atomic files. Imports nothing of the solver above it."""
