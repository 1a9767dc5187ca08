#!/usr/bin/env python3
"""A TCP proxy on loopback that adds a fixed delay each way, like a phone's network.

Usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS
Every chunk read from one side is written to the other DELAY_MS later, in order, so a request
and its answer each take DELAY_MS more (a round trip 2 x DELAY_MS more); bytes are not held back
behind one another beyond that (a stream of chunks keeps its pace). Prints "listening on PORT"
once it accepts connections; runs until killed. Standard library only; loopback only.
"""
import asyncio
import sys


async def pipe(reader, writer, delay):
    """Copies reader to writer, each chunk delay seconds after it was read."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def send():
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if chunk is None:
                break
            writer.write(chunk)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.create_task(send())
    try:
        while True:
            chunk = await reader.read(65536)
            queue.put_nowait((loop.time() + delay, chunk or None))
            if not chunk:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
    finally:
        try:
            writer.close()
        except (OSError, RuntimeError):
            pass


async def main():
    listen_port, target_port, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    delay = delay_ms / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer, delay), pipe(server_reader, client_writer, delay),
                             return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
