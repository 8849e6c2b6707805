from __future__ import annotations

from tests.routing.conftest import make_model


def test_probe_import() -> None:
    assert make_model().id == "model-a"
