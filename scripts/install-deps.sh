#!/usr/bin/env bash
# Installs the Debian packages that ember needs, by set:
#   run    the `ember` command and the libraries (`make train`, `make install`, `make deb`)
#   test   what the test suite needs beyond run (`make test` installs run and test)
#   bench  what the benchmarks and the study need beyond run (`make bench`, `make study`)
#   examples  what the worked examples need beyond run (`make example-digits`, ...)
# Usage: scripts/install-deps.sh [run|test|bench|examples]...  (no argument: every set, a
# developer's machine). Idempotent: does nothing when every package is present. Runs as root (CI and the dev
# machines are root).
set -euo pipefail
# file and dpkg-dev (in build-essential): `make deb`. libonnx-dev and libprotobuf-dev: `ember onnx`.
# libsqlite3-dev: the schedule search's plan cache. libopenmpi-dev and openmpi-bin (mpirun):
# data-parallel training, `mpirun -np N ember train` (src/dist); the tests run it on 2 ranks.
# ocl-icd-opencl-dev and opencl-c-headers: the opencl device (the ICD loader and the headers; the
# driver is the machine's own). libcpp-httplib-dev: `ember viz`'s HTTP server.
run=(build-essential cmake ninja-build g++ file
     libbox2d-dev libcli11-dev nlohmann-json3-dev libpng-dev
     libonnx-dev libprotobuf-dev libsqlite3-dev libopenmpi-dev openmpi-bin
     ocl-icd-opencl-dev opencl-c-headers libcpp-httplib-dev)
# GoogleTest (GTest's CMake package needs GMock's libraries too); libtorch: the parity, training
# parity and PPO-loss references; OpenBLAS and oneDNN: the speed guard's and the study's
# references (study.short, study.direct_kernel); libonnx-testdata: onnx.conformance_subset;
# Debian's torch and torchvision: the real networks' export (onnx.networks); python3-venv: the
# project venv (scripts/python-venv.sh); pkgconf: the install tests (pkg-config's flags);
# pocl-opencl-icd: an OpenCL driver on the CPU, which the opencl device's tests run on;
# python3-sklearn: the digits example's data, which the suite trains on at reduced size.
# python3-dev, pybind11-dev and libdlpack-dev: the Python package's extension (python/);
# python3-numpy and python3-pytest: its pytest suite (Debian's python3-torch is one of its
# references). chromium, chromium-driver and python3-selenium: the viz page's test in a headless
# browser; graphviz: the viz page's Graphviz layout of graphs (dot -Tsvg), which its tests run.
test=(libgtest-dev libgmock-dev libtorch-dev
      libopenblas-dev libdnnl-dev libonnx-testdata
      python3 python3-venv python3-torch python3-torchvision pkgconf pocl-opencl-icd
      python3-sklearn python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest
      chromium chromium-driver python3-selenium graphviz)
# Google Benchmark; oneDNN, OpenBLAS and libtorch: the references the benchmarks and the study
# compare against; python3-venv: the study's Python references (scripts/study-venv.sh).
bench=(libbenchmark-dev libdnnl-dev libopenblas-dev libtorch-dev python3 python3-venv)
# python3-sklearn: the 8x8 digits that examples/digits trains on (shipped in the package, for the
# system interpreter); python3-torch: the examples' PyTorch pairs (make example-digits-torch).
examples=(python3 python3-sklearn python3-torch)

sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(run test bench examples)
pkgs=()
for s in "${sets[@]}"; do
  case $s in
    run) pkgs+=("${run[@]}") ;;
    test) pkgs+=("${test[@]}") ;;
    bench) pkgs+=("${bench[@]}") ;;
    examples) pkgs+=("${examples[@]}") ;;
    *)
      echo "install-deps: unknown package set '$s' (run, test, bench or examples)" >&2
      exit 2
      ;;
  esac
done
missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages and not root; install them with: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
