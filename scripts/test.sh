#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing, runs the Swift tests,
# checks openapi.yaml and the live server against it, runs the built binary end to end, and
# runs the Swift tests last (so their summary closes the output).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v curl >/dev/null || { sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"; $sudo apt-get install -y -qq curl >/dev/null; }
python3 -c "import openapi_spec_validator" 2>/dev/null || python3 -m pip install -q openapi-spec-validator
python3 -m openapi_spec_validator openapi.yaml
swift build --build-tests
scripts/conformance.sh
scripts/smoke.sh
swift test --skip-build
