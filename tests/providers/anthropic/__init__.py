"""The Anthropic adapter: pure translation, and end to end against the simulated Anthropic endpoint."""
