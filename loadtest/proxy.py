"""A TCP proxy that adds a fixed latency to every round trip: MongoDB over a network.

On this machine MongoDB is a process on loopback; in production each command crosses a network
and a majority-acknowledged write takes milliseconds. The site connects to the proxy, which
holds what the client sends for `delay_seconds` before passing it on (the reply comes straight
back), so every request-and-reply costs that much more, in order, per connection. It
runs on its own event loop in a thread of the driver.
"""

from __future__ import annotations

import asyncio
import threading

from tools.embedded_mongo import free_port


class LatencyProxy:
    def __init__(self, *, target: tuple[str, int], delay_seconds: float) -> None:
        self.target = target
        self.delay = delay_seconds
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="latency-proxy", daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            self._connections_close()

    def _connections_close(self) -> None:
        """End the connections still open, each pipe's `finally` run while the loop can still
        run it, then close the loop: a pipe left suspended would be finished by the garbage
        collector, on a closed loop."""
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()

    async def _connection(self, client_reader, client_writer) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()  # the server is down: the client sees a dropped connection
            return
        await asyncio.gather(
            self._pipe(client_reader, server_writer, self.delay),
            self._pipe(server_reader, client_writer, 0.0),
            return_exceptions=True,
        )

    @staticmethod
    async def _pipe(reader, writer, delay: float) -> None:
        """Copy `reader` to `writer`, each chunk `delay` after it arrived. Chunks are timed on
        arrival and forwarded by another task, so a large message pays the latency once, as on
        a network (a link's delay, not a delay per chunk read)."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue = asyncio.Queue()

        async def forward() -> None:
            while (item := await chunks.get()) is not None:
                due, chunk = item
                if (wait := due - loop.time()) > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()

        forwarding = asyncio.create_task(forward())
        try:
            while chunk := await reader.read(65536):
                chunks.put_nowait((loop.time() + delay, chunk))
            chunks.put_nowait(None)
            await forwarding
        finally:
            forwarding.cancel()
            writer.close()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
