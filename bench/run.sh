#!/usr/bin/env bash
# Runs ember's benchmarks from a build directory (`make bench` passes build/<preset>).
# Benchmarks are not tests: they print times and ratios and assert nothing.
#
# Matrix products run once per x86 ISA level the machine has (avx512, avx2, sse2): ember with
# EMBER_ISA at that level, oneDNN held to it with DNNL_MAX_CPU_ISA and OpenBLAS with
# OPENBLAS_CORETYPE (SSE4.1 / Nehalem are the libraries' lowest levels, next to ember's sse2). At the
# machine's own level OpenBLAS picks its kernel for the CPU itself: the command unsets
# OPENBLAS_CORETYPE (this machine's environment may force Haswell) and OPENBLAS_L2_SIZE, unless
# OpenBLAS does not know the CPU and would fall back to its generic Prescott kernels.
# BENCH_LEVELS="avx2 sse2" picks levels. Then the env and jit benchmarks, and the training step
# against libtorch's (bench_step_vs_torch).
set -euo pipefail
build=${1:-build/release}
shift || true

levels=()
if grep -qw avx512f /proc/cpuinfo; then levels+=(avx512); fi
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then levels+=(avx2); fi
levels+=(sse2)
top=${levels[0]}
if [ -n "${BENCH_LEVELS:-}" ]; then read -ra levels <<< "$BENCH_LEVELS"; fi

if [ -x "$build/bench/bench_matmul" ]; then
  echo "== matmul: ember vs oneDNN vs OpenBLAS (float32, medians), per ISA level =="
  for level in "${levels[@]}"; do
    case $level in
      avx512) dnnl=AVX512_CORE core=SkylakeX ;;
      avx2) dnnl=AVX2 core=Haswell ;;
      sse2) dnnl=SSE41 core=Nehalem ;;
      *) echo "unknown level $level"; exit 1 ;;
    esac
    blas=(OPENBLAS_CORETYPE=$core)
    if [ "$level" = "$top" ]; then
      # OpenBLAS's own pick for this CPU, unless it does not know the CPU (its generic Prescott
      # core: e.g. Debian's 0.3.21 on Emerald Rapids), where the level's core stands in.
      probe=$(env -u OPENBLAS_CORETYPE "$build/bench/bench_matmul_paired" --openblas-core 2>/dev/null || true)
      if [ -n "$probe" ] && [ "$probe" != Prescott ]; then blas=(-u OPENBLAS_CORETYPE); fi
    fi
    env -u OPENBLAS_L2_SIZE "${blas[@]}" EMBER_ISA=$level DNNL_MAX_CPU_ISA=$dnnl \
      "$build/bench/bench_matmul" "$@"
    # The same shapes paired in one process (steadier ratios on a shared machine), 2 threads.
    if [ -x "$build/bench/bench_matmul_paired" ]; then
      env -u OPENBLAS_L2_SIZE "${blas[@]}" EMBER_ISA=$level DNNL_MAX_CPU_ISA=$dnnl \
        "$build/bench/bench_matmul_paired" 2
    fi
  done
else
  echo "bench_matmul not built (needs libdnnl-dev and libopenblas-dev)"
fi
for b in bench_env_steps bench_jit_overhead; do
  if [ -x "$build/bench/$b" ]; then
    echo "== $b =="
    "$build/bench/$b"
  fi
done
# The training step against libtorch's, in one process, on 1 thread and on all of the machine's.
if [ -x "$build/bench/bench_step_vs_torch" ]; then
  echo "== bench_step_vs_torch =="
  EMBER_THREADS=1 "$build/bench/bench_step_vs_torch"
  if [ "$(nproc)" -gt 1 ]; then EMBER_THREADS=$(nproc) "$build/bench/bench_step_vs_torch"; fi
else
  echo "bench_step_vs_torch not built (needs libtorch-dev)"
fi
