#!/usr/bin/env bash
# Project-local Python environment for the tests that talk to Python tools (safetensors, gymnasium
# recordings are committed, not re-run). Idempotent; never touches the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import safetensors, numpy" 2>/dev/null; then
  "$venv/bin/pip" install -q safetensors numpy
fi
