"""The gateway: one request's walk from routing through the chain to its answer, charge and record.

route (route.py) -> walk the chain (chain.py, attempt.py; a Reading from whole.py or streamed.py) ->
answer (answer.py, events.py) -> charge (charge.py) -> record (record.py). See docs/architecture.md.
"""
