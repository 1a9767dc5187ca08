"""The fault proxy's own parts, without a socket: which requests a fault takes, how many, and how
it reads a body (Content-Length or chunked) and writes a 500."""
import asyncio
import json
import unittest

from harness.faultproxy import Faults, error_500, read_body, replaced


def body_of(raw, headers):
    async def read():
        reader = asyncio.StreamReader()
        reader.feed_data(raw)
        reader.feed_eof()
        return await read_body(reader, headers)
    return asyncio.run(read())


class FaultsTaken(unittest.TestCase):
    def test_a_fault_takes_the_next_committing_requests_only(self):
        faults = Faults()
        faults.arm({"mode": "500-after", "count": 2})
        self.assertIsNone(faults.take("GET", "/healthz"))
        self.assertIsNone(faults.take("GET", "/v1/sessions/s_1/bundle"))
        self.assertEqual(faults.take("POST", "/v1/sessions/s_1/actions"), "500-after")
        self.assertEqual(faults.take("POST", "/v1/sessions/s_1/actions/batch"), "500-after")
        self.assertIsNone(faults.take("POST", "/v1/sessions/s_1/actions"))
        self.assertEqual(faults.state()["injected"], {"500-after": 2})
        self.assertEqual(faults.state()["mode"], "none")

    def test_match_and_clearing(self):
        faults = Faults()
        faults.arm({"mode": "drop-before", "count": 5, "match": "^GET /healthz$"})
        self.assertIsNone(faults.take("POST", "/v1/sessions/s_1/actions"))
        self.assertEqual(faults.take("GET", "/healthz"), "drop-before")
        faults.arm({"mode": "none"})
        self.assertIsNone(faults.take("GET", "/healthz"))

    def test_what_is_refused(self):
        faults = Faults()
        for document in ({"mode": "500-sometimes"}, {"mode": "500-after", "count": -1}, {"mode": "500-after", "count": "2"}):
            with self.subTest(document):
                self.assertRaises(ValueError, faults.arm, document)


class Messages(unittest.TestCase):
    def test_bodies_by_length_and_chunked(self):
        self.assertEqual(body_of(b"hello, rest", {"content-length": "5"}), b"hello")
        chunked = b"5\r\nhello\r\n3;x=1\r\nabc\r\n0\r\n\r\n"
        self.assertEqual(body_of(chunked + b"next request", {"transfer-encoding": "chunked"}), chunked)
        self.assertEqual(body_of(b"", {}), b"")

    def test_the_500s_alternate_between_a_page_and_a_problem(self):
        page, problem = error_500(1), error_500(2)
        self.assertTrue(page.startswith(b"HTTP/1.1 500 ") and b"text/html" in page)
        head, body = problem.split(b"\r\n\r\n", 1)
        self.assertIn(b"application/problem+json", head)
        self.assertEqual(json.loads(body)["status"], 500)

    def test_garbage_keeps_the_status(self):
        answer = replaced(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n", b"not json")
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 OK\r\n"))
        self.assertTrue(answer.endswith(b"\r\n\r\nnot json"))


if __name__ == "__main__":
    unittest.main()
