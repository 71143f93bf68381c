"""Requests of one process that wait for the orders take turns at driving, one at a time.

Every counted solve waits until a lease holder has moved its programmer in the orders
(`applier.orders_catch_up`). Each waiting request used to list itself in the applier document and
look there every few dozen milliseconds: at eight requests at once, a third of the embedded
server's commands were those looks. Now the requests of one process (a gunicorn worker's
threads) share one **driver**, whichever of them comes first: it lists everybody waiting here in
one write, takes the lease for all of them when it is free, and alone looks whether another
process's holder moved them. The others wait on a condition variable, and the driver settles them
as it sees them moved. When the driver's own request is settled (or gives up), the next waiting
request drives. A driver that meets a storage fault fails every request waiting with it at once:
one after another, each would meet it in turn, a timeout each. Nothing here touches the
database: `applier` does, through the driver it passes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(eq=False)
class Waiter:
    """One waiting request: its items (what it listed, e.g. "board|id|tag"), when it gives up,
    whether a driver has listed its items yet, and whether they were seen moved (settled)."""

    items: frozenset[str]
    deadline: float
    listed: bool = False
    settled: bool = False
    failure: BaseException | None = None  # the shared failure of the driver it waited with


class Turns:
    """The waiting requests of this process and which of them drives."""

    def __init__(self, shared_failure: type[Exception]) -> None:
        """`shared_failure`: what a driver fails with that fails everybody waiting with it."""
        self._changed = threading.Condition()
        self._waiting: list[Waiter] = []
        self._driving = False
        self._shared_failure = shared_failure

    def wait(self, me: Waiter, drive: Callable[[Waiter], None]) -> None:
        """Wait until `me` is settled or its deadline passes, running
        `drive(me)` whenever nobody else in this process drives. `drive` returns once `me` is
        settled or its deadline passed; it settles whoever else it can on its way. Raises the
        shared failure when the driver it waited with met one."""
        with self._changed:
            self._waiting.append(me)
        try:
            if self._turn_taken(me):
                self._drive(me, drive)
            if me.failure is not None:
                message = f"The request driving this process's solves failed: {me.failure}"
                raise self._shared_failure(message) from me.failure
        finally:
            with self._changed:
                self._waiting.remove(me)

    def _turn_taken(self, me: Waiter) -> bool:
        """Whether `me` now drives: False once it is settled, failed or out of time meanwhile."""
        with self._changed:
            while self._driving and not me.settled and me.failure is None:
                left = me.deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            if me.settled or me.failure is not None:
                return False
            self._driving = True
            return True

    def _drive(self, me: Waiter, drive: Callable[[Waiter], None]) -> None:
        """Drive, then hand over: to the next waiting request, or, after a shared failure, to
        nobody (everybody waiting fails with it)."""
        try:
            drive(me)
        except self._shared_failure as error:
            with self._changed:
                for waiter in self._waiting:
                    if waiter is not me and not waiter.settled:
                        waiter.failure = error
            raise
        finally:
            with self._changed:
                self._driving = False
                self._changed.notify_all()

    def unsettled(self) -> list[Waiter]:
        """The requests still waiting, for the driver to list (in one write)."""
        with self._changed:
            return [w for w in self._waiting if not w.settled]

    def mark_listed(self, waiters: Iterable[Waiter]) -> None:
        with self._changed:
            for waiter in waiters:
                waiter.listed = True

    def settle(self, moved: Callable[[frozenset[str]], bool]) -> None:
        """Settle every listed request whose items `moved` says have moved, and wake them."""
        with self._changed:
            for waiter in self._waiting:
                if not waiter.settled and waiter.listed and moved(waiter.items):
                    waiter.settled = True
            self._changed.notify_all()
