"""Django's Redis cache, forgiving a Redis that is down or restarting.

Everything the site keeps in the cache can be lost at any moment (rendered rows and pages keyed
by the board's version, the visible boards, the version counters for a second, rate-limit
windows), so a cache that does not answer is a cache that misses: reads return the default,
writes are dropped and the request goes on against the databases. Django's own backend raises
instead, and a Redis restart on contest day answered every page with a 500 for a second or two.
The connection gives up within half a second, so a hung Redis costs a request that much, once.

Counters are the exception: the rate limits (`solutions.limits`) count in them, and a limit that
counts nothing lets everybody through (20 wrong answers of 20, 6 reset emails where 3 are
allowed). So `add`, `incr` and `decr` that cannot reach Redis count in this process's memory
instead: each process still limits by itself until Redis is back.
"""

from __future__ import annotations

import functools
import logging

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError, TimeoutError

logger = logging.getLogger(__name__)
UNREACHABLE = (ConnectionError, TimeoutError)
TIMEOUT_SECONDS = 0.5
# One per process (memory caches of one name share their store, whichever thread made them).
LOCAL_COUNTERS = LocMemCache(
    "leaderboard_site.cache.counters", {"OPTIONS": {"MAX_ENTRIES": 10_000}}
)


def _forgiving(missed):
    """Run the cache call; if Redis cannot be reached, log it and answer `missed(args)`."""

    def decorate(method):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except UNREACHABLE as error:
                logger.warning("Cache unavailable on %s: %s", method.__name__, error)
                return missed(*args, **kwargs)

        return call

    return decorate


def _default(key, default=None, *args, **kwargs):
    return default


class OneClientPerPool(RedisCacheClient):
    """Django's client builds a new `redis.Redis` for every cache call, a third of a cached
    read's time; one per connection pool serves every call (a `redis.Redis` is thread-safe: each
    command borrows a connection of the pool)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class ForgivingRedisCache(RedisCache):
    def __init__(self, server, params):
        options = params.setdefault("OPTIONS", {})
        options.setdefault("socket_connect_timeout", TIMEOUT_SECONDS)
        options.setdefault("socket_timeout", TIMEOUT_SECONDS)
        super().__init__(server, params)
        self._class = OneClientPerPool

    get = _forgiving(_default)(RedisCache.get)
    get_many = _forgiving(lambda *a, **k: {})(RedisCache.get_many)
    has_key = _forgiving(lambda *a, **k: False)(RedisCache.has_key)
    # Counters count in this process while Redis is away (see above).
    add = _forgiving(LOCAL_COUNTERS.add)(RedisCache.add)
    incr = _forgiving(LOCAL_COUNTERS.incr)(RedisCache.incr)
    set = _forgiving(lambda *a, **k: None)(RedisCache.set)
    set_many = _forgiving(lambda *a, **k: [])(RedisCache.set_many)
    touch = _forgiving(lambda *a, **k: False)(RedisCache.touch)
    delete = _forgiving(lambda *a, **k: False)(RedisCache.delete)
    delete_many = _forgiving(lambda *a, **k: None)(RedisCache.delete_many)
    clear = _forgiving(lambda *a, **k: None)(RedisCache.clear)
