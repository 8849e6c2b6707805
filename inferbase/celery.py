"""The Celery application; tasks live in the app whose data they refresh."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")

app = Celery("inferbase")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
