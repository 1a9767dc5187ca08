"""The relays of the harness on loopback sockets: bytes go through both ways, a delay holds each
chunk, a cut closes what is open and `down` refuses new connections, and the partition proxies
(run as a file, as the history check runs them) hold a cut group's bytes until it heals."""
import socket
import socketserver
import threading
import time
import unittest

from harness.relay import Relay
from harness.tcpproxy import TcpProxies


class Echo(socketserver.ThreadingTCPServer):
    """Answers every chunk with the same bytes."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                while data := self.request.recv(65536):
                    self.request.sendall(data)
        super().__init__(("127.0.0.1", 0), Handler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self):
        self.shutdown()
        self.server_close()


def round_trip(port, data=b"hello", timeout=5):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(data)
        return connection.recv(65536)


class RelayInProcess(unittest.TestCase):
    def setUp(self):
        self.echo = Echo()
        self.addCleanup(self.echo.stop)

    def test_bytes_go_both_ways(self):
        relay = Relay(self.echo.port)
        self.addCleanup(relay.close)
        self.assertEqual(round_trip(relay.port), b"hello")

    def test_a_delay_holds_each_way(self):
        relay = Relay(self.echo.port, delay=0.1)
        self.addCleanup(relay.close)
        started = time.monotonic()
        self.assertEqual(round_trip(relay.port), b"hello")
        self.assertGreaterEqual(time.monotonic() - started, 0.2)

    def test_a_cut_closes_open_connections_and_down_refuses_new_ones(self):
        relay = Relay(self.echo.port)
        self.addCleanup(relay.close)
        connection = socket.create_connection(("127.0.0.1", relay.port), timeout=5)
        self.addCleanup(connection.close)
        connection.sendall(b"one")
        self.assertEqual(connection.recv(100), b"one")
        relay.down = True
        self.assertEqual(relay.cut(), 1)
        try:
            self.assertEqual(connection.recv(100), b"")  # closed
        except ConnectionResetError:
            pass
        with socket.create_connection(("127.0.0.1", relay.port), timeout=5) as refused:
            refused.sendall(b"two")
            try:
                self.assertEqual(refused.recv(100), b"")
            except ConnectionResetError:
                pass
        relay.down = False
        self.assertEqual(round_trip(relay.port, b"three"), b"three")


class PartitionProxies(unittest.TestCase):
    def test_a_cut_group_is_held_until_it_heals(self):
        echo = Echo()
        self.addCleanup(echo.stop)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            listen = probe.getsockname()[1]
        proxies = TcpProxies([[0, listen, echo.port]])
        self.addCleanup(proxies.stop)
        connection = socket.create_connection(("127.0.0.1", listen), timeout=5)
        self.addCleanup(connection.close)
        connection.sendall(b"before")
        self.assertEqual(connection.recv(100), b"before")
        proxies.cut(0)
        connection.sendall(b"held")
        connection.settimeout(0.3)
        with self.assertRaises(socket.timeout):
            connection.recv(100)
        proxies.heal(0)
        connection.settimeout(5)
        self.assertEqual(connection.recv(100), b"held")


if __name__ == "__main__":
    unittest.main()
