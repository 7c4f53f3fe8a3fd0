# mpsim: the README's two commands are `make demo` and `make test`.
# Flavours: `make asan` (address+undefined sanitizers, debug pools),
# `make valgrind` (the test suite under valgrind, debug pools), `make bench`.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build demo test asan valgrind bench deps clean format

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/mpsim run examples/quickstart.yaml --out results/quickstart

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMPSIM_SANITIZE=address,undefined \
		-DMPSIM_POOL_DEBUG=ON -DMPSIM_SMALL_LIMITS=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

valgrind: deps
	@scripts/deps.sh --optional
	@cmake -S . -B build-vg -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPSIM_POOL_DEBUG=ON \
		-DMPSIM_SMALL_LIMITS=ON >/dev/null
	@cmake --build build-vg -j $(JOBS)
	@scripts/valgrind.sh build-vg

bench: build
	@bench/run.sh $(BUILD)

format:
	@clang-format -i src/*/*.c src/*/*.h tests/*.c tests/*.h bench/*.c

clean:
	rm -rf $(BUILD) build-asan build-vg
