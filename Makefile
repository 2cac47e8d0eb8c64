# ember's front door: every target first makes sure the Debian packages are present, then drives the
# CMake presets (CMakePresets.json). `make test` and `make train` are the README's two commands.
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: deps configure ember build test test-dev test-opencl gpu-check train install deb bench bench-build bench-mpi \
        study onnx-conformance onnx-networks bench-onnx format clean fresh-check examples \
        example-digits example-digits-torch example-attention bench-cnn

# Debian packages by set (scripts/install-deps.sh): run for the ember command and the libraries,
# test and bench beside it. `make deps` installs every set (a developer's machine).
deps:
	@bash scripts/install-deps.sh

# The tests and benchmarks are configured when their packages are installed (EMBER_BUILD_TESTS and
# EMBER_BUILD_BENCH default to AUTO); `make test` and `make bench` turn theirs ON, which the build
# tree keeps.
configure:
	@bash scripts/install-deps.sh run
	@cmake --preset $(PRESET) >/dev/null

# The ember command alone (build/<preset>/apps/ember): the layers' libraries it links, not the
# shared libraries, tests or benchmarks.
ember: configure
	@cmake --build --preset $(PRESET) -j $(JOBS) --target ember_cli

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

test:
	@bash scripts/install-deps.sh run test
	@cmake --preset $(PRESET) -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_PYTHON=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS)
	@bash scripts/python-venv.sh
	@ctest --preset $(PRESET) -j $(JOBS)

# The opencl device (on PoCL: OpenCL on the CPU) under the whole parity suite and 200 fuzz graphs;
# `make test` runs a subset (tests/parity/CMakeLists.txt, tests/codegen/test_fuzz.cpp).
test-opencl:
	@bash scripts/install-deps.sh run test
	@cmake --preset $(PRESET) -DEMBER_BUILD_TESTS=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS) --target parity_tests codegen_fuzz_tests
	@EMBER_PARITY_DEVICES=opencl $(BUILD)/tests/parity/parity_tests
	@EMBER_FUZZ_OPENCL_GRAPHS=200 $(BUILD)/tests/codegen/codegen_fuzz_tests --gtest_filter='*Opencl*'

# The cuda device on a machine with an NVIDIA GPU (scripts/gpu_check.sh: its own build, no network;
# exits 2 without a GPU).
gpu-check:
	@bash scripts/gpu_check.sh

# Sanitizer build (ASan + UBSan) of the whole test suite.
test-dev:
	@$(MAKE) --no-print-directory test PRESET=dev

train: ember
	@$(BUILD)/apps/ember train $(ARGS)

# The worked examples (examples/, programs built with the rest; install-deps.sh examples).
examples: configure
	@bash scripts/install-deps.sh examples
	@cmake --build --preset $(PRESET) -j $(JOBS) --target example_digits example_attention

# A LeNet-style CNN on scikit-learn's 8x8 digits (exported to $(BUILD)/digits-data once): prints
# the test accuracy and the training time. ARGS="--epochs N --min-accuracy A".
example-digits: examples
	@bash examples/digits/run.sh $(BUILD) $(ARGS)

# The same model and settings in PyTorch (Debian's python3-torch), for the time comparison.
example-digits-torch: examples
	@bash examples/digits/run.sh $(BUILD) --torch $(ARGS)

# A two-layer transformer encoder learns to sort sequences of digits, until 99% of a held-out set
# is sorted exactly. ARGS="--max-steps N --goal A".
example-attention: examples
	@$(BUILD)/examples/attention $(ARGS)

# The ember command, libember (ember::ember, ember::rl), the public headers, the CMake package and
# the pkg-config files under PREFIX (cmake/install.cmake); as root, then the loader's cache, so that
# a program finds libember.so.0 under /usr/local/lib.
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ "$$(id -u)" = 0 ]; then ldconfig; fi

# The same files as a Debian package under /usr: $(BUILD)/package/ember_<version>_amd64.deb
# (cmake/package.cmake).
deb: build
	@cpack --config $(BUILD)/CPackConfig.cmake
	@ls $(BUILD)/package/ember_*_amd64.deb

