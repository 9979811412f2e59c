# kern: the two commands a user types are `make demo` and `make test`.
# CMake does the real work in build/; this file only sets things up and calls it
# (the Neovim pattern).

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps build check test test-gpu demo install clean fuzz test-asan test-tsan test-valgrind \
        bench bench-gpu format format-check

all: build

# Installs the Debian packages kern needs when one is missing (as root), or
# prints the one apt-get line to run.
deps:
	@sh scripts/setup.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The suite of one build directory: `test`, `test-asan` and `test-tsan` run it.
check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# With CI set in the environment (as CI services do), the ASan+UBSan suite and
# a 60-second libFuzzer smoke run (20 seconds per target) too.
test: check
	@if [ -n "$$CI" ]; then $(MAKE) test-asan && $(MAKE) fuzz FUZZ_SECONDS=20; fi

# The GPU suites: on a machine without a GPU they print a skip line and pass.
test-gpu: build
	cd $(BUILD) && ctest --output-on-failure -L gpu

demo: build
	$(BUILD)/example_saxpy

# Benchmarks: ratios against baselines measured in the same run. The tables are
# printed and written to bench/results/ (BENCH_SCALE=s makes the CPU problems s
# times bigger, for machines with many cores; docs/performance.md explains them).
bench: build
	sh bench/run.sh $(BUILD) cpu

# On the GPU machine: the hand-written CUDA baseline is compiled by nvcc when
# present, else by NVRTC; CuPy and Triton are measured when python3 has them.
bench-gpu: build
	sh bench/run.sh $(BUILD) gpu

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# libFuzzer targets (clang) in build-fuzz, each run FUZZ_SECONDS from the .kern
# fixtures; inputs that crash land in build-fuzz/fuzz-findings/.
fuzz:
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DKERN_FUZZ=ON -DKERN_BUILD_TESTS=OFF
	cmake --build build-fuzz -j $(JOBS) --target fuzz_frontend fuzz_codegen fuzz_module
	sh tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

test-asan:
	$(MAKE) check BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS="-DKERN_SANITIZE=address,undefined"

test-tsan:
	$(MAKE) check BUILD=build-tsan BUILD_TYPE=Debug CMAKE_ARGS="-DKERN_SANITIZE=thread"

# Each example program on the cpu device under valgrind (memcheck, full leak check).
test-valgrind: build
	sh scripts/valgrind_examples.sh $(BUILD)

# One style for every C file (.clang-format); format-check fails on a difference.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)
