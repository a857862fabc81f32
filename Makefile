# calibench - the two commands a new user needs:
#   make quickstart   install what is missing, build, and run the built-in simulator demo
#   make test         install what is missing, build, run every test, then again under
#                     AddressSanitizer + UndefinedBehaviorSanitizer, then each libFuzzer
#                     driver for FUZZ_SMOKE_SECONDS when clang is installed
# Other targets: build, asan, fuzz, bench, deps, llama-peer, clean.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

# Debian packages the build and the tests need (checked, installed only when missing).
DEB_PACKAGES := cmake gcc make pkg-config git curl ca-certificates openssl \
                libevent-dev libjansson-dev libyaml-dev libcmocka-dev libpcre2-dev unicode-data bzip2 libbz2-dev \
                sentencepiece g++ python3 python3-numpy \
                libcurl4-openssl-dev libssl-dev libsqlite3-dev libpq-dev postgresql libpng-dev libjpeg-dev \
                wordnet-base chromium iproute2 jq python3-yaml python3-jsonschema

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build asan test unit-test asan-test quickstart deps npm-deps llama-peer fuzz fuzz-smoke fuzz-run \
        bench clean

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
# node-llama-cpp is there only for the llama.cpp source it ships (llama-peer builds it):
# --ignore-scripts skips its postinstall, a download of prebuilt binaries that cannot work
# offline, and --omit=optional its prebuilt binary packages (677 MB). No other peer has
# an install script or an optional dependency.
npm-deps: node_modules/.package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error

# llama.cpp's llama-server, llama-quantize and llama-perplexity, built from the source in
# node-llama-cpp once per machine (about 8 minutes on 2 idle cores), cached outside the
# repository keyed by the source's hash: scripts/llama_build.sh, docs/llama.md.
llama-peer: deps npm-deps
	@CB_LLAMA_JOBS=$(JOBS) ./scripts/llama_build.sh >/dev/null

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCB_SANITIZE=address,undefined >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)

unit-test: build npm-deps llama-peer
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan-test: asan npm-deps llama-peer
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

test: unit-test asan-test fuzz-smoke

quickstart: build
	./scripts/quickstart.sh $(BUILD)/calibench

# libFuzzer targets (clang), each run FUZZ_SECONDS on its seed corpus; new inputs go
# to build-fuzz/corpus-*, never into the committed seeds. (Every build also replays the
# seed corpora under gcc as ctest cases: tests/fuzz/replay_main.c.)
FUZZ_SECONDS ?= 60
# `make test` runs each driver this long when clang is installed.
FUZZ_SMOKE_SECONDS ?= 10
# Each target: tests/fuzz/fuzz_<t>.c linked with the library built once for fuzzing
# (build-fuzz/libcalibench.a, coverage-instrumented). One: make fuzz FUZZ_TARGETS=yaml
FUZZ_TARGETS := sim_http_parse client_sse runner_h1 jsonl trace yaml duration embed_parse eval_jsonl probe_dialog
FUZZ_PKGS := jansson yaml-0.1 libpcre2-8 libevent libcurl libcrypto sqlite3 libpq libpng libjpeg
FUZZ_CFLAGS = -g -O1 -std=c17 -D_POSIX_C_SOURCE=200809L -fsanitize=address,undefined \
              -fno-sanitize-recover=all \
              -Iinclude -Isrc -Ibuild-fuzz/generated $(shell pkg-config --cflags $(FUZZ_PKGS))
FUZZ_LIB_OBJS := $(patsubst src/%.c,build-fuzz/obj/%.o,$(filter-out src/cli/%,$(wildcard src/*/*.c)))
FUZZ_LIBS = $(shell pkg-config --libs $(FUZZ_PKGS)) -lbz2 -lm -lpthread
fuzz:
	@command -v clang >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq clang; }
	@$(MAKE) --no-print-directory fuzz-run

fuzz-smoke:
	@if command -v clang >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS); \
	else echo "clang not found: libFuzzer runs skipped (ctest replayed the seed corpora)"; fi

fuzz-run:
	@$(MAKE) --no-print-directory -j $(JOBS) build-fuzz/libcalibench.a
	@set -e; $(foreach t,$(FUZZ_TARGETS), \
	  clang $(FUZZ_CFLAGS) -fsanitize=fuzzer tests/fuzz/fuzz_$(t).c build-fuzz/libcalibench.a \
	    $(FUZZ_LIBS) -o build-fuzz/fuzz_$(t); \
	  mkdir -p build-fuzz/corpus-$(t); \
	  build-fuzz/fuzz_$(t) -max_total_time=$(FUZZ_SECONDS) build-fuzz/corpus-$(t) \
	    tests/fuzz/corpus/$(t);)

build-fuzz/generated/cb_version.h: cmake/write_version.cmake
	@mkdir -p $(@D)
	cmake -DVERSION=fuzz -DSRC=. -DOUT=$@ -P $<

build-fuzz/obj/%.o: src/%.c build-fuzz/generated/cb_version.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

-include $(FUZZ_LIB_OBJS:.o=.d)

build-fuzz/libcalibench.a: $(FUZZ_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

bench: build
	@echo "benchmarks run on demand; see bench/README.md"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
