"""Assisted keyframes: CMA-ES over residual PD targets, modulated assist forces and keyframe timing
(Kim, Ling, Xie & van de Panne 2021)."""
