"""Catalog, evidence, routing policies, the classifier and the decision engine."""
