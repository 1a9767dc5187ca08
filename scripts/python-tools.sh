#!/usr/bin/env bash
# Makes .build/python, a virtual environment with the pinned Python tools the tests use
# (openapi-spec-validator, schemathesis; OpenFeature's SDK and its OFREP provider, the real client
# scripts/ofrep_client.py drives; GrowthBook's Python SDK, the real client of
# scripts/growthbook_client.py; GrowthBook's stats engine gbstats, which scripts/gbstats_check.py
# compares the experiment report with, and which brings numpy, scipy and pandas), and prints its
# bin directory. Debian's own python3 refuses system-wide pip installs (PEP 668), so the tools
# live in a venv of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/python
tools=(openapi-spec-validator==0.9.0 schemathesis==4.32.5 openfeature-sdk==0.10.0 openfeature-provider-ofrep==0.3.0 growthbook==4.0.0 gbstats==0.8.0)
# jsonschema: the validator scripts/schemas.py checks schemas/*.schema.json and the shipped files with.
tools+=(jsonschema==4.26.0)
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import venv" 2>/dev/null; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
fi
stamp="$venv/.installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "${tools[*]}" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${tools[@]}" >&2
    echo "${tools[*]}" >"$stamp"
fi
echo "$PWD/$venv/bin"
