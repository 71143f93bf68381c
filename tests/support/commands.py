"""What a MongoDB client sent and was told, for the tests that count commands, bytes or reads.

A cost test asserts command counts and sizes, never seconds; each used to carry its own pymongo
listener recording its own slice. This one records every command once (its name, document, the
bytes sent and the bytes of its reply), and each test takes the view it asserts on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import bson
from pymongo import monitoring


@dataclass
class Command:
    """One command as the client sent it, and the size of its reply."""

    name: str
    document: Mapping[str, Any]
    sent: int
    received: int | None = None  # None until it succeeds; a failed command stays None


class CommandLog(monitoring.CommandListener):
    """Every command a `MongoClient(event_listeners=[log])` sends while `on`, in order."""

    def __init__(self, *, on: bool = True) -> None:
        self.commands: list[Command] = []
        self.on = on
        self._waiting: dict[int, Command] = {}  # by request id, until the reply

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if self.on:
            command = Command(event.command_name, event.command, len(bson.encode(event.command)))
            self.commands.append(command)
            self._waiting[event.request_id] = command

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        command = self._waiting.pop(event.request_id, None)
        if command is not None:
            command.received = len(bson.encode(event.reply))

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self._waiting.pop(event.request_id, None)

    @contextmanager
    def recording(self) -> Iterator[None]:
        """Record what the block sends (the log is not cleared)."""
        self.on = True
        try:
            yield
        finally:
            self.on = False

    def clear(self) -> None:
        self.commands.clear()

    def __len__(self) -> int:
        return len(self.commands)

    @property
    def names(self) -> list[str]:
        return [command.name for command in self.commands]

    def named(self, name: str) -> list[Command]:
        """The commands called `name` ("find", "createIndexes", ...)."""
        return [command for command in self.commands if command.name == name]
