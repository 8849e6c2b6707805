"""Classify a request into a task family and complexity band, learned model first, rules as fallback."""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from routing.classifier.features import FEATURE_VERSION, Features, Window, features_of, window_of
from routing.classifier.heuristic import Guess, guess_complexity, guess_task
from routing.classifier.linear import WEIGHTS_PATH, LinearModel, Scores, WeightsError, model_load

logger = logging.getLogger(__name__)

TOOL_USE = "tool_use"


@dataclass(frozen=True, slots=True)
class Classification:
    """The task family and complexity band of one request."""

    task: str
    complexity: str
    estimated: bool
    confidence: float


class Classifier:
    """A classifier bound to one weights file, loaded lazily and at most once, thread-safely."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._loaded = False
        self._model: LinearModel | None = None

    @classmethod
    def from_path(cls, path: Path | str) -> Classifier:
        """Return a classifier that will read its weights from path on first use."""
        return cls(Path(path))

    @property
    def model(self) -> LinearModel | None:
        """Return the learned model, or None when the weights could not be loaded."""
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._model = self._load()
                    self._loaded = True
        return self._model

    def _load(self) -> LinearModel | None:
        """Load the weights, logging and returning None on failure."""
        try:
            return model_load(self._path)
        except WeightsError as exc:
            logger.warning("classifier weights unavailable, using heuristic fallback: %s", exc)
            return None

    def classify(self, *, system: str, user: str, has_tools: bool = False) -> Classification:
        """Classify a request from its system prompt and last user turn; never raises on odd input."""
        window = window_of(system=system, user=user)
        features = features_of(window)
        model = self.model
        if model is None:
            return _estimate(window, features, has_tools=has_tools)
        return decide(model, model.scores(features), window, has_tools=has_tools)


def decide(
    model: LinearModel, scores: Scores, window: Window | None, *, has_tools: bool, guess: Guess | None = None
) -> Classification:
    """Turn the learned probabilities into a classification, blending in the rules when the model is unsure.

    Below the model's threshold the heuristic's guess adds `rule_weight * strength` to that family's
    probability and the larger total wins; the answer is then marked estimated. The rules run only
    in that case (they cost ~0.1-0.3 ms); `guess` lets cross-validation pass a precomputed one.
    """
    complexity = model.complexities[int(scores.complexity.argmax())]
    if has_tools:
        return Classification(TOOL_USE, complexity, estimated=False, confidence=1.0)
    best = int(scores.task.argmax())
    confidence = float(scores.task[best])
    if confidence >= model.threshold:
        return Classification(model.tasks[best], complexity, estimated=False, confidence=confidence)
    if guess is None:
        guess = guess_task(window)
    if guess.task in model.tasks:
        index = model.tasks.index(guess.task)
        learned = float(scores.task[index])
        if learned + model.rule_weight * guess.strength > confidence:
            return Classification(guess.task, complexity, estimated=True, confidence=min(1.0, max(learned, guess.strength)))
    return Classification(model.tasks[best], complexity, estimated=True, confidence=confidence)


def _estimate(window: Window, features: Features, *, has_tools: bool) -> Classification:
    """Classify with rules only."""
    complexity = guess_complexity(features.dense)
    if has_tools:
        return Classification(TOOL_USE, complexity, estimated=True, confidence=1.0)
    guess = guess_task(window)
    return Classification(guess.task, complexity, estimated=True, confidence=guess.strength)


_default = Classifier.from_path(WEIGHTS_PATH)


def _weights_tag(path: Path) -> bytes:
    """Return a short digest of a weights file (empty if it cannot be read)."""
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).digest()
    except OSError:
        return b""


# Part of every classification key: retrained weights must not be served the old weights' cached classifications.
_WEIGHTS_TAG = _weights_tag(WEIGHTS_PATH)


def classify(*, system: str, user: str, has_tools: bool = False) -> Classification:
    """Classify a request with the shipped weights (heuristic fallback if they are unavailable)."""
    return _default.classify(system=system, user=user, has_tools=has_tools)


def classification_key(*, system: str, user: str, has_tools: bool) -> str:
    """Return a stable cache key over exactly the inputs classify reads."""
    window = window_of(system=system, user=user)
    digest = hashlib.blake2b(_WEIGHTS_TAG, digest_size=16, person=FEATURE_VERSION.encode())
    for part in (window.system, window.user):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "little"))
        digest.update(encoded)
    digest.update(window.user_length.to_bytes(8, "little"))
    digest.update(b"\x01" if has_tools else b"\x00")
    return digest.hexdigest()
