# kron's two commands (README): `make demo` and `make test`. Both install what is missing first.
SHELL := /bin/bash
BUILD ?= build
SAN_BUILD ?= build-san
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 8
CMAKE_FLAGS ?=
GEN := -G Ninja

.PHONY: all deps build test test-fast san-build test-san fuzz fuzz-smoke demo demo-board bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKRON_WERROR=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Every test: the normal build (g++), then one clang tree with AddressSanitizer + UBSan and libFuzzer's
# coverage instrumentation that runs the same tests sanitized and each fuzz target for FUZZ_SECONDS.
# One sanitized tree instead of two, line tables instead of full debug information (-g1,
# -gline-tables-only: enough for symbolized sanitizer reports) and precompiled headers keep `make test`
# well inside CI's time on 2 cores. The sanitized tree keeps assert() on.
# The last line printed is ctest's summary of the fuzz run.
test: test-fast test-san fuzz-smoke

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

san-build: deps
	@CC=clang CXX=clang++ cmake -S . -B $(SAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
	  -DKRON_SANITIZE=address,undefined -DKRON_BUILD_BENCH=OFF -DKRON_BUILD_FUZZ=ON \
	  -DKRON_FUZZ_SECONDS=$(FUZZ_SECONDS) -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
	  -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)

# The tests under the sanitizers (label nosan: tests that inspect uninstrumented code, e.g. the probe's
# instructions).
test-san: san-build
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -LE 'nosan|fuzz'

fuzz: san-build

fuzz-smoke: san-build
	ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -L fuzz

demo: build
	@scripts/demo.sh $(BUILD)

# The toolkit workflow of 003 against the PCI board model (scripts/demo-board.sh).
demo-board: build
	@scripts/demo-board.sh $(BUILD)

bench: build
	@if [ -f deps/bench-packages.txt ]; then scripts/install-deps.sh deps/bench-packages.txt; fi
	@scripts/bench.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
