#!/usr/bin/env python3
"""A TCP proxy on loopback that adds a fixed delay each way, like a phone's network.

Usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_MS
Every chunk read from one side is written to the other DELAY_MS later, in order, so a request
and its answer each take DELAY_MS more (a round trip 2 x DELAY_MS more); bytes are not held back
behind one another beyond that (a stream of chunks keeps its pace). Prints "listening on PORT"
once it accepts connections; runs until killed. Standard library only (the copy is
scripts/harness/relay.py's); loopback only.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from harness.relay import serve  # noqa: E402


def main():
    listen_port, target_port, delay_ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    asyncio.run(serve(listen_port, target_port, delay_ms / 1000, ready=lambda port: print(f"listening on {port}", flush=True)))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
