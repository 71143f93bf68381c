"""Settings for the leaderboard site.

Every setting comes from the environment, with a default that runs with no environment at all
(SQLite, the embedded MongoDB-compatible server, UTC days). The README lists each variable.
"""

import datetime as dt
import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from dotenv import dotenv_values

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def development_env_load(path: Path) -> None:
    """Add the development settings `make run` writes to `.env` (python-dotenv) to the
    environment, for the manage.py commands a developer runs by hand beside the site.

    Only for a process whose environment sets neither DEBUG nor SECRET_KEY, and only when the
    file itself says DEBUG=true. A production process always sets SECRET_KEY (with DEBUG off the
    site refuses to start without one), and a process that sets DEBUG, either way, has said how
    it runs: so a stray .env on a server can never turn DEBUG on or change any other setting.
    A variable the environment sets wins over the file's."""
    if "DEBUG" in os.environ or "SECRET_KEY" in os.environ or not path.is_file():
        return
    values = dotenv_values(path)
    if (values.get("DEBUG") or "").strip().lower() != "true":
        return
    for name, value in values.items():
        if value is not None:
            os.environ.setdefault(name, value)


development_env_load(BASE_DIR / env_str("ENV_FILE", ".env"))
DEBUG = env_bool("DEBUG", False)
# The default is for development only. Access tokens are signed with this key, so the site
# refuses to start without a real one when DEBUG is off: anyone could forge tokens otherwise.
DEVELOPMENT_SECRET_KEY = "django-insecure-development-key-set-SECRET_KEY-in-production"
SECRET_KEY = env_str("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
if not DEBUG and SECRET_KEY.strip() in ("", DEVELOPMENT_SECRET_KEY):
    raise ImproperlyConfigured(
        "SECRET_KEY is unset or the development key, and DEBUG is off: set SECRET_KEY to a long "
        "random value (e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
        "or DEBUG=true for development."
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "django_countries",
    "ninja",  # Swagger UI at /api/v1/docs from its own static files, not a CDN
    "solutions",
    "accounts",
    "competitions",
    "activity",
    "integrations",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Above the session and CSRF middleware: it sees the `Vary: Cookie` they add.
    "solutions.middleware.PrivateWhenPersonalMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "solutions.middleware.StorageUnavailableMiddleware",
    # Last, so it sees the answer to a login that axes refused.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "leaderboard_site.urls"
WSGI_APPLICATION = "leaderboard_site.wsgi.application"

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
                "activity.context_processors.notifications",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}"),
        conn_max_age=60,
    )
}

# Redis in production (REDIS_URL); a per-process memory cache otherwise. A Redis that is down
# or restarting makes the cache miss, never a request fail (leaderboard_site/cache.py).
REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "leaderboard_site.cache.ForgivingRedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's password check behind django-axes' lockout check (leaderboard_site/logins.py).
AUTHENTICATION_BACKENDS = ["leaderboard_site.logins.LoginBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard"
LOGOUT_REDIRECT_URL = "leaderboard"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Files served at the site root (/favicon.ico), by WhiteNoise like the static files.
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Login throttling (django-axes; see leaderboard_site/logins.py): every login path counts failed
# logins per (username, client address) in the database, shared by all processes.
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # failures are what lockouts need; successes would fill a table
AXES_CLIENT_IP_CALLABLE = "leaderboard_site.logins.client_ip"
# The account's own username, whatever case the login typed (handles are unique without case).
AXES_USERNAME_CALLABLE = "leaderboard_site.logins.lockout_username"
AXES_LOCKOUT_CALLABLE = "leaderboard_site.logins.lockout_response"
# Behind a proxy: the header in which it passes the client's address (e.g. X-Forwarded-For),
# and how many proxies write to it. Unset: the connection's own address (REMOTE_ADDR).
TRUSTED_PROXY_HEADER = env_str("TRUSTED_PROXY_HEADER", "").strip()
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 1)
if TRUSTED_PROXY_COUNT < 1:
    # 0 would take the header's first entry, which the client writes: anyone could pick theirs.
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must be 1 or more (the proxies in front).")

# Forms and the API never take a body bigger than this (a huge answer is a form error, not a 500).
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

# MongoDB: the high-volume data. Unset means the embedded server the run command starts (its
# address as `tools/embedded_mongo.py` gives it: no retryable writes, which it keeps expensively).
MONGODB_URI = env_str("MONGODB_URI", "mongodb://127.0.0.1:27018/?retryWrites=false")
MONGODB_DB = env_str("MONGODB_DB", "leaderboard")
# A fault answers within seconds (503 storage_unavailable with Retry-After), not after pymongo's
# default 30 s: how long to look for a server, and to wait for one command's answer.
MONGODB_SERVER_TIMEOUT_MS = env_int("MONGODB_SERVER_TIMEOUT_MS", 3000)
MONGODB_SOCKET_TIMEOUT_MS = env_int("MONGODB_SOCKET_TIMEOUT_MS", 20000)
# Ids one `$in` on `_id` names: the embedded server's costs the square of its ids (see
# `mongo.ids_per_read`); on real MongoDB, which looks each id up in the index, more is fine.
MONGODB_IDS_PER_READ = env_int("MONGODB_IDS_PER_READ", 25)
if MONGODB_IDS_PER_READ < 1:
    raise ImproperlyConfigured("MONGODB_IDS_PER_READ must be 1 or more (ids a read names).")

