#!/usr/bin/env bash
# Exports scikit-learn's digits once (into BUILD/digits-data) and trains the example CNN on them;
# with --torch, the PyTorch pair (digits_torch.py) instead.
# Usage: examples/digits/run.sh BUILD [--torch] [--epochs N] [--min-accuracy A]
set -euo pipefail
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
data=$build/digits-data
if [ ! -f "$data/test_y.npy" ]; then
  /usr/bin/python3 "$here/export_digits.py" "$data"
fi
if [ "${1:-}" = --torch ]; then
  shift
  exec /usr/bin/python3 "$here/digits_torch.py" "$data" "$@"
fi
exec "$build/examples/digits" "$data" "$@"
