# ember's front door: every target first makes sure the Debian packages are present, then drives the
# CMake presets (CMakePresets.json). `make test` and `make train` are the README's two commands.
PRESET ?= release
JOBS ?= $(shell nproc)
BUILD := build/$(PRESET)

.PHONY: deps configure build test test-dev train bench format clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

test: build
	@bash scripts/python-venv.sh
	@ctest --preset $(PRESET) -j $(JOBS)

# Sanitizer build (ASan + UBSan) of the whole test suite.
test-dev:
	@$(MAKE) --no-print-directory test PRESET=dev

train: build
	@$(BUILD)/apps/ember train $(ARGS)

bench: build
	@bash bench/run.sh $(BUILD)

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	rm -rf build
