"""No compiled Python is committed (issue 25): `git ls-files` names no __pycache__ folder and no
.pyc/.pyo file. Skipped outside a git checkout."""
import os
import shutil
import subprocess
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def compiled(paths):
    return [p for p in paths if "__pycache__/" in p or p.endswith((".pyc", ".pyo"))]


class NoCompiledPython(unittest.TestCase):
    def test_compiled_files_are_recognised(self):
        self.assertEqual(compiled(["scripts/harness/__pycache__/web.cpython-311.pyc", "a.pyo", "scripts/history.py"]),
                         ["scripts/harness/__pycache__/web.cpython-311.pyc", "a.pyo"])

    def test_none_is_committed(self):
        if not shutil.which("git") or not os.path.exists(os.path.join(REPO, ".git")):
            self.skipTest("not a git checkout")
        listing = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], stdout=subprocess.PIPE, check=True).stdout
        self.assertEqual(compiled(listing.decode("utf-8", "replace").split("\0")), [])


if __name__ == "__main__":
    unittest.main()
