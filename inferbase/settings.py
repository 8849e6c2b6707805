"""Settings for Inferbase, read from the environment only here.

With nothing set: SQLite, a file cache, in-process channel layer, eager Celery, simulated upstream.
Production sets DATABASE_URL (PostgreSQL) and REDIS_URL (the cache the gateway processes share, the
channel layer and the Celery broker: run `celery -A inferbase worker` and `celery -A inferbase beat`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


Number = TypeVar("Number", int, float)


def _env_number(name: str, default: Number, kind: type[Number], label: str, minimum: Number | None) -> Number:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be {label}, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    return _env_number(name, default, int, "an integer", minimum)


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    return _env_number(name, default, float, "a number", minimum)


def database_from_url(url: str) -> dict[str, object]:
    parsed = urlparse(url)
    if parsed.scheme in ("postgres", "postgresql", "pgsql"):
        options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "OPTIONS": options,
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    if parsed.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": parsed.path or ":memory:"}
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parsed.scheme!r} is not supported (postgres, sqlite)")


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or "inferbase-insecure-development-key-change-me-in-production"
ALLOWED_HOSTS = [h.strip() for h in env_str("ALLOWED_HOSTS", "*").split(",") if h.strip()]
PORT = env_int("PORT", 8000, minimum=1)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "channels",
    "providers",
    "routing",
    "billing",
    "observability",
    "inferbase.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's) from STATIC_ROOT, filled by `manage.py collectstatic`; with DEBUG on,
    # straight from the apps. Chat completions never reaches Django's middleware (asgi.py).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "inferbase.urls"
ASGI_APPLICATION = "inferbase.asgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "inferbase.portal.context.portal",
            ]
        },
    }
]

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env_str("SQLITE_PATH") or str(BASE_DIR / "db.sqlite3"),
            "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
            # Persistent: the log writer's thread would otherwise reopen the file for every batch.
            "CONN_MAX_AGE": 600,
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
INFERBASE_CACHE_PREFIX = env_str("INFERBASE_CACHE_PREFIX", "inferbase")
INFERBASE_CACHE_DIR = Path(env_str("INFERBASE_CACHE_DIR") or BASE_DIR / "var" / "cache")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("INFERBASE_CACHE_PREFIX", "inferbase"),
        }
    }
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}}
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    # A file cache, not locmem: management commands and the server are separate processes and
    # must see the same snapshot version (an edit from `manage.py` reaches the running server).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(INFERBASE_CACHE_DIR),
            "KEY_PREFIX": env_str("INFERBASE_CACHE_PREFIX", "inferbase"),
        }
    }
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("INFERBASE_STATIC_DIR") or BASE_DIR / "var" / "static")
STATICFILES_DIRS = [BASE_DIR / "static"]  # the portal's stylesheet and script

# The portal (/portal/): Django's session login. Behind HTTPS set both *_COOKIE_SECURE flags, and list the
# public origin in CSRF_TRUSTED_ORIGINS (https://portal.example.com) when a proxy terminates TLS.
LOGIN_URL = "portal:login"
LOGIN_REDIRECT_URL = "portal:index"
LOGOUT_REDIRECT_URL = "portal:login"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 8 * 3600, minimum=60)
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS").split(",") if o.strip()]
# Failed portal logins allowed per username, and per client address, within the window; then refused until it ends.
INFERBASE_LOGIN_FAILURES_PER_USERNAME = env_int("INFERBASE_LOGIN_FAILURES_PER_USERNAME", 5, minimum=1)
INFERBASE_LOGIN_FAILURES_PER_ADDRESS = env_int("INFERBASE_LOGIN_FAILURES_PER_ADDRESS", 20, minimum=1)
INFERBASE_LOGIN_FAILURE_WINDOW_SECONDS = env_int("INFERBASE_LOGIN_FAILURE_WINDOW_SECONDS", 900, minimum=1)
# The log writer publishes each stored request's row to the portal's live tail of Logs; false publishes nothing
# (the Logs page still lists every request on a reload).
INFERBASE_LIVE_TAIL = env_bool("INFERBASE_LIVE_TAIL", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "inferbase.api.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "inferbase.api.errors.drf_exception_handler",
    "UNAUTHENTICATED_USER": None,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
    "loggers": {"inferbase": {"level": env_str("LOG_LEVEL", "INFO"), "handlers": ["console"], "propagate": False}},
}

# --- Inferbase ---------------------------------------------------------------------------------
INFERBASE_CATALOG_PATH = Path(env_str("INFERBASE_CATALOG_PATH") or BASE_DIR / "routing" / "data" / "catalog.json")
INFERBASE_EVIDENCE_PATH = Path(env_str("INFERBASE_EVIDENCE_PATH") or BASE_DIR / "routing" / "data" / "evidence.json")
# Simulated routes serve every catalog model without network or keys; switch off in production.
INFERBASE_SIMULATED_ROUTES = env_bool("INFERBASE_SIMULATED_ROUTES", True)
# Where the simulated upstream answers. By default the gateway mounts it at /simulated on itself.
INFERBASE_SIMULATED_URL = (env_str("INFERBASE_SIMULATED_URL") or f"http://127.0.0.1:{PORT}/simulated").rstrip("/")
INFERBASE_SIMULATED_MOUNT = env_bool("INFERBASE_SIMULATED_MOUNT", True)
INFERBASE_SIMULATED_TIME_SCALE = env_float("INFERBASE_SIMULATED_TIME_SCALE", 1.0, minimum=0.0)
INFERBASE_MAX_BODY_BYTES = env_int("INFERBASE_MAX_BODY_BYTES", 8 * 1024 * 1024, minimum=1024)
INFERBASE_STREAM_KEEPALIVE_SECONDS = env_float("INFERBASE_STREAM_KEEPALIVE_SECONDS", 15.0, minimum=0.01)
# "aiohttp" (httpx over the aiohttp transport, measured faster here) or "httpx" (httpx's own pool).
INFERBASE_UPSTREAM_TRANSPORT = env_str("INFERBASE_UPSTREAM_TRANSPORT", "aiohttp")
if INFERBASE_UPSTREAM_TRANSPORT not in ("aiohttp", "httpx"):
    raise ImproperlyConfigured("INFERBASE_UPSTREAM_TRANSPORT must be 'aiohttp' or 'httpx'")
# How long an in-process copy of the catalog snapshot or an API key is trusted before re-checking.
INFERBASE_SNAPSHOT_CHECK_SECONDS = env_float("INFERBASE_SNAPSHOT_CHECK_SECONDS", 1.0, minimum=0.0)
INFERBASE_KEY_CACHE_SECONDS = env_float("INFERBASE_KEY_CACHE_SECONDS", 30.0, minimum=0.0)
# Where log records wait when the database cannot take them (replayed when it can).
INFERBASE_SPOOL_DIR = Path(env_str("INFERBASE_SPOOL_DIR") or BASE_DIR / "var" / "spool")
INFERBASE_ENCRYPTION_KEY = env_str("INFERBASE_ENCRYPTION_KEY")
# How long the writer waits for more records before a write, when few are queued: longer means more
# rows per commit (less CPU per request), and logs that appear that much later.
INFERBASE_RECORD_LINGER_SECONDS = env_float("INFERBASE_RECORD_LINGER_SECONDS", 0.2, minimum=0.0)
# Budgets and rate limits: counters in Redis (REDIS_URL) or, without it, in the process. When Redis cannot be
# reached within the timeout, a request is refused with a 503 (false: budgets cannot be overspent) or
# admitted uncounted (true: availability first).
INFERBASE_LIMITS_FAIL_OPEN = env_bool("INFERBASE_LIMITS_FAIL_OPEN", False)
# The wait includes the event loop's own queue: at 100 ms a burst of 200 requests to one process failed closed
# (503) with Redis healthy. A Redis that refuses connections fails at once, whatever this is.
INFERBASE_LIMITS_TIMEOUT_MS = env_int("INFERBASE_LIMITS_TIMEOUT_MS", 1000, minimum=1)
# A decision is readable from the shared cache (Redis, else files under INFERBASE_CACHE_DIR/decisions) from
# the end of its response until its row is written, when the copy is deleted; this long at most.
INFERBASE_DECISION_COPY_SECONDS = env_int("INFERBASE_DECISION_COPY_SECONDS", 3600, minimum=1)
# Usage counts a request from the end of its response (a pending set in Redis, else in the process) until the
# log writer commits it; an entry whose row never comes (a crashed writer) stops counting after this long.
INFERBASE_USAGE_PENDING_SECONDS = env_int("INFERBASE_USAGE_PENDING_SECONDS", 900, minimum=1)
# At SIGTERM or SIGINT: how long the log writer may take to write what is queued before it spools the rest
# to INFERBASE_SPOOL_DIR (replayed at the next start). Keep it under the supervisor's grace period (Docker 10 s).
INFERBASE_SHUTDOWN_WRITE_SECONDS = env_float("INFERBASE_SHUTDOWN_WRITE_SECONDS", 5.0, minimum=0.0)
# Circuit breaker: a route that fails this many attempts in a row rests for this long.
INFERBASE_ROUTE_FAILURE_THRESHOLD = env_int("INFERBASE_ROUTE_FAILURE_THRESHOLD", 3, minimum=1)
INFERBASE_ROUTE_REST_SECONDS = env_float("INFERBASE_ROUTE_REST_SECONDS", 30.0, minimum=0.0)
# The served app freezes start-up's objects out of the garbage collector's sight and collects the young less
# often (inferbase.asgi._gc_tune); false leaves Python's defaults.
INFERBASE_GC_TUNING = env_bool("INFERBASE_GC_TUNING", True)

# --- Evidence, health and the periodic tasks ---------------------------------------------------------
# Latency and failure evidence: a route's figures come from its samples of the last window (at most the
# newest N); with fewer than the minimum the catalog's prior stands (source "catalog").
INFERBASE_EVIDENCE_WINDOW_SECONDS = env_float("INFERBASE_EVIDENCE_WINDOW_SECONDS", 3600.0, minimum=1.0)
INFERBASE_EVIDENCE_MAX_SAMPLES = env_int("INFERBASE_EVIDENCE_MAX_SAMPLES", 500, minimum=1)
INFERBASE_EVIDENCE_MIN_SAMPLES = env_int("INFERBASE_EVIDENCE_MIN_SAMPLES", 20, minimum=1)
INFERBASE_EVIDENCE_REFRESH_SECONDS = env_float("INFERBASE_EVIDENCE_REFRESH_SECONDS", 30.0, minimum=1.0)
# The log writer stores a sample per attempt for the evidence above; false stores none (routes keep their
# catalog prior, nothing enters cooldown). For measuring what sampling costs (make bench-gateway) and for opting out.
INFERBASE_ROUTE_SAMPLES = env_bool("INFERBASE_ROUTE_SAMPLES", True)
# Fleet-wide cooldown: a route whose attempts of the last window fail at this rate or more (with at least
# the minimum of attempts) is skipped for the cooldown; after half of it, this share of requests probes it.
INFERBASE_COOLDOWN_FAILURE_RATE = env_float("INFERBASE_COOLDOWN_FAILURE_RATE", 0.5, minimum=0.01)
INFERBASE_COOLDOWN_MIN_SAMPLES = env_int("INFERBASE_COOLDOWN_MIN_SAMPLES", 10, minimum=1)
INFERBASE_COOLDOWN_WINDOW_SECONDS = env_float("INFERBASE_COOLDOWN_WINDOW_SECONDS", 300.0, minimum=1.0)
INFERBASE_COOLDOWN_SECONDS = env_float("INFERBASE_COOLDOWN_SECONDS", 120.0, minimum=1.0)
INFERBASE_COOLDOWN_PROBE_SHARE = env_float("INFERBASE_COOLDOWN_PROBE_SHARE", 0.05, minimum=0.0)
# The share of eligible auto traffic a policy with explore_unmeasured sends to models without samples.
INFERBASE_EXPLORE_SHARE = env_float("INFERBASE_EXPLORE_SHARE", 0.02, minimum=0.0)
# Benchmark feeds (file paths or http(s) URLs serving the evidence JSON format), comma-separated.
INFERBASE_BENCHMARK_FEEDS = [f.strip() for f in env_str("INFERBASE_BENCHMARK_FEEDS").split(",") if f.strip()]
INFERBASE_BENCHMARK_FEEDS_REFRESH_SECONDS = env_float("INFERBASE_BENCHMARK_FEEDS_REFRESH_SECONDS", 6 * 3600.0,
                                                      minimum=1.0)
# Provider health: one probe (GET {base_url}/models) per provider per interval.
INFERBASE_HEALTH_PROBE_SECONDS = env_float("INFERBASE_HEALTH_PROBE_SECONDS", 60.0, minimum=1.0)
INFERBASE_HEALTH_PROBE_TIMEOUT_SECONDS = env_float("INFERBASE_HEALTH_PROBE_TIMEOUT_SECONDS", 3.0, minimum=0.1)
# The periodic tasks run in the gateway process itself (a small scheduler thread) on the embedded
# default; with REDIS_URL, Celery beat and workers run them instead.
INFERBASE_SCHEDULER = env_bool("INFERBASE_SCHEDULER", not REDIS_URL)
CELERY_BEAT_SCHEDULE = {
    "route-evidence": {"task": "routing.tasks.route_evidence_refresh",
                       "schedule": INFERBASE_EVIDENCE_REFRESH_SECONDS},
    "provider-health": {"task": "providers.tasks.provider_health_probe", "schedule": INFERBASE_HEALTH_PROBE_SECONDS},
    "benchmark-feeds": {"task": "routing.tasks.benchmark_feeds_refresh",
                        "schedule": INFERBASE_BENCHMARK_FEEDS_REFRESH_SECONDS},
}
# Prometheus: set PROMETHEUS_MULTIPROC_DIR (an empty directory, wiped at each start) when several
# processes serve, so that GET /metrics adds up all of them.
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR")
