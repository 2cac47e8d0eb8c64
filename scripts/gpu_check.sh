#!/usr/bin/env bash
# The cuda device on a machine with an NVIDIA GPU (issue 41), in a few minutes, with no network.
#
#   scripts/gpu_check.sh fetch   on a machine with Debian's package mirror (this repo's usual
#                                one): downloads the .deb files of the build's packages that a
#                                GPU machine may lack into .gpu-debs/ (git-ignored), to be carried
#                                to it with the tree
#   scripts/gpu_check.sh         on the GPU machine: builds build/gpu-check from the tree (the
#                                CUDA toolkit's NVRTC, cuBLAS; GoogleTest, no libtorch), then runs
#                                the cuda device's checks against cpu and interp in one binary
#                                (tests/gpu: device memory, kernels, 200 fuzz graphs and 50
#                                products, the PPO step at batch 10,000, eager and jit), then jit
#                                replays as CUDA graphs (a model moved to cuda, jitted Adam steps
#                                against eager cpu, the graph built once and relaunched), and times
#                                the products against cuBLAS (bench/cuda_products.cpp)
#
# Exits 2 at once, saying so, where there is no NVIDIA driver or GPU. Where .gpu-debs/ is carried,
# its .deb files are unpacked under /tmp/ember-gpu-deps (not into /), and CMake looks
# there first.
set -euo pipefail
cd "$(dirname "$0")/.."

# The run set's packages the build needs (scripts/install-deps.sh), their libraries, and GoogleTest.
debs=(libbox2d-dev libbox2d2 libcli11-dev nlohmann-json3-dev libpng-dev libpng16-16 zlib1g-dev
      libsqlite3-dev libsqlite3-0 libgtest-dev libgmock-dev)

if [[ "${1:-}" == "fetch" ]]; then
  mkdir -p .gpu-debs
  (cd .gpu-debs && apt-get download "${debs[@]}")
  echo "gpu_check: $(ls .gpu-debs | wc -l) packages in .gpu-debs/ (carry it with the tree)"
  exit 0
fi

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "gpu_check: no NVIDIA GPU here (nvidia-smi finds none): the cuda device's checks need one" >&2
  exit 2
fi

cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
prefix=/tmp/ember-gpu-deps
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$cuda_root"
            -DEMBER_GPU_CHECK=ON -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_PYTHON=OFF
            -DEMBER_BUILD_BENCH=AUTO)
if compgen -G ".gpu-debs/*.deb" >/dev/null; then
  mkdir -p "$prefix"
  for f in .gpu-debs/*.deb; do dpkg -x "$f" "$prefix"; done
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix/usr")
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$prefix/usr/lib/x86_64-linux-gnu"
fi

build=build/gpu-check
mkdir -p build
cmake -S . -B "$build" "${cmake_args[@]}" >"$build.configure.log" 2>&1 || {
  cat "$build.configure.log"
  echo "gpu_check: configure failed (missing packages: run 'scripts/gpu_check.sh fetch' where" \
       "the package mirror is reachable, and carry .gpu-debs/)" >&2
  exit 1
}
grep -q "the cuda device is built" "$build.configure.log" || {
  echo "gpu_check: CMake did not find the CUDA toolkit at $cuda_root (set CUDAToolkit_ROOT)" >&2
  exit 1
}
cmake --build "$build" -j "$(nproc)" --target gpu_check_tests bench_cuda_products ember_cli

echo "== ember --version"
"$build/apps/ember" --version | tee "$build.version.log"
grep -q "^cuda devices:" "$build.version.log" || {
  echo "gpu_check: the cuda device is unavailable on this GPU machine (above)" >&2
  exit 1
}
echo "== the cuda device against cpu and interp"
# Every case must run here: a skip (the device unavailable) fails the check.
graphs='CudaDevice.JitReplaysRunAsCudaGraphs*'
EMBER_CACHE_DIR="$build/kernel-cache" EMBER_FUZZ_CUDA_GRAPHS="${EMBER_FUZZ_CUDA_GRAPHS:-200}" \
  "$build/tests/gpu/gpu_check_tests" \
  --gtest_filter="CudaDevice.*:CudaCompile.*:CodegenFuzz.*Cuda*-$graphs" | tee "$build.tests.log"
echo "== jit replays as CUDA graphs against cpu"
EMBER_CACHE_DIR="$build/kernel-cache" "$build/tests/gpu/gpu_check_tests" --gtest_filter="$graphs" \
  | tee -a "$build.tests.log"
if grep -q "^\[  SKIPPED \]" "$build.tests.log"; then
  echo "gpu_check: cases were skipped on a GPU machine (above)" >&2
  exit 1
fi
echo "== products: ember's cuda device against cuBLAS"
EMBER_CACHE_DIR="$build/kernel-cache" "$build/bench/bench_cuda_products"
echo "gpu_check: passed"
