"""Django's Redis cache, forgiving a Redis that is down or restarting.

Everything the site keeps in the cache can be lost at any moment (rendered rows and pages keyed
by the board's version, the visible boards, the version counters for a second, rate-limit
windows), so a cache that does not answer is a cache that misses: reads return the default,
writes are dropped and the request goes on against the databases. Django's own backend raises
instead, and a Redis restart on contest day answered every page with a 500 for a second or two.
The connection gives up within half a second, so a hung Redis costs a request that much, once.
"""

from __future__ import annotations

import functools
import logging

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError, TimeoutError

logger = logging.getLogger(__name__)
UNREACHABLE = (ConnectionError, TimeoutError)
TIMEOUT_SECONDS = 0.5


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


class ForgivingRedisCache(RedisCache):
    def __init__(self, server, params):
        options = params.setdefault("OPTIONS", {})
        options.setdefault("socket_connect_timeout", TIMEOUT_SECONDS)
        options.setdefault("socket_timeout", TIMEOUT_SECONDS)
        super().__init__(server, params)

    get = _forgiving(_default)(RedisCache.get)
    get_many = _forgiving(lambda *a, **k: {})(RedisCache.get_many)
    has_key = _forgiving(lambda *a, **k: False)(RedisCache.has_key)
    add = _forgiving(lambda *a, **k: False)(RedisCache.add)
    set = _forgiving(lambda *a, **k: None)(RedisCache.set)
    set_many = _forgiving(lambda *a, **k: [])(RedisCache.set_many)
    touch = _forgiving(lambda *a, **k: False)(RedisCache.touch)
    delete = _forgiving(lambda *a, **k: False)(RedisCache.delete)
    delete_many = _forgiving(lambda *a, **k: None)(RedisCache.delete_many)
    # A counter that cannot be read counts as just started (a rate limit then lets the call
    # through: better than refusing everybody while the cache is away).
    incr = _forgiving(lambda key, delta=1, *a, **k: delta)(RedisCache.incr)
    clear = _forgiving(lambda *a, **k: None)(RedisCache.clear)
