# OmniGraph-C — the two entry points are `make run` and `make test` (see README.md).
# Both install missing dependencies first (scripts/install-deps.sh), so a fresh Debian 12
# machine needs nothing else.

JOBS    ?= 2
RELEASE := build/release
TESTBLD := build/asan
# ccache, where installed, makes rebuilds across work trees cheap; the build does not need it.
LAUNCHER := $(shell command -v ccache >/dev/null 2>&1 && echo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

.PHONY: all deps build test-build test test-c test-interop test-python run demo-table clean bench install

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
	@# the load's memory bound, asserted only without the sanitizers (their shadow memory
	@# inflates the RSS): docs/load.md "The memory bound"
	cd $(RELEASE) && ctest --output-on-failure -R '^engine_test_load_stream$$'
	OG_BIN_DIR=$(CURDIR)/$(RELEASE) bash tests/interop/run.sh
	OG_BIN_DIR=$(CURDIR)/$(RELEASE) bash tests/mcp-sdk/run.sh

# The Python package: `pip install ./python` into a fresh venv, then its pytest suite (docs/python.md).
test-python: build
	bash python/run-tests.sh $(RELEASE)

test: test-c test-interop test-python

# The main job: the graph quickstart on an embedded local graph (scripts/quickstart.sh).
run: build
	bash scripts/quickstart.sh $(RELEASE)

# The storage-layer demo: one Lance table with every column type, three versions.
demo-table: build
	bash scripts/run-demo.sh $(RELEASE)

# Installs bin/omnigraph, include/omnigraph.h, lib/libomnigraph.a, lib/libomnigraph.so* and
# lib/pkgconfig/omnigraph.pc under $(DESTDIR)$(PREFIX) (README.md "Install").
PREFIX  ?= /usr/local
# Debian's python3, for the Python package of `make install`
PYTHON  ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(RELEASE) --prefix "$(PREFIX)"
	@# the Python package beside the binary (docs/python.md), into PREFIX/lib/python3.X/dist-packages
	@# (Debian's python3 reads /usr/local's); --target keeps it out of Debian's own /usr tree, which
	@# is what pip's --break-system-packages guard protects
	@# the loader's cache learns the new libomnigraph.so (a real install as root only)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi
	@# the package finds PREFIX/lib/libomnigraph.so beside it, so the wheel bundles no copy
	OMNIGRAPH_PY_BUNDLE=0 $(PYTHON) -m pip install --no-index --no-deps --quiet --upgrade \
	  --target "$(DESTDIR)$(PREFIX)/lib/$$($(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages" \
	  $$($(PYTHON) -m pip install --help | grep -q break-system-packages && echo --break-system-packages) ./python

bench: build
	bash bench/run.sh $(RELEASE)

clean:
	rm -rf build
