"""Inferbase: the project package (settings, ASGI wiring, accounts, the public API, the gateway)."""

from .celery import app as celery_app

__all__ = ("celery_app",)
