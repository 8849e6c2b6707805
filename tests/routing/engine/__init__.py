"""routing.decide, by subject: filter steps, the chain and objectives, thinking, pinned models, policy and sessions."""
