"""The simulated upstream, over a real socket: both wire formats, per-model behaviour, directives."""
