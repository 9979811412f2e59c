# kern: the two commands a user types are `make demo` and `make test`.
# CMake does the real work in build/; this file only sets things up and calls it
# (the Neovim pattern).

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps deps-build configure configure-user build check test test-gpu demo install \
        clean fuzz test-asan test-tsan test-valgrind bench bench-gpu format format-check

all: build

# Installs the Debian packages kern needs when one is missing (as root), or
# prints the one apt-get line to run. deps-build: only what the library,
# kernc and the examples need (demo, install); deps: the test suites' too.
deps:
	@sh scripts/setup.sh test

deps-build:
	@sh scripts/setup.sh build

# Two configurations of one build directory. Development and CI (build, check,
# test and the sanitizer and fuzz builds): warnings are errors, the Criterion
# suites are built. A user's demo and install: no -Werror (a newer compiler's
# new warning must not stop an install) and no test suites. CMake's own
# default is the user's; switching recompiles with the other flags.
DEV_ARGS  = -DKERN_WERROR=ON -DKERN_BUILD_TESTS=ON
USER_ARGS = -DKERN_WERROR=OFF -DKERN_BUILD_TESTS=OFF
# What demo and install build: the libraries, kernc, the examples.
USER_TARGETS = kern_static kern_shared kernc $(patsubst examples/%.c,example_%,$(wildcard examples/*.c))

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(DEV_ARGS) $(CMAKE_ARGS)

configure-user: deps-build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(USER_ARGS) $(CMAKE_ARGS)

build: configure
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

# A first look: builds quietly (the log is kept; shown when something fails),
# runs examples/saxpy and one `kernc run`, and says what to read next.
DEMO_LOG = $(BUILD)/demo.log
demo: deps-build
	@mkdir -p $(BUILD)
	@echo "kern: building libkern, kernc and the examples in $(BUILD)/ (log: $(DEMO_LOG))"
	@{ $(MAKE) --no-print-directory configure-user CMAKE_ARGS="$(CMAKE_ARGS) --log-level=WARNING" && \
	   cmake --build $(BUILD) -j $(JOBS) --target $(USER_TARGETS); } >$(DEMO_LOG) 2>&1 || \
	  { cat $(DEMO_LOG); echo "kern: the build failed; the log above is in $(DEMO_LOG)"; exit 1; }
	@echo
	@$(BUILD)/example_saxpy
	@echo
	@echo "$$ $(BUILD)/kernc run examples/saxpy.kern saxpy --arg x=range:8 --arg y=ones:8 --arg a=2"
	@$(BUILD)/kernc run examples/saxpy.kern saxpy --arg x=range:8 --arg y=ones:8 --arg a=2
	@echo
	@echo "Next:"
	@echo "  read examples/saxpy.c and examples/saxpy.kern: the program and the kernel above"
	@echo "  README.md, 'Use kern in your project': pkg-config, CMake, kernels compiled ahead of time"
	@echo "  docs/language.md and docs/runtime.md: the language and the C API"
	@echo "  $(BUILD)/kernc --help: check, emit, build, run and info"
	@echo "  make install PREFIX=\$$HOME/.local to install; make test to run every test suite"

# Benchmarks: ratios against baselines measured in the same run. The tables are
# printed and written to bench/results/ (BENCH_SCALE=s makes the CPU problems s
# times bigger, for machines with many cores; docs/performance.md explains them).
bench: build
	sh bench/run.sh $(BUILD) cpu

# On the GPU machine: the hand-written CUDA baseline is compiled by nvcc when
# present, else by NVRTC; CuPy and Triton are measured when python3 has them.
bench-gpu: build
	sh bench/run.sh $(BUILD) gpu

# The header, libkern.a and libkern.so, kernc, kern.pc, the CMake package,
# the man page and the docs; no test suite is built.
install: configure-user
	cmake --build $(BUILD) -j $(JOBS) --target kern_static kern_shared kernc
	cmake --install $(BUILD) --prefix $(PREFIX)
	@pc=$$(grep '/kern\.pc$$' $(BUILD)/install_manifest.txt | tail -n 1); \
	  echo "kern: installed into $(PREFIX). Build against it with"; \
	  echo "  cc app.c \$$(pkg-config --cflags --libs kern)"; \
	  echo "  (outside pkg-config's default paths, first: export PKG_CONFIG_PATH=$${pc%/kern.pc})"; \
	  echo "or in CMake: find_package(kern) (-DCMAKE_PREFIX_PATH=$(PREFIX)); see README.md."

# libFuzzer targets (clang) in build-fuzz, each run FUZZ_SECONDS from the .kern
# fixtures; inputs that crash land in build-fuzz/fuzz-findings/.
fuzz:
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DKERN_FUZZ=ON -DKERN_WERROR=ON -DKERN_BUILD_TESTS=OFF
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
