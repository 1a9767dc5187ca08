#!/usr/bin/env bash
# The test command of the README and of CI: installs what is missing, runs the Swift tests,
# checks openapi.yaml, then runs the built binary end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v curl >/dev/null || { sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"; $sudo apt-get install -y -qq curl >/dev/null; }
python3 -c "import openapi_spec_validator" 2>/dev/null || python3 -m pip install -q openapi-spec-validator
python3 -m openapi_spec_validator openapi.yaml
swift build --build-tests
swift test --skip-build
scripts/smoke.sh
