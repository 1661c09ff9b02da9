"""Floor 5, running the methods: the command line, seeds in worker processes or on a Ray cluster, and the
keyframes appended while a solve runs."""
