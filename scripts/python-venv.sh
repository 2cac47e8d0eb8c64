#!/usr/bin/env bash
# Project-local Python environment for the tests that talk to Python tools: safetensors (checkpoint
# interop) and ONNX Runtime with onnx (the reference outputs of the real networks,
# scripts/onnx_networks_reference.py). Gymnasium recordings are committed, not re-run.
# Idempotent; never touches the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import safetensors, numpy, onnxruntime, onnx" 2>/dev/null; then
  "$venv/bin/pip" install -q safetensors numpy onnxruntime onnx
fi
