# kron's two commands (README): `make demo` and `make test`. Both install what is missing first.
# The Debian packages come from deps/: debian-packages.txt (building kron and its tests: every target),
# test-packages.txt (make test: clang for the sanitized and fuzz tree, python3, chromium), and
# bench-packages.txt (make bench: the LTTng-UST peer).
# Every optional part is an explicit CMake option set here for each tree: a tree never turns a
# part on because the machine happens to have a leftover package, and never silently drops one it was
# asked for (CMake stops with the package to install).
SHELL := /bin/bash
BUILD ?= build
SAN_BUILD ?= build-san
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 8
CMAKE_FLAGS ?=
GEN := -G Ninja
comma := ,

.PHONY: all deps test-deps bench-deps build test-build bench-build test test-fast san-build test-san fuzz \
        fuzz-smoke tsan-build tsan demo demo-board bench install clean mutate

all: build

deps:
	@scripts/install-deps.sh
test-deps:
	@scripts/install-deps.sh deps/test-packages.txt
bench-deps:
	@scripts/install-deps.sh deps/bench-packages.txt

# $(call configure,DIR,CMAKE ARGS...): configures a tree quietly, prints its "kron:" summary lines
# (which optional parts are on), and shows the whole log if the configure fails.
define configure
@mkdir -p $(1)
@cmake -S . -B $(1) $(GEN) $(2) $(CMAKE_FLAGS) >$(1)/configure.log 2>&1 || { cat $(1)/configure.log; exit 1; }
@sed -n 's/^-- kron: /kron: /p' $(1)/configure.log
endef

# The g++ tree: RelWithDebInfo with line tables (-g1), warnings as errors.
MAIN_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKRON_WERROR=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

# The other languages' modules (docs/languages.md), in every build/ tree: make demo, make install and make test
# build them (the packages are deps/debian-packages.txt's).
LANG_FLAGS = -DKRON_WITH_PYTHON=ON -DKRON_WITH_FORTRAN=ON

# Every export format kron documents (docs/tools.md), in every build/ tree: make demo and make install too.
FORMAT_FLAGS = -DKRON_WITH_OTF2=ON

# build/: what make demo, make install and make bench use; no optional test part.
build: deps
	$(call configure,$(BUILD),$(MAIN_FLAGS) -DKRON_WITH_LTTNG=OFF -DKRON_WITH_CHROMIUM=OFF -DKRON_WITH_MPI=ON $(LANG_FLAGS) $(FORMAT_FLAGS))
	@cmake --build $(BUILD) -j $(JOBS)

# The same tree for make test: the HTML report test in headless Chromium on.
test-build: deps test-deps
	$(call configure,$(BUILD),$(MAIN_FLAGS) -DKRON_WITH_LTTNG=OFF -DKRON_WITH_CHROMIUM=ON -DKRON_WITH_STYLE_CHECK=ON -DKRON_WITH_PROTOC=ON \
	  -DKRON_WITH_BABELTRACE2=ON -DKRON_WITH_MPI=ON $(LANG_FLAGS) $(FORMAT_FLAGS))
	@cmake --build $(BUILD) -j $(JOBS)

# The same tree for make bench: packages first, then the configure that finds them (LTTng-UST on).
bench-build: deps bench-deps
	$(call configure,$(BUILD),$(MAIN_FLAGS) -DKRON_WITH_LTTNG=ON -DKRON_WITH_CHROMIUM=OFF -DKRON_WITH_MPI=ON $(LANG_FLAGS) $(FORMAT_FLAGS))
	@cmake --build $(BUILD) -j $(JOBS)

# Every test: the normal build (g++), then one clang tree with AddressSanitizer + UBSan and libFuzzer's
# coverage instrumentation that runs the same tests sanitized and each fuzz target for FUZZ_SECONDS.
# One sanitized tree instead of two, line tables instead of full debug information (-g1,
# -gline-tables-only: enough for symbolized sanitizer reports) and precompiled headers keep `make test`
# well inside CI's time on 2 cores. The sanitized tree keeps assert() on.
# The last line printed is ctest's summary of the fuzz run.
test: test-fast test-san fuzz-smoke

