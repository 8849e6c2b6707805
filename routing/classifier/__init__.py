"""Request classifier: task family and complexity band from a bounded window of the prompt."""

from __future__ import annotations

from routing.classifier.core import Classification, Classifier, classification_key, classify
from routing.classifier.linear import WEIGHTS_PATH

__all__ = ["WEIGHTS_PATH", "Classification", "Classifier", "classification_key", "classify"]
