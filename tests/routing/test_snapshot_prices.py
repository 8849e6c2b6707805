"""The snapshot converts the catalog's prices to integers once, exactly."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings

from routing.models import Route
from routing.services import catalog_load
from routing.snapshot import snapshot_build


@pytest.mark.django_db
def test_every_route_carries_its_catalog_prices_as_integer_micros_per_million_tokens() -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=None)
    Route.objects.filter(pk=Route.objects.order_by("pk").values("pk")[:1]).update(
        price_input=Decimal("0.123456"), price_cached_input=Decimal("0.000001"))
    snapshot = snapshot_build("test")
    rows = {f"{r.provider.slug}/{r.model.catalog_id}": r for r in Route.objects.select_related("provider", "model")}
    routes = [route for routes in snapshot.routes.values() for route in routes]
    assert routes
    for route in routes:
        row = rows[route.route_id]
        assert route.input_micros_per_mtok == int(row.price_input * 1_000_000)
        assert route.output_micros_per_mtok == int(row.price_output * 1_000_000)
        expected_cached = None if row.price_cached_input is None else int(row.price_cached_input * 1_000_000)
        assert route.cached_input_micros_per_mtok == expected_cached
    assert any(route.input_micros_per_mtok == 123_456 for route in routes)
    assert any(route.cached_input_micros_per_mtok == 1 for route in routes)