# The zone whose midnight starts a leaderboard day.
LEADERBOARD_TIME_ZONE = env_str("LEADERBOARD_TIME_ZONE", "UTC")
# How late a solve may arrive (days before today) and still count.
LEADERBOARD_MAX_LATE_DAYS = env_int("LEADERBOARD_MAX_LATE_DAYS", 30)
# How many past days of final boards stay browsable.
LEADERBOARD_HISTORY_DAYS = env_int("LEADERBOARD_HISTORY_DAYS", 90)

# Celery: MongoDB as the broker by default (kombu's mongodb transport); Redis in production.
CELERY_BROKER_URL = env_str(
    "CELERY_BROKER_URL",
    urlunsplit(urlsplit(MONGODB_URI)._replace(path=f"/{MONGODB_DB}_broker")),
)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    # Samples the ranks of watched programmers and sends rank-drop alerts (boards with a rule).
    "rank-drop-alerts": {"task": "activity.tasks.alerts_check_all_task", "schedule": 60.0},
    # Records rank history: today's ranks of changed boards, and days that ended.
    "rank-history": {"task": "activity.tasks.history_snapshot_all_task", "schedule": 600.0},
    # Counts solves a crash left logged but not yet on the boards, and held solves whose
    # competition is over if the task below has not.
    "repair-unapplied-solves": {"task": "solutions.tasks.solves_repair_task", "schedule": 300.0},
    # Makes tomorrow's board orders in the last hour of today, off the solves' way. Often:
    # whoever solves between tomorrow's beginning and its pass is moved again by its finish,
    # under the lease; the rest of the day a run is one read of the journals' heads.
    "prepare-tomorrow": {"task": "solutions.tasks.days_prepare_task", "schedule": 10.0},
    # Drops the board orders of days past LEADERBOARD_HISTORY_DAYS.
    "prune-old-orders": {"task": "solutions.tasks.orders_prune_task", "schedule": 3600.0},
    # Archives the final standings of competitions that have ended, and counts the solves
    # their freezes held off the public pages (solutions/holds.py) within a minute of the end.
    # Webhooks: competitions that started and boards whose leader changed (integrations app).
    "webhook-events": {"task": "integrations.tasks.webhooks_watch_task", "schedule": 20.0},
    "archive-finished-competitions": {
        "task": "competitions.tasks.archive_finished_competitions_task",
        "schedule": 60.0,
    },
}

# Live boards and alerts (the activity app).
# How long rank history is kept (days); the profile charts show the last 30.
ACTIVITY_HISTORY_DAYS = env_int("ACTIVITY_HISTORY_DAYS", 90)
# How long in-app notifications are kept (days).
ACTIVITY_NOTIFICATIONS_DAYS = env_int("ACTIVITY_NOTIFICATIONS_DAYS", 90)
# The site's address, for links in alert emails.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "leaderboard@localhost")
# Where the file-based mail backend writes (the contest-day run reads the alerts it sent there).
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))

# Production hardening follows DEBUG, so `check --deploy` is clean with DEBUG off.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp; Django 5.2 has no SECURE_CSP yet): the pages load only the
# site's own scripts, styles and images (country flags are static GIFs), and no page has an
# inline script, style element or style attribute. The SVG charts use presentation attributes,
# which a CSP does not govern.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# Rate limits (solutions/limits.py), counted in the cache: wrong answers one programmer may send
# to one problem a minute (a competition may set its own), sign-ups from one client address an
# hour, and writes through one service token a second.
ANSWER_WRONG_PER_MINUTE = env_int("ANSWER_WRONG_PER_MINUTE", 10)
SIGNUP_PER_HOUR = env_int("SIGNUP_PER_HOUR", 5)
SERVICE_TOKEN_WRITES_PER_SECOND = env_int("SERVICE_TOKEN_WRITES_PER_SECOND", 200)

# Solves one web process records at once (solutions/solve_slots.py): past it a solve is refused
# before it writes anything (the API's 503 with Retry-After, a message on the answer form), so
# a burst of solves cannot take every thread and make the pages wait. Below gunicorn's threads
# (4 a worker): a page always finds a thread.
SOLVES_CONCURRENT_MAX = env_int("SOLVES_CONCURRENT_MAX", 2)
if SOLVES_CONCURRENT_MAX < 1:
    raise ImproperlyConfigured("SOLVES_CONCURRENT_MAX must be 1 or more (solves at once).")
