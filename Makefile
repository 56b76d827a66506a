# Thin wrappers over scripts/, CMake and ctest. `make demo` and `make test` work on a fresh
# Debian 12 machine: each installs what is missing first.
.PHONY: all deps build demo test test-release test-python test-asan test-tsan bench fuzz clean

JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
# Unity builds (the libraries, tools and Python module compile in batches of 8 files; tests and the
# SIMD kernels one by one): the release build 296 -> 197 s on two cores (make test's 25 minutes).
# Pass UNITY=OFF for one-file incremental rebuilds while editing.
UNITY ?= ON

all: build

deps:
	scripts/install_deps.sh core

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEFLOW_WERROR=ON -DCMAKE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	scripts/demo.sh $(BUILD)

test: build
	$(MAKE) test-release
	$(MAKE) test-python
	$(MAKE) test-asan
	$(MAKE) test-tsan

test-release:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

# The Python package (python/) under pytest; the build's .pth file points the venv at it.
test-python: build
	.venv/bin/python -m pytest -q tests/python

# Sanitizer builds keep line tables only (-g1): reports still name file and line, and the
# builds take far less time than with full debug info (make test must stay under 25 minutes).
SANITIZER_DEBUG_INFO ?= -g1

# The C++ tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1" -DCMAKE_UNITY_BUILD=$(UNITY) \
	  -DCMAKE_CXX_FLAGS_DEBUG="$(SANITIZER_DEBUG_INFO)" -DCMAKE_C_FLAGS_DEBUG="$(SANITIZER_DEBUG_INFO)" \
	  -DSPARSEFLOW_SANITIZE=address,undefined -DSPARSEFLOW_WERROR=ON -DSPARSEFLOW_BUILD_PYTHON=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) --timeout 900

# The C ABI's thread test under ThreadSanitizer: one SparseFlowLinear run from 8 threads at once.
# Each caller thread runs one OpenMP thread, so uninstrumented libgomp starts no threads and
# needs no suppressions (docs/capi.md).
# Its SIMD kernels are compiled for the static target only and its glue at -O0: the test is about
# the C ABI's threads, not the kernels (tested on every target in the other builds), and the
# build is for this one test.
test-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=$(UNITY) \
	  -DCMAKE_CXX_FLAGS="-O0 -DHWY_COMPILE_ONLY_STATIC" \
	  -DCMAKE_C_FLAGS="-O0" -DCMAKE_CXX_FLAGS_DEBUG="$(SANITIZER_DEBUG_INFO)" \
	  -DCMAKE_C_FLAGS_DEBUG="$(SANITIZER_DEBUG_INFO)" -DSPARSEFLOW_SANITIZE=thread -DSPARSEFLOW_WERROR=ON \
	  -DSPARSEFLOW_BUILD_PYTHON=OFF
	cmake --build build-tsan -j $(JOBS) --target test_capi_threads
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" build-tsan/bin/test_capi_threads

bench:
	scripts/install_deps.sh bench
	cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEFLOW_BUILD_BENCH=ON -DCMAKE_UNITY_BUILD=$(UNITY)
	cmake --build build-bench -j $(JOBS)
	scripts/bench.sh build-bench

# Each libFuzzer target for FUZZ_SECONDS (default 60) on the bundled data as seed corpus.
FUZZ_SECONDS ?= 60
fuzz:
	scripts/install_deps.sh fuzz
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS="-O1 -g" -DSPARSEFLOW_BUILD_FUZZ=ON -DSPARSEFLOW_BUILD_TESTS=ON
	cmake --build build-fuzz -j $(JOBS)
	scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-bench build-fuzz build-tsan
