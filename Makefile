# mpsim: the README's two commands are `make demo` and `make test`.
# Flavours: `make asan` (address+undefined sanitizers, debug pools),
# `make valgrind` (the test suite under valgrind, debug pools), `make tsan`
# (the partitioned runs over threads under ThreadSanitizer), `make bench`.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

PREFIX ?= /usr/local

.PHONY: all build demo test asan tsan valgrind bench deps deps-test install clean format fuzz

all: build

deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh --test

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/mpsim run examples/quickstart.yaml --out results/quickstart
	@echo
	@echo "What next:"
	@echo "  open results/quickstart/report.html"
	@echo "      the run in one page: tables, plots, the effective configuration"
	@echo "  $(BUILD)/mpsim run examples/quickstart.yaml --set transport.entropy=fixed --out results/ecmp"
	@echo "      the same fabric with one path per flow (plain ECMP): compare the two reports"
	@echo "  $(BUILD)/mpsim run experiments/strack/incast_32to1_strack.yaml"
	@echo "      a paper's figure, its numbers beside ours"
	@echo "  $(BUILD)/mpsim list transports"
	@echo "      every protocol and its parameters"
	@echo "  make install PREFIX=~/.local"
	@echo "      put mpsim on your PATH"
	@echo "  README.md, experiments/README.md (and a README per paper folder)"
	@echo "      the tour of an experiment file, and the papers' reproductions"

test: deps-test build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	@install -d $(DESTDIR)$(PREFIX)/bin
	@install -m 755 $(BUILD)/mpsim $(DESTDIR)$(PREFIX)/bin/mpsim
	@echo "installed $(DESTDIR)$(PREFIX)/bin/mpsim"

asan: deps-test
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMPSIM_SANITIZE=address,undefined \
		-DMPSIM_POOL_DEBUG=ON -DMPSIM_SMALL_LIMITS=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

# --threads: every check of tests/mpi_part.sh over threads, each run under
# ThreadSanitizer (a race report fails the run, so the check)
tsan: deps-test
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPSIM_SANITIZE=thread >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target mpsim
	@cd build-tsan && ctest --output-on-failure -R threads_part

valgrind: deps
	@scripts/deps.sh --optional
	@cmake -S . -B build-vg -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPSIM_POOL_DEBUG=ON \
		-DMPSIM_SMALL_LIMITS=ON >/dev/null
	@cmake --build build-vg -j $(JOBS)
	@scripts/valgrind.sh build-vg

bench: build
	@bench/run.sh $(BUILD)

# The value fuzzer (fuzz/README.md): clang + libFuzzer, ASan and UBSan.
# FUZZ_TIME seconds in all (default 600), in the background of other work.
fuzz: 
	@scripts/deps.sh --fuzz
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPSIM_FUZZ=ON \
		-DMPSIM_WERROR=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_values
	@fuzz/run.sh build-fuzz

format:
	@clang-format -i src/*/*.c src/*/*.h tests/*.c tests/*.h bench/*.c fuzz/*.c fuzz/*.h

clean:
	rm -rf $(BUILD) build-asan build-vg build-fuzz
