"""TCP proxies that can cut a group of connections off, as a network partition does: a child
process of the checker (its forwarding does not compete with the checker's threads for the GIL),
driven through its stdin.

    proxies = TcpProxies([[group, listen_port, upstream_port], ...], popen=...)
    proxies.cut(group)    # stop forwarding: connections stay open, what they send is held;
                          # new connections are accepted and held
    proxies.heal(group)   # forward again: what was held on open connections is delivered;
                          # connections accepted during the cut are closed (their client gave up)
    proxies.stop()

An upstream that refuses (a dead primary) closes the client's connection at once, so libpq tries
the next host. Run as a file (`python3 tcpproxy.py SPEC`, SPEC the JSON list above) it is the
proxy process itself: `ready` once listening, then `cut G` / `heal G` on stdin, each answered `ok`.
Standard library only; the bytes go through harness.relay (imported as a file of this folder when
this runs as a file of its own).
"""
import asyncio
import json
import os
import subprocess
import sys
import threading

try:
    from harness.relay import HOST, connect, splice
except ImportError:  # run as a file: its folder is on the path, the package is not
    from relay import HOST, connect, splice


def proxy_main(spec):
    async def main():
        groups = {}
        for group, _, _ in spec:
            groups.setdefault(group, asyncio.Event()).set()

        class Listener:
            """One listening port. While its upstream refuses connections (a dead server), it
            stops listening, so that connecting to it is refused too, as to the dead server itself
            (libpq then tries its next host; a connection accepted and closed would instead be a
            fatal error for that attempt), and listens again once the upstream accepts."""

            def __init__(self, group, listen, upstream):
                self.group, self.listen, self.upstream = group, listen, upstream
                self.server = None

            async def open(self):
                while self.server is None:
                    try:
                        self.server = await asyncio.start_server(self.handle, HOST, self.listen, reuse_address=True)
                    except OSError:
                        await asyncio.sleep(0.1)

            async def watch_upstream(self):
                while True:
                    await asyncio.sleep(0.2)
                    try:
                        _, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.upstream), 1.0)
                        writer.close()
                        await self.open()
                        return
                    except (OSError, asyncio.TimeoutError):
                        continue

            async def handle(self, client_reader, client_writer):
                gate = groups[self.group]
                if not gate.is_set():
                    await gate.wait()        # accepted during a cut: its client gave up long ago
                    client_writer.close()
                    return
                upstream = await connect(self.upstream, timeout=2.0)
                if upstream is None:
                    client_writer.close()
                    if self.server is not None:
                        self.server.close()  # stop listening; the connections already made stay
                        self.server = None
                        asyncio.ensure_future(self.watch_upstream())
                    return
                await splice((client_reader, client_writer), upstream, gate=gate)

        listeners = [Listener(group, listen, upstream) for group, listen, upstream in spec]
        for listener in listeners:
            await listener.open()
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return  # the checker is gone
            words = line.decode().split()
            if len(words) == 2 and words[0] == "cut":
                groups[int(words[1])].clear()
            elif len(words) == 2 and words[0] == "heal":
                groups[int(words[1])].set()
            print("ok", flush=True)

    asyncio.run(main())


class TcpProxies:
    """The proxy process for `spec` ([[group, listen_port, upstream_port], ...])."""

    def __init__(self, spec, popen=subprocess.Popen):
        self.process = popen([sys.executable, os.path.abspath(__file__), json.dumps(spec)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the TCP proxies did not start")

    def command(self, line):
        with self.lock:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
            if self.process.stdout.readline().strip() != "ok":
                raise RuntimeError(f"the TCP proxies did not take `{line}`")

    def cut(self, group):
        self.command(f"cut {group}")

    def heal(self, group):
        self.command(f"heal {group}")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)
        self.process.stdin.close()
        self.process.stdout.close()


if __name__ == "__main__":
    proxy_main(json.loads(sys.argv[1]))