# The benchmarks and the study's programs, with their references (install-deps.sh bench).
bench-build:
	@bash scripts/install-deps.sh run bench
	@cmake --preset $(PRESET) -DEMBER_BUILD_BENCH=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS)

bench: bench-build
	@bash bench/run.sh $(BUILD)

# Data-parallel training measured (README, "Beyond one machine"): alternating pairs of
# `ember train` as 1 rank x 2 threads and `mpirun -np 2` x 1 thread, all_reduce alone on 1 and 2
# ranks, and the latency-bandwidth model's 64-node prediction (scripts/mpi_scaling.py; ARGS:
# --pairs, --epochs, --latency-us, --gbit, --cores-per-node). Writes $(BUILD)/bench-mpi/report.md.
bench-mpi: configure
	@cmake --build --preset $(PRESET) -j $(JOBS) --target ember_cli bench_allreduce
	@python3 scripts/mpi_scaling.py --build $(BUILD) --out $(BUILD)/bench-mpi $(ARGS)

# The CNN training step (examples/digits' LeNet, forward, cross-entropy, backward, Adam) at batch 64
# and 256: ember (eager and jit replay) beside libtorch in one process, paired process by process
# with PyTorch from Python (Debian's python3-torch). ARGS="--pairs P --rounds R --reps N".
bench-cnn:
	@bash scripts/install-deps.sh run bench examples
	@cmake --preset $(PRESET) -DEMBER_BUILD_BENCH=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS) --target bench_cnn_step
	@/usr/bin/python3 bench/cnn_step.py $(BUILD) $(ARGS)

# The study (docs/training.md) side by side with libtorch and the BLAS libraries, one process at a
# time: writes runs/study-<time>/report.md and raw.jsonl. ARGS="--short" (seconds), "--full"
# (adds time to the target over 5 seeds), "--out DIR".
# The Python references (PyTorch on Gymnasium, tinygrad) run from .venv-study, created from PyPI on
# the first run (scripts/study-venv.sh); without it the study runs without them and says so.
study: bench-build
	@bash scripts/study-venv.sh || echo "study: the Python references are unavailable (see above); running without them"
	@python3 bench/study/study.py --build $(BUILD) $(ARGS)

# ONNX's backend tests (Debian's libonnx-testdata, every folder) on cpu and interp: writes
# onnx-conformance.md (ARGS: --devices cpu, --out FILE, --jobs N, --timeout S).
onnx-conformance: ember
	@bash scripts/install-deps.sh test
	@python3 scripts/onnx_conformance.py --build $(BUILD) $(ARGS)

# Real networks (ResNet, MobileNet, SqueezeNet, BERT-class; fixed-seed random weights) exported
# with Debian's torch, run on ember and on ONNX Runtime (.venv): writes onnx-networks.md (ARGS:
# --set small for the ones `make test` runs, --only NAME..., --device interp).
onnx-networks: ember
	@bash scripts/install-deps.sh test
	@bash scripts/python-venv.sh
	@.venv/bin/python scripts/onnx_networks.py --build $(BUILD) --out $(BUILD)/onnx-networks \
	  --set all --report onnx-networks.md $(ARGS)

# The README's two commands in a fresh Debian 12 root (mmdebstrap + chroot; as root; ~20-30 min).
# REV=<commit> checks another committed revision (default HEAD).
# Real networks timed against ONNX Runtime (scripts/onnx_bench.py): 1 and 2 threads, batch 1 and
# 8, paired processes; then at batch 1: start-up on a cold and a warm kernel cache, each network's
# largest convolution against oneDNN (bench_conv_paired) and ResNet-50's convolutions as shares of
# the measured peak; writes $(BUILD)/onnx-bench/report.md. ARGS="--only resnet50 --pairs 1".
bench-onnx:
	@bash scripts/install-deps.sh run test bench
	@cmake --preset $(PRESET) -DEMBER_BUILD_BENCH=ON >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS) --target ember_cli bench_conv_paired
	@bash scripts/python-venv.sh
	@python3 scripts/onnx_bench.py --build $(BUILD) --out $(BUILD)/onnx-bench $(ARGS)

fresh-check:
	@bash scripts/fresh-check.sh $(REV)

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
