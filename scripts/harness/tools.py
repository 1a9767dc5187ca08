"""The pinned Python clients the checks drive (OpenFeature's SDK and OFREP provider, GrowthBook's
SDK, gbstats, jsonschema, schemathesis, openapi-spec-validator): they live in the venv that
scripts/python-tools.sh makes and prints.

    from harness.tools import use_pinned_tools
    use_pinned_tools("ofrep_client", "openfeature.contrib.provider.ofrep")   # before importing them

When a module is missing and this is not that venv's python, the script runs again under it (with
the same arguments; python-tools.sh installs what is missing first), so `python3 scripts/X.py`
works as well as `$(scripts/python-tools.sh)/python scripts/X.py`. Standard library only.
"""
import importlib.util
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_AGAIN = "FLOWSTACK_PINNED_TOOLS"


def tools_bin():
    """The bin directory of the venv of the pinned tools (made or brought up to date first)."""
    result = subprocess.run([os.path.join(REPO, "scripts", "python-tools.sh")], stdout=subprocess.PIPE, text=True,
                            timeout=1800)
    if result.returncode != 0 or not result.stdout.strip():
        raise SystemExit(f"scripts/python-tools.sh failed (status {result.returncode})")
    return result.stdout.strip().splitlines()[-1]


def _present(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def use_pinned_tools(name, *modules):
    """Returns when every one of `modules` can be imported; otherwise runs this script again
    under the venv's python, or exits with a sentence when that was tried already."""
    missing = [module for module in modules if not _present(module)]
    if not missing:
        return
    if os.environ.get(_AGAIN):
        raise SystemExit(f"{name}: {', '.join(missing)} missing: run it with the python of scripts/python-tools.sh")
    python = os.path.join(tools_bin(), "python")
    print(f"{name}: {', '.join(missing)} missing here; running again with {python}", file=sys.stderr, flush=True)
    os.execve(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:], dict(os.environ, **{_AGAIN: "1"}))
