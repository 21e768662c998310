# OmniGraph-C — the two entry points are `make run` and `make test` (see README.md).
# Both install missing dependencies first (scripts/install-deps.sh), so a fresh Debian 12
# machine needs nothing else.

JOBS    ?= 2
RELEASE := build/release
TESTBLD := build/asan
# ccache, where installed, makes rebuilds across work trees cheap; the build does not need it.
LAUNCHER := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: all deps build test-build test test-c test-interop run demo-table clean bench install

all: build

deps:
	@bash scripts/install-deps.sh

$(RELEASE)/Makefile: CMakeLists.txt | deps
	cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: deps
	@cmake -S . -B $(RELEASE) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER) >/dev/null
	cmake --build $(RELEASE) -j$(JOBS)

# The test build: clang, -Werror, ASan + UBSan, libFuzzer targets.
test-build: deps
	@cmake -S . -B $(TESTBLD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DOG_SANITIZE=ON -DOG_FUZZ=ON $(LAUNCHER) >/dev/null
	cmake --build $(TESTBLD) -j$(JOBS)

test-c: test-build
	cd $(TESTBLD) && ctest --output-on-failure -j$(JOBS)
	bash tests/store/run-s3-tests.sh $(TESTBLD)

test-interop: build
	OG_BIN_DIR=$(CURDIR)/$(RELEASE) bash tests/interop/run.sh
	OG_BIN_DIR=$(CURDIR)/$(RELEASE) bash tests/mcp-sdk/run.sh

test: test-c test-interop

# The main job: the graph quickstart on an embedded local graph (scripts/quickstart.sh).
run: build
	bash scripts/quickstart.sh $(RELEASE)

# The storage-layer demo: one Lance table with every column type, three versions.
demo-table: build
	bash scripts/run-demo.sh $(RELEASE)

# Installs bin/omnigraph, include/omnigraph.h, lib/libomnigraph.a and lib/pkgconfig/omnigraph.pc
# under $(DESTDIR)$(PREFIX) (README.md "Install").
PREFIX  ?= /usr/local
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(RELEASE) --prefix "$(PREFIX)"

bench: build
	bash bench/run.sh $(RELEASE)

clean:
	rm -rf build
