"""GET /models' list narrows to the policy's pool exactly as routing admits pinned models (one rule)."""

from __future__ import annotations

import pytest

from routing.catalog import model_list
from routing.decision import RoutingError
from tests.routing.conftest import (
    decide_with,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
)


def _snapshot():  # type: ignore[no-untyped-def]
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="a:fp8"), make_model(id="b")]
    return make_snapshot(models, [make_route(model_id=m.id) for m in models])


def _listed(policy) -> list[str]:  # type: ignore[no-untyped-def]
    return [entry["id"] for entry in model_list(_snapshot(), policy=policy, project_id=None)]


def _routed(model: str, policy) -> bool:  # type: ignore[no-untyped-def]
    try:
        decide_with(_snapshot(), make_request(model=model), policy=policy)
    except RoutingError:
        return False
    return True


@pytest.mark.parametrize("policy", [
    make_policy(pool=("a",), require_pinned_in_pool=True),
    make_policy(pool=("a",), allow_variants=False, require_pinned_in_pool=True),
    make_policy(pool=("a:fp8",), allow_variants=False, require_pinned_in_pool=True),  # a variant named outright
    make_policy(pool=("a",)),  # the pool does not bind pinned models: everything is listed
])
def test_the_list_holds_the_models_routing_serves_when_pinned(policy) -> None:  # type: ignore[no-untyped-def]
    assert _listed(policy) == [model for model in ("a", "a:fp8", "b") if _routed(model, policy)]


def test_a_variant_named_in_a_pool_without_variants_is_neither_listed_nor_served() -> None:
    policy = make_policy(pool=("a", "a:fp8"), allow_variants=False, require_pinned_in_pool=True)
    assert _listed(policy) == ["a"] and not _routed("a:fp8", policy)
