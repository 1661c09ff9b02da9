"""Recovering from failure across runs: checkpoints of the agent's state, keyframe segments and the
particles made of them (retries and back-ups)."""
