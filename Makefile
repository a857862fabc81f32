# calibench - the two commands a new user needs:
#   make quickstart   install what is missing, build, and run the built-in simulator demo
#   make test         install what is missing, build, run every test, then again under
#                     AddressSanitizer + UndefinedBehaviorSanitizer
# Other targets: build, asan, fuzz, bench, deps, clean.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

# Debian packages the build and the tests need (checked, installed only when missing).
DEB_PACKAGES := cmake gcc make pkg-config git curl ca-certificates openssl \
                libevent-dev libjansson-dev libyaml-dev libcmocka-dev libpcre2-dev unicode-data bzip2 \
                libcurl4-openssl-dev libssl-dev libsqlite3-dev libpq-dev postgresql \
                chromium

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build asan test unit-test asan-test quickstart deps npm-deps fuzz bench clean

all: build

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# Test-only peers from the npm registry (the official openai SDK), pinned in package-lock.json.
npm-deps: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCB_SANITIZE=address,undefined >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

unit-test: build npm-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan-test: asan npm-deps
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test: unit-test asan-test

quickstart: build
	./scripts/quickstart.sh $(BUILD)/calibench

# libFuzzer targets (clang), each run FUZZ_SECONDS on its seed corpus; new inputs go
# to build-fuzz/corpus-*, never into the committed seeds.
FUZZ_SECONDS ?= 60
# Each target: tests/fuzz/fuzz_<t>.c + FUZZ_SRCS_<t> + src/util, linked with FUZZ_LIBS_<t>.
# One target: make fuzz FUZZ_TARGETS=client_sse
FUZZ_TARGETS := sim_http_parse client_sse runner_h1
FUZZ_SRCS_sim_http_parse := src/sim/http_parse.c
FUZZ_SRCS_runner_h1 := src/runner/h1_parse.c
FUZZ_SRCS_client_sse := $(addprefix src/client/,sse.c json_scan.c chunk.c chunk_jansson.c \
                          stream.c request.c response.c names.c)
FUZZ_LIBS_client_sse := -ljansson
fuzz:
	@command -v clang >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq clang; }
	@mkdir -p build-fuzz
	@set -e; $(foreach t,$(FUZZ_TARGETS), \
	  clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
	    tests/fuzz/fuzz_$(t).c $(FUZZ_SRCS_$(t)) src/util/[a-z]*.c $(FUZZ_LIBS_$(t)) \
	    -o build-fuzz/fuzz_$(t); \
	  mkdir -p build-fuzz/corpus-$(t); \
	  build-fuzz/fuzz_$(t) -max_total_time=$(FUZZ_SECONDS) build-fuzz/corpus-$(t) \
	    tests/fuzz/corpus/$(t);)

bench: build
	@echo "benchmarks run on demand; see bench/README.md"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
