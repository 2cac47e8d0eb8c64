#!/usr/bin/env bash
# Runs ember's benchmarks from a build directory (`make bench` passes build/<preset>).
# Benchmarks are not tests: they print times and ratios and assert nothing.
#
# This machine's environment forces OpenBLAS onto its Haswell (AVX2) kernels; the comparison uses
# the kernel OpenBLAS picks for the CPU (spec/anchors.md), so the benchmark's own command unsets
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE. bench_matmul prints the core type OpenBLAS reports.
set -euo pipefail
build=${1:-build/release}
shift || true

if [ -x "$build/bench/bench_matmul" ]; then
  echo "== matmul: ember vs oneDNN vs OpenBLAS (float32, medians) =="
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$build/bench/bench_matmul" "$@"
else
  echo "bench_matmul not built (needs libdnnl-dev and libopenblas-dev)"
fi
for b in bench_env_steps bench_jit_overhead; do
  if [ -x "$build/bench/$b" ]; then
    echo "== $b =="
    "$build/bench/$b"
  fi
done
