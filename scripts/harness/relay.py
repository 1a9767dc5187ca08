"""TCP relays on loopback, the one byte copy every proxy of the harness uses.

    await pipe(reader, writer, delay=0.05, gate=event)  # one direction: held while `gate` is clear,
                                                        # each chunk `delay` s after it was read
    await splice(client, upstream, delay=0.05)          # both directions of one connection
    relay = Relay(target_port)                          # in this process, on a thread of its own:
    relay.port; relay.down = True; relay.cut()          # refuse new connections, close the open ones
    relay.close()

Used by harness.tcpproxy (network partitions between the nodes and PostgreSQL), harness.faultproxy
(event streams, once their head is read), bench/delay_proxy.py (a phone's latency) and
scripts/browser.py (a dropped network under the browser). Standard library only, and no imports of
the package: tcpproxy.py and faultproxy.py import it as a file of their folder when they run as files.
"""
import asyncio
import threading

HOST = "127.0.0.1"
CHUNK = 65536
ENDS = (OSError, RuntimeError, asyncio.IncompleteReadError)


def _close(writer):
    try:
        writer.close()
    except ENDS:
        pass


async def pipe(reader, writer, delay=0.0, gate=None, closing=()):
    """Copies `reader` to `writer` until either side ends, then closes `writer` (and `closing`).

    With `gate` (an asyncio.Event), a chunk read while the gate is clear is held until it is set,
    the end included: a cut connection stays open and what it sends arrives after the heal. With
    `delay`, each chunk (the end included) is written `delay` seconds after it was read, so a
    stream keeps its pace instead of queueing behind one another's delays."""
    try:
        if not delay:
            while True:
                data = await reader.read(CHUNK)
                if gate is not None:
                    await gate.wait()
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            return
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def send():
            while True:
                due, data = await queue.get()
                if due > loop.time():
                    await asyncio.sleep(due - loop.time())
                if gate is not None:
                    await gate.wait()
                if not data:
                    writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        sender = asyncio.create_task(send())
        try:
            while True:
                data = await reader.read(CHUNK)
                queue.put_nowait((loop.time() + delay, data))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()
    except ENDS:
        pass
    finally:
        for stream in (writer, *closing):
            _close(stream)


async def splice(client, upstream, delay=0.0, gate=None):
    """Both directions between two (reader, writer) pairs; when one direction ends, the other
    side's writer is closed too, so the whole connection goes."""
    (client_reader, client_writer), (up_reader, up_writer) = client, upstream
    await asyncio.gather(pipe(client_reader, up_writer, delay, gate, closing=(client_writer,)),
                         pipe(up_reader, client_writer, delay, gate, closing=(up_writer,)),
                         return_exceptions=True)


async def connect(port, timeout=5.0):
    """(reader, writer) of a new connection to `port` on loopback, or None when it is refused or
    does not come within `timeout` seconds."""
    try:
        return await asyncio.wait_for(asyncio.open_connection(HOST, port), timeout)
    except (OSError, asyncio.TimeoutError):
        return None


async def serve(listen_port, target_port, delay=0.0, ready=None):
    """Relays every connection to `listen_port` to `target_port` until cancelled; `ready(port)`
    is called once it listens (on the port the system chose for 0)."""
    async def handle(client_reader, client_writer):
        upstream = await connect(target_port)
        if upstream is None:
            _close(client_writer)
            return
        await splice((client_reader, client_writer), upstream, delay)

    server = await asyncio.start_server(handle, HOST, listen_port)
    if ready:
        ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


class Relay:
    """A relay to `target_port` in this process, on a thread of its own, that a check can cut as
    a dropped network would while the server runs on: `cut()` closes every connection open
    through it, and while `down` is set every new one is closed at once."""

    def __init__(self, target_port, delay=0.0):
        self.target, self.delay = target_port, delay
        self.down = False
        self.loop = asyncio.new_event_loop()
        self.open = set()  # the (client writer, upstream writer) of each connection relayed now
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        if not started.wait(10):
            raise RuntimeError("the relay did not start listening")
        self.port = self.server.sockets[0].getsockname()[1]

    def _run(self, started):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._handle, HOST, 0))
        started.set()
        self.loop.run_forever()

    async def _handle(self, client_reader, client_writer):
        if self.down:
            _close(client_writer)
            return
        upstream = await connect(self.target)
        if upstream is None:
            _close(client_writer)
            return
        pair = (client_writer, upstream[1])
        self.open.add(pair)
        try:
            await splice((client_reader, client_writer), upstream, self.delay)
        finally:
            self.open.discard(pair)

    def cut(self):
        """Closes every connection open through the relay; returns how many there were."""
        def close_all():
            pairs = list(self.open)
            for pair in pairs:
                for writer in pair:
                    writer.transport.abort()
            return len(pairs)
        return asyncio.run_coroutine_threadsafe(self._call(close_all), self.loop).result(5)

    @staticmethod
    async def _call(function):
        return function()

    def close(self):
        """Stops listening, cuts what is open, and ends the relay's thread."""
        if self.loop.is_closed():
            return

        async def stop():
            self.server.close()
            for pair in list(self.open):
                for writer in pair:
                    writer.transport.abort()
            # The connections end by themselves once aborted (a task cancelled while a stream
            # reader waits is reported as an error by Python 3.11's asyncio); a stuck one is cancelled.
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            if tasks:
                _, stuck = await asyncio.wait(tasks, timeout=2)
                for task in stuck:
                    task.cancel()
        try:
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()
