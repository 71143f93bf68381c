"""Local services the production settings use (PostgreSQL, Redis, RabbitMQ).

A test that needs one skips with the reason when it is absent, and fails instead under CI=true,
where the services are part of the machine and their absence is a real problem.
"""

from __future__ import annotations

import os

import pytest

from tools.embedded_mongo import port_accepts

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def require(name: str, host: str, port: int) -> None:
    if port_accepts(port, host):
        return
    message = f"{name} is not reachable on {host}:{port}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}, and CI needs it")
    pytest.skip(message)


def require_postgres() -> None:
    require("PostgreSQL", "127.0.0.1", 5432)


def require_redis() -> None:
    require("Redis", "127.0.0.1", 6379)
