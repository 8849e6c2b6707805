"""Prices, cost_micros, plans and markup: pure arithmetic over values it is handed."""
