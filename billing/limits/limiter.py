"""Admit a request against its budgets and rate limits, then settle or release what it reserved."""

from __future__ import annotations

import logging

from .store import CounterStore
from .values import ADMITTED_UNCOUNTED, Admission, Counter, Reservation, Verdict, counter_specs

logger = logging.getLogger("inferbase.billing")

UNAVAILABLE_STATUS = 503
UNAVAILABLE_CODE = "limits_unavailable"


class LimitsUnavailable(Exception):
    """The counters could not be reached and the limiter fails closed: answer 503, call no upstream."""

    status = UNAVAILABLE_STATUS
    code = UNAVAILABLE_CODE
    message = "Budgets and rate limits cannot be checked right now; the request was not sent. Retry shortly."


class Limiter:
    """One per process. `admit` once per request before any upstream call; then exactly one of `settle`
    (with what the request used, every billed attempt included) or `release` (nothing billed)."""

    def __init__(self, store: CounterStore, *, prefix: str, fail_open: bool) -> None:
        self._store = store
        self._prefix = f"{prefix}:limits"
        self._fail_open = fail_open

    async def admit(self, admission: Admission) -> Verdict:
        """Reserve the request's tokens and worst-case cost and count it, atomically across its scopes, or refuse
        it changing nothing. Raises LimitsUnavailable when the store fails and the limiter fails closed."""
        specs = counter_specs(admission, self._prefix)
        if not specs:
            return ADMITTED_UNCOUNTED
        try:
            refused, values = await self._store.check_and_add(specs)
        except Exception as exc:  # the store is down or slow: the documented setting decides
            if self._fail_open:
                logger.warning("limit counters unavailable; admitting uncounted (fail open): %r", exc)
                return Verdict(admitted=True, degraded=True)
            raise LimitsUnavailable() from exc
        states = tuple(spec.state(value) for spec, value in zip(specs, values, strict=True))
        if refused:
            return Verdict(admitted=False, states=states, refused=states[refused - 1])
        reservation = Reservation(
            tokens=tuple((s.key, s.amount) for s in specs if s.counter is Counter.TOKENS),
            budget=tuple((s.key, s.amount) for s in specs if s.counter is Counter.BUDGET),
        )
        return Verdict(admitted=True, states=states, reservation=reservation)

    async def settle(self, reservation: Reservation | None, *, tokens: int, cost_micros: int) -> None:
        """Replace what was reserved by what the request used (its total tokens and its cost_micros)."""
        if reservation is None:
            return
        deltas = [(key, tokens - reserved) for key, reserved in reservation.tokens]
        deltas += [(key, cost_micros - reserved) for key, reserved in reservation.budget]
        await self._add([(k, d) for k, d in deltas if d])

    async def release(self, reservation: Reservation | None) -> None:
        """Give back what was reserved (the request was not served and nothing was billed)."""
        if reservation is None:
            return
        await self._add([(key, -reserved) for key, reserved in (*reservation.tokens, *reservation.budget) if reserved])

    async def _add(self, deltas: list[tuple[str, int]]) -> None:
        if not deltas:
            return
        try:
            await self._store.add(deltas)
        except Exception:  # a lost settle only leaves a reservation in place until its window ends
            logger.warning("limit counters unavailable; settle lost", exc_info=True)
