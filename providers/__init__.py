"""Upstream adapters, the simulated upstream and health probes. Imports none of our other apps."""
