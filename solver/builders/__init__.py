"""Floor 1, the builders: MJCF both ways, the default humanoid and its proportioned variants, the
environments, bone frames and a built-in pose rested on its furniture. They make the scenes the formats describe."""
