"""expected_wait_ms: traffic's own figure for the basis when measured, else modelled from the prior."""

from __future__ import annotations

from routing.engine.estimates import expected_wait_ms
from routing.snapshot import RouteLatencySnap
from tests.routing.conftest import make_route

TRAFFIC = RouteLatencySnap(ttft_ms_p50=300, tokens_per_second=100.0, samples=40, source="traffic",
                           first_answer_token_ms_p50=2500, end_to_end_ms_p50=4100)
PRIOR = RouteLatencySnap(ttft_ms_p50=300, tokens_per_second=100.0)


def test_traffic_figures_are_the_wait_for_each_basis() -> None:
    route = make_route(latency=TRAFFIC)
    assert expected_wait_ms(route, "first_token", 1000, 400) == 300
    assert expected_wait_ms(route, "first_answer_token", 1000, 400) == 2500
    assert expected_wait_ms(route, "end_to_end", 1000, 400) == 4100


def test_the_catalog_prior_is_modelled_from_first_token_and_decode_speed() -> None:
    route = make_route(latency=PRIOR)
    assert expected_wait_ms(route, "first_token", 1000, 400) == 300
    assert expected_wait_ms(route, "first_answer_token", 1000, 400) == 300 + 10_000
    assert expected_wait_ms(route, "end_to_end", 1000, 400) == 300 + 14_000


def test_a_basis_traffic_has_not_measured_is_modelled_from_what_it_has() -> None:
    only_whole = RouteLatencySnap(ttft_ms_p50=None, tokens_per_second=50.0, samples=40, source="traffic",
                                  end_to_end_ms_p50=900)
    route = make_route(latency=only_whole)
    assert expected_wait_ms(route, "end_to_end", 0, 400) == 900
    assert expected_wait_ms(route, "first_token", 0, 400) is None


def test_no_latency_no_wait() -> None:
    assert expected_wait_ms(make_route(latency=None), "first_token", 0, 400) is None
