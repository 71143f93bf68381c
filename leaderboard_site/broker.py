"""Celery's broker on MongoDB: kombu's transport, with a wait for messages that ends as soon as the
worker is told to stop.

kombu's MongoDB transport has no way to be woken up: Celery's loop for such polling transports
asks for messages every second and waits 2 s at a time, and once a stop is asked for it waits
through that round and then one more before it stops. That is 4 to 6 s of an idle worker, past
the 5 s honcho gives `make run`'s processes after Ctrl-C, so the worker was SIGKILLed on every
stop. Here the pause between two polls ends when a stop is asked for: the warm shutdown (which
still waits for running tasks and hands unacknowledged messages back) starts at once. Messages
are fetched exactly as kombu fetches them.
"""

from __future__ import annotations

import time
from queue import Empty

from celery.worker import state
from kombu.transport import mongodb

STOP_CHECK_SECONDS = 0.1


def stop_requested() -> bool:
    """Whether this worker was told to stop, warm or cold: Celery's signal handlers set one of
    these flags to the exit code, often 0 (so not a truth test: 0 == False)."""
    flags = (state.should_stop, state.should_terminate)
    return any(flag is not None and flag is not False for flag in flags)


def pause(seconds: float) -> None:
    """Sleep `seconds`, or until the worker is told to stop."""
    end = time.monotonic() + seconds
    while not stop_requested() and (left := end - time.monotonic()) > 0:
        time.sleep(min(left, STOP_CHECK_SECONDS))


class Transport(mongodb.Transport):
    """kombu's MongoDB transport whose wait between polls ends when the worker must stop."""

    def drain_events(self, connection, timeout: float | None = None) -> None:
        """kombu's loop (a poll of every queue, then a pause of `polling_interval`, until a
        message is delivered or `timeout` passes), ended by a stop request: in the pause, and
        before a poll (a stopping worker fetches nothing more, and needs no server for that)."""
        started = time.monotonic()
        while not stop_requested():
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                pass
            waited = time.monotonic() - started
            if timeout is not None and waited >= timeout:
                break
            interval = self.polling_interval or 0
            pause(interval if timeout is None else min(interval, timeout - waited))
        raise TimeoutError  # socket.timeout: what Celery's loop takes for "no message"
