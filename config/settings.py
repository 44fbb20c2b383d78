"""schedboard settings: everything a deployment changes comes from environment variables.

The README lists every variable. With none set, the app runs on a laptop: SQLite under
``var/``, Celery tasks executed in-process, DEBUG on. Production sets ``DEBUG=false``, which
makes ``SECRET_KEY`` and ``ALLOWED_HOSTS`` mandatory.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_rate,
    env_secret,
    env_str,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", True)

# --- Secrets and hosts --------------------------------------------------------------------

_DEV_SECRET_KEY = "django-insecure-schedboard-development-only-never-in-production"
SECRET_KEY = env_secret("SECRET_KEY") or (_DEV_SECRET_KEY if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG is false")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS is required when DEBUG is false (comma-separated host names)"
    )
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HTTPS only: redirect plain HTTP (the probes excepted: kubelets call them over HTTP) and tell
# browsers to keep to HTTPS for SECURE_HSTS_SECONDS. Off by default: only behind TLS.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

# --- Application --------------------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "policy",
]

MIDDLEWARE = [
    "policy.middleware.ProbeMiddleware",  # first: probes need no host check, session or CSP
    "django.middleware.security.SecurityMiddleware",
    # Pages are mostly repeated markup (node tables, charts): gzip makes them several times
    # smaller. Django masks the CSRF token per response, which is what BREACH would target.
    "django.middleware.gzip.GZipMiddleware",
    "policy.middleware.RequestIdMiddleware",
    "policy.middleware.RequestSizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "policy.middleware.LoginRequiredMiddleware",
    "policy.middleware.RememberClusterMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "policy.middleware.BrokerUnavailableMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

# Content-Security-Policy: scripts only from here, inline ones only with the request's nonce
# (the pages have none; the API docs load theirs as files); inline styles are allowed (the
# charts' SVG and the load bars carry them). Nothing may frame the pages.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one user from
# one address, that pair is locked out for LOGIN_LOCKOUT_MINUTES (429), right password or not.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

if not DEBUG:  # serves collected static files under gunicorn; runserver does it in DEBUG
    _after_security = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
    MIDDLEWARE.insert(_after_security, "whitenoise.middleware.WhiteNoiseMiddleware")

# Request bodies above this many bytes are refused (413 for the API): an imported
# KubeSchedulerConfiguration is a few kilobytes.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("API_MAX_REQUEST_BYTES", 1024 * 1024, minimum=1024)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
                "policy.context_processors.roles",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------------------

_DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'schedboard.sqlite3'}"
_DATABASE_URL = env_url("DATABASE_URL", ["postgres", "postgresql", "pgsql", "sqlite"])
if _DATABASE_URL is None:
    _DATABASE_URL = _DEFAULT_DATABASE_URL
    VAR_DIR.mkdir(exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        _DATABASE_URL,
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # An unreachable or hanging server fails a request in seconds instead of holding a worker
    # until the kernel gives up on the TCP connection.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", 5, minimum=1
    )
elif DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default has a worker thread beside each request (a job's heartbeat, the
    # in-process worker): IMMEDIATE takes the write lock when a transaction begins, so a
    # transaction that read first never fails to upgrade ("database is locked"); writers wait
    # their turn for up to `timeout` seconds, and WAL lets readers go on meanwhile.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env_int("DATABASE_LOCK_TIMEOUT", 30, minimum=1),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth ---------------------------------------------------------------------------------

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- I18N, static -------------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# --- REST API -----------------------------------------------------------------------------

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes DRF answer 401 (not 403) without credentials.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "policy.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": [
        "policy.api.filtering.StrictFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "policy.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "policy.api.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "policy.api.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "policy.api.errors.exception_handler",
}
API_MAX_PAGE_SIZE = env_int("API_MAX_PAGE_SIZE", 1000, minimum=1)

# Rate limits of the expensive writes (API and pages), per user: see policy/accounts/rate_limits.py.
API_EVALUATE_RATE = env_rate("API_EVALUATE_RATE", "120/minute")
API_WHATIF_RATE = env_rate("API_WHATIF_RATE", "20/minute")
# Counters of the rate limits (and any other cache): Redis when CACHE_URL is set, so every web
# process counts together; else each process counts alone.
_CACHE_URL = env_url("CACHE_URL", ["redis", "rediss"])
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL}
        if _CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

SPECTACULAR_SETTINGS = {
    "TITLE": "schedboard API",
    "DESCRIPTION": (
        "Kubernetes scheduling policy: clusters, snapshots, tokens, scheduler configurations, "
        "LoadAware args, node threshold and NodeMetric collect policies, their history.\n\n"
        'Every policy object carries `ETag: W/"<version>"`. `PUT`, `PATCH` and `DELETE` '
        "require `If-Match` with that ETag (or `*` to overwrite whatever is there): a stale "
        "one gets 412, a missing one 428. Validation errors (400) list "
        "`errors: [{field, type, detail}]` plus DRF-style field keys."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package: /api/docs/ works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": r"/api/v[0-9]+",
    "ENUM_NAME_OVERRIDES": {
        "ChangeSourceEnum": "policy.core.choices.ChangeSource",
        "DecisionSourceEnum": "policy.core.choices.DecisionSource",
        "AggregationTypeEnum": "scoring.AGGREGATION_TYPES",
        "ConfigurationSourceEnum": "policy.core.choices.ConfigurationSource",
        "WhatIfStatusEnum": "policy.core.choices.WhatIfStatus",
        "ConnectableKindEnum": "policy.core.choices.CONNECTABLE_KINDS",
        "ClusterKindEnum": "policy.core.choices.ClusterKind",
    },
}

# --- Celery (read by config/celery.py through the CELERY_ namespace) ----------------------

_BROKER_SCHEMES = ["redis", "rediss", "amqp", "amqps", "pyamqp", "sqs"]
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", _BROKER_SCHEMES)
CELERY_RESULT_BACKEND = (
    env_url("CELERY_RESULT_BACKEND", ["redis", "rediss", "rpc", "db+postgresql", "django-db"])
    or CELERY_BROKER_URL
)
# No broker: run tasks in-process, and let their exceptions surface where they are called.
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Sending a task when the broker is down fails in about two seconds (a 503 naming the broker;
# the job's row stays queued and the beat sends it once the broker is back) instead of a
# request held for Celery's default ~20 s of reconnect attempts.
_QUICK_RETRY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2}
CELERY_TASK_PUBLISH_RETRY_POLICY = _QUICK_RETRY
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": _QUICK_RETRY}
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_TIMEZONE = TIME_ZONE
# Tasks that need a cluster's engine state go to its engine shard's queue (policy/engine/).
CELERY_TASK_ROUTES = ("policy.engine.shards.route",)

# --- The engine tier (policy/engine/, docs/architecture.md) -------------------------------
# Each cluster's engine state is held by one engine worker: shard = cluster id % ENGINE_SHARDS,
# served on queue ENGINE_QUEUE_PREFIX + shard (run `celery -A config worker --pool=solo -Q
# engine-0`, one process per shard or several queues per process; see the Procfile).
ENGINE_SHARDS = env_int("ENGINE_SHARDS", 1, minimum=1)
ENGINE_QUEUE_PREFIX = env_str("ENGINE_QUEUE_PREFIX", "engine-") or "engine-"
# Seconds a request waits for the engine's answer before answering 503 naming the queue.
ENGINE_TIMEOUT = env_int("ENGINE_TIMEOUT", 8, minimum=1)
# Answer engine questions in the asking process (the embedded default: no broker).
ENGINE_IN_PROCESS = env_bool("ENGINE_IN_PROCESS", CELERY_BROKER_URL is None)
# Every periodic task, in one place. Each entry expires: a run missed while beat or the workers
# were down is dropped, not queued up behind the next one.
CELERY_BEAT_SCHEDULE = {
    "prune-snapshots": {
        "task": "policy.tasks.prune_snapshots_task",
        "schedule": 3600.0,
        "options": {"expires": 1800},
    },
    "prune-decisions": {
        "task": "policy.tasks.prune_decisions_task",
        "schedule": 3600.0,
        "options": {"expires": 1800},
    },
    "prune-authorization-failures": {
        "task": "policy.tasks.prune_authorization_failures_task",
        "schedule": 600.0,  # a busy client adds hundreds a second
        "options": {"expires": 300},
    },
    "apply-time-windows": {
        "task": "policy.tasks.apply_time_windows",
        "schedule": 60.0,  # windows open and close on the minute
        "options": {"expires": 50},
    },
    "drift-demo-metrics": {
        "task": "policy.tasks.drift_demo_metrics",
        "schedule": 60.0,  # NodeMetrics report every 60 s by default
        "options": {"expires": 50},
    },
    "refresh-clusters": {
        "task": "policy.tasks.refresh_clusters",
        "schedule": 15.0,  # each cluster on its own refresh_interval_seconds (default 60)
        "options": {"expires": 14},
    },
    "recover-sync-jobs": {
        "task": "policy.tasks.recover_sync_jobs",
        "schedule": 60.0,
        "options": {"expires": 50},
    },
    "recover-what-ifs": {
        "task": "policy.tasks.recover_what_ifs",
        "schedule": 60.0,
        "options": {"expires": 50},
    },
}

# --- schedboard ---------------------------------------------------------------------------

SNAPSHOT_RETENTION = env_int("SNAPSHOT_RETENTION", 20, minimum=1)
# Kubeconfig files operators may connect clusters with from the "Add cluster" page (a path on
# this server; superusers may name any file, over the page, the API or manage.py add_cluster).
# Whoever can write there chooses what operators connect to, with which credentials: so not
# under var/, which the app itself writes, but where only the server's administrators write.
KUBECONFIG_DIR = Path(env_str("KUBECONFIG_DIR") or "/etc/schedboard/kubeconfigs")
# A kubeconfig user with an exec or auth-provider section runs a command on this server for
# its credentials: refused unless this is on.
KUBECONFIG_CREDENTIAL_PLUGINS = env_bool("KUBECONFIG_CREDENTIAL_PLUGINS", False)
# /metrics answers scrapers that send "Authorization: Bearer <METRICS_TOKEN>"; unset: off.
METRICS_TOKEN = env_secret("METRICS_TOKEN")
# Decision history kept: this many days, and at most this many decisions per cluster.
DECISION_RETENTION_DAYS = env_int("DECISION_RETENTION_DAYS", 30, minimum=1)
DECISION_RETENTION_COUNT = env_int("DECISION_RETENTION_COUNT", 100_000, minimum=1)
# Refused requests (the "authorization failures" the admin lists), bounded in time and rows.
AUTHORIZATION_FAILURE_RETENTION_DAYS = env_int(
    "AUTHORIZATION_FAILURE_RETENTION_DAYS", 30, minimum=1
)
AUTHORIZATION_FAILURE_RETENTION_COUNT = env_int(
    "AUTHORIZATION_FAILURE_RETENTION_COUNT", 100_000, minimum=1
)
BROKER_CHECK_TIMEOUT = 2.0
# /readyz gives the database this long to answer SELECT 1 before reporting it unavailable.
DATABASE_CHECK_TIMEOUT = 3.0
# Pods one what-if comparison may place (each is placed twice, once per configuration).
WHATIF_MAX_PODS = env_int("WHATIF_MAX_PODS", 10_000, minimum=1)
# Without a broker, a what-if comparison runs in a process of its own (``manage.py
# run_what_if``), not in the request that started it.
WHATIF_OWN_PROCESS = env_bool("WHATIF_OWN_PROCESS", CELERY_BROKER_URL is None)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {
        "handlers": ["console"],
        "level": env_choice("LOG_LEVEL", ["DEBUG", "INFO", "WARNING", "ERROR"], "INFO"),
    },
}
