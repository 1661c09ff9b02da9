"""Contact keyframes and PartwiseMPC (Chen & van de Panne et al. 2024; DESIGN §8)."""