test-fast: test-build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The sanitized tree runs no browser (Chromium is not what is under test; the g++ tree runs that test), and
# no MPI job (KRON_WITH_MPI=OFF: Open MPI's own allocations would be what the sanitizers report; kron merge,
# the trace side of MPI recordings, is built and tested there all the same, and fuzzed). No Python or Fortran
# module either: their tests run an installed module in a plain python3 / gfortran program, which the
# sanitizer runtime would have to be preloaded into; what they call (mk.h, the Reader, the matcher) is tested
# sanitized through the C and C++ tests.
san-build: deps test-deps
	$(call configure,$(SAN_BUILD),-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
	  -DKRON_SANITIZE=address$(comma)undefined -DKRON_BUILD_BENCH=OFF -DKRON_BUILD_FUZZ=ON \
	  -DKRON_FUZZ_SECONDS=$(FUZZ_SECONDS) -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
	  -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DKRON_WITH_LTTNG=OFF -DKRON_WITH_CHROMIUM=OFF \
	  -DKRON_WITH_PROTOC=ON -DKRON_WITH_BABELTRACE2=ON -DKRON_WITH_OTF2=ON -DKRON_WITH_MPI=OFF \
	  -DKRON_WITH_PYTHON=OFF -DKRON_WITH_FORTRAN=OFF)
	@cmake --build $(SAN_BUILD) -j $(JOBS)

# The tests under the sanitizers (label nosan: tests that inspect uninstrumented code, e.g. the probe's
# instructions).
test-san: san-build
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -LE 'nosan|fuzz'

fuzz: san-build

# ThreadSanitizer: a clang tree of its own with -fsanitize=thread, built only for the tests
# labelled `tsan` (the probe's, the board's and the recorder's: threads writing lanes while a drainer
# reads them, the pool and its lock, the merge, kron record end to end; the trace writer's compression
# workers), which it then runs. Not part of
# `make test`, which it would take past CI's budget on 2 cores: README "make tsan". tests/tsan.supp is for
# suppressions, each with its reason (none needed today); label notsan leaves a test out (none today).
TSAN_TARGETS = kron-cli kron_sample1 kron_sample1_disabled kron-selftest-probe attach_writer probe_test \
  recorder_order_test recorder_lane_merge_test recorder_crash_test recorder_stress_test recorder_options_test \
  recorder_pool_test board_test board_pool_test board_trust_test stats_probe_test kron_kserver \
  stats_c_program stats_c_program_fn main_name_c main_name_c_off trace_file_compress_test
tsan-build: deps test-deps
	$(call configure,$(TSAN_BUILD),-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
	  -DKRON_SANITIZE=thread -DKRON_BUILD_BENCH=OFF -DKRON_BUILD_FUZZ=OFF -DKRON_WITH_LTTNG=OFF -DKRON_WITH_CHROMIUM=OFF \
	  -DKRON_WITH_MPI=OFF -DKRON_WITH_PYTHON=OFF -DKRON_WITH_FORTRAN=OFF)
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TARGETS)

tsan: tsan-build
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --test-dir $(TSAN_BUILD) --output-on-failure -j $(JOBS) -L tsan -LE 'nosan|notsan'

fuzz-smoke: san-build
	ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -L fuzz

# make demo: scripts/demo.sh (the live recorder, then the MultiKron II and NUMAchine simulator sessions).
demo: build
	@scripts/demo.sh $(BUILD)

# The toolkit workflow of 003 against the PCI board model (scripts/demo-board.sh).
demo-board: build
	@scripts/demo-board.sh $(BUILD)

# Benchmarks: installs the peers, configures with them on, and fails if a peer figure cannot be taken.
bench: bench-build
	@scripts/bench.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD)

# Does the suite notice a bug? (docs/testing.md) The project's mutants, tests/mutants.tsv, one at a time through the
# mutate tool of the shared folder beside the project (MUTATE=path where it lives elsewhere), in its scratch tree
# /var/tmp/kron-mutate: kron as a shared library so that a mutant relinks one library, no benchmarks, libkron_mpi
# built (src/mpi has mutants too). A
# measurement, not a gate, and not part of `make test`; MUTATE_ARGS="--only TEXT" runs the mutants whose line
# holds TEXT.
MUTATE ?= ../shared/tools/mutate
MUTATE_JOBS ?= 1
MUTATE_ARGS ?=
MUTATE_CMAKE = -DKRON_BUILD_BENCH=OFF -DKRON_SHARED_LIB=ON -DCMAKE_LINK_DEPENDS_NO_SHARED=ON -DKRON_WITH_MPI=ON
# ccache where the machine has it: the tool puts each mutated file back, which rebuilds the original once more.
MUTATE_CMAKE += $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
mutate:
	@test -x "$(MUTATE)" || { echo "make mutate: the mutate tool $(MUTATE) is not there: it lives in the shared folder" \
	  "beside the project (../shared/tools/mutate); name it with make mutate MUTATE=/path/to/mutate" >&2; exit 2; }
	nice -n 10 "$(MUTATE)" tests/mutants.tsv --jobs $(MUTATE_JOBS) --cmake-args "$(MUTATE_CMAKE)" $(MUTATE_ARGS)
