#!/usr/bin/env bash
# The Python references of `make study` (bench/study/py/): a project-local virtual environment,
# .venv-study, with PyTorch, Gymnasium (Box2D) and tinygrad from PyPI at the versions pinned in
# bench/study/py/requirements.txt. Idempotent; never touches the system Python. Exits non-zero
# with the reason when PyPI or a wheel is unavailable; `make study` then runs without the
# Python references and its report says so. The download is large (PyTorch's wheel brings CUDA
# libraries, ~3 GB), so it happens only for `make study`, never for `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-study
req=bench/study/py/requirements.txt
stamp="$venv/.installed-$(sha256sum "$req" | cut -c1-16)"
[ -f "$stamp" ] && exit 0
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
echo "study-venv: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv (large download, once)"
"$venv/bin/python" -m pip install -q -r "$req"
# swig builds box2d-py's extension; a failed import here means the references cannot run.
"$venv/bin/python" -c "import torch, gymnasium, tinygrad; gymnasium.make('LunarLanderContinuous-v3')"
touch "$stamp"
