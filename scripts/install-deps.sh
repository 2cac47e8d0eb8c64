#!/usr/bin/env bash
# Installs the Debian packages that ember's build, tests and benchmarks need. Idempotent: does
# nothing when every package is present. Runs as root (CI and the dev machines are root).
set -euo pipefail
# file, dpkg-dev (in build-essential) and pkgconf: `make deb` and the tests of the install.
pkgs=(build-essential cmake ninja-build g++ python3 python3-venv file pkgconf
      libgtest-dev libgmock-dev libbenchmark-dev libtorch-dev
      libbox2d-dev libcli11-dev nlohmann-json3-dev libpng-dev
      libdnnl-dev libopenblas-dev
      libsqlite3-dev
      libonnx-dev libprotobuf-dev libonnx-testdata
      python3-torch python3-torchvision)
missing=()
for p in "${pkgs[@]}"; do
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
