"""Organizations, projects, API keys and provider keys."""
