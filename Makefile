# kron's two commands (README): `make demo` and `make test`. Both install what is missing first.
SHELL := /bin/bash
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 8
CMAKE_FLAGS ?=
GEN := -G Ninja

.PHONY: all deps build test test-fast test-asan fuzz fuzz-smoke demo demo-board bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKRON_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Every test: the normal build, the same tests under AddressSanitizer + UBSan, then each fuzz target
# for FUZZ_SECONDS. The last line printed is ctest's summary of the fuzz run.
test: test-fast test-asan fuzz-smoke

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=Debug -DKRON_SANITIZE=address,undefined \
	  -DKRON_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE nosan

fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DKRON_BUILD_TESTS=OFF -DKRON_BUILD_BENCH=OFF -DKRON_BUILD_FUZZ=ON -DKRON_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  -DKRON_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz-smoke: fuzz
	ctest --test-dir $(FUZZ_BUILD) --output-on-failure -j $(JOBS) -L fuzz

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
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
