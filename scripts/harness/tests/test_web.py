"""The harness's HTTP helpers that judge answers: problem_failure (the README's problem document)
and read_action_log (paging through `next`)."""
import json
import unittest

from harness.web import problem_failure, read_action_log

PROBLEM = "application/problem+json"


def problem(**changes):
    document = {"type": "https://flowstack.dev/problems/bad-request", "title": "Bad request", "status": 400,
                "detail": "the body is not JSON", "code": "bad-request"}
    document.update(changes)
    return json.dumps({k: v for k, v in document.items() if v is not None}).encode()


class ProblemFailure(unittest.TestCase):
    def test_a_problem_document_passes(self):
        self.assertIsNone(problem_failure(400, PROBLEM + "; charset=utf-8", problem()))
        self.assertIsNone(problem_failure(400, PROBLEM, problem(), code="bad-request"))

    def test_what_is_not_a_problem_fails(self):
        cases = {
            "plain JSON": (400, "application/json", problem()),
            "no title": (400, PROBLEM, problem(title=None)),
            "status differs": (422, PROBLEM, problem()),
            "not JSON": (400, PROBLEM, b"oops"),
            "an array": (400, PROBLEM, b"[]"),
        }
        for name, (status, content_type, body) in cases.items():
            with self.subTest(name):
                self.assertIsNotNone(problem_failure(status, content_type, body))
        self.assertIn("expected 'session-expired'", problem_failure(400, PROBLEM, problem(), code="session-expired"))

    def test_a_head_answer_is_judged_by_its_content_type(self):
        self.assertIsNone(problem_failure(400, PROBLEM, b"", head=True))
        self.assertIsNotNone(problem_failure(400, "text/plain", b"", head=True))


class ReadActionLog(unittest.TestCase):
    def test_it_follows_next_to_the_end(self):
        log = [{"version": v, "type": "back"} for v in range(1, 8)]
        asked = []

        def fetch(path):
            asked.append(path)
            after = int(path.split("after=")[1].split("&")[0])
            limit = int(path.split("limit=")[1])
            page = log[after:after + limit]
            following = after + limit if after + limit < len(log) else None
            return 200, json.dumps({"actions": page, "next": following}).encode()
        self.assertEqual(read_action_log(fetch, "s1", limit=3), log)
        self.assertEqual(len(asked), 3)

    def test_a_refused_page_raises(self):
        with self.assertRaises(RuntimeError):
            read_action_log(lambda path: (503, b"{}"), "s1", where=" on node2")


if __name__ == "__main__":
    unittest.main()
