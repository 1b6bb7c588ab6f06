# pagelab: `make demo` and `make test` work on a fresh machine with nothing installed
# by hand. Every install step lives here.

VENV      := .venv
PY        := $(VENV)/bin/python
PIP       := $(VENV)/bin/pip
DEPS      := $(VENV)/.deps-installed
# the build tool; the package's own dependencies (and its test extra) come from
# pyproject.toml, installed by `maturin develop --extras test`
MATURIN   := "maturin>=1.5,<2"
CARGO     ?= cargo
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
SHELL     := bash
.SHELLFLAGS := -eo pipefail -c
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all setup build runner demo test test-rust test-python bench clean fuzz readme real-suite predictive-real

all: build

setup: $(DEPS)

# System tools: Rust (the machine image has rustup's cargo), Valgrind for `trace capture`,
# Chromium (headless) for the report test (tests/test_report.py).
$(VENV)/.system-tools:
	@command -v $(CARGO) >/dev/null || { echo "make: cargo not found: install Rust (https://rustup.rs)"; exit 1; }
	@command -v valgrind >/dev/null || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q valgrind; }
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium; }
	@mkdir -p $(VENV) && touch $@

$(DEPS): pyproject.toml $(VENV)/.system-tools
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(MATURIN)
	@touch $@

# The engine and the bindings, built once (release) and installed into the virtual
# environment in editable mode with pagelab's dependencies and its test extra. The
# wheel test (tests/test_wheel.py) and `cargo test --release` reuse this build's
# compiled dependencies in target/.
build: $(DEPS) runner
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
	  $(VENV)/bin/maturin develop --release --extras test --quiet 2>&1 \
	  | { grep -v "^Requirement already satisfied\|^Ignoring " || true; }

# The kernel backend's native runner (crates/runner), copied into the package
# (python/pagelab/bin/, git-ignored) where pagelab looks for it first; a wheel built
# after it carries it (docs/kernel-backend.md, "Where the runner is").
runner:
	$(CARGO) build --release -p pagelab-runner
	mkdir -p python/pagelab/bin
	cp target/release/pagelab-runner python/pagelab/bin/pagelab-runner

demo: build
	$(VENV)/bin/pagelab demo --out results/demo

test: build test-rust test-python

test-rust:
	$(CARGO) test --release -p pagelab-core -p pagelab-runner

# every core: pytest-xdist, one worker per core; a test module's fixtures stay on one
# worker (--dist loadscope), so module-scoped runs (the wheel, the quick reproductions)
# happen once. The tests on the real kernel come after, alone: what they measure (a
# gang's quanta, the kernel's paging) moved with the other worker's load, and two gang
# tests failed in CI that way, each passing alone (about 2.5 minutes, one at a time;
# -rs: their skips say why, in the log).
KERNEL_TESTS = tests/test_kernel_backend.py tests/test_kernel_controllers.py tests/test_kernel_gang.py \
	tests/test_experiment_calibration.py
test-python: build
	$(VENV)/bin/pytest -q -n $(JOBS) --dist loadscope tests $(addprefix --ignore=,$(KERNEL_TESTS))
	$(VENV)/bin/pytest -q -rs $(KERNEL_TESTS)

# The README's reproduced results, from a full run of the five experiments with their
# sensitivity ranges (results/all/: the ledgers, reports and figures).
readme: build
	$(VENV)/bin/pagelab reproduce all --sensitivity --out results/all
	$(VENV)/bin/pagelab report results/all --readme README.md

# The real-program suite (issue 21): the Debian packages of its programs, then every
# member captured once under Valgrind (data references only) into $$PAGELAB_SUITE_DIR
# (default ~/.cache/pagelab/suite), several at once, one valgrind per core; members
# already built are kept. SUITE=... names some (e.g. SUITE="gzip sort"). Tens of minutes.
SUITE_PACKAGES := valgrind hpcc gzip bzip2 xz-utils gcc sqlite3 coreutils
SUITE ?=
real-suite: build
	@missing=""; for p in $(SUITE_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $$missing; fi
	$(VENV)/bin/pagelab suite build $(SUITE)

# predictive-replacement.txt's experiment on the real suite (minutes once it is built)
predictive-real: real-suite
	$(VENV)/bin/pagelab reproduce predictive-real

bench: build
	$(CARGO) bench -p pagelab-bench
	$(VENV)/bin/pagelab bench

# Fuzzing of the trace readers and the configuration parser (docs/fuzzing.md): each
# target FUZZ_SECONDS (default 60); crashes land in fuzz/artifacts/TARGET/. Not part of
# `make test`. cargo-fuzz needs a nightly compiler: rustup's nightly if installed, else
# the stable one with RUSTC_BOOTSTRAP=1 (which lets it take the -Z flags).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= pagelab_raw pagelab_zstd csv lackey oracle system_config
FUZZ_TOOLCHAIN := $(shell rustup toolchain list 2>/dev/null | grep -q '^nightly' && echo +nightly)
FUZZ_ENV := $(if $(FUZZ_TOOLCHAIN),,RUSTC_BOOTSTRAP=1)

fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p corpus/$$t && \
	  $(FUZZ_ENV) $(CARGO) $(FUZZ_TOOLCHAIN) fuzz run $$t corpus/$$t seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 || exit 1; \
	done

clean:
	rm -rf $(VENV) target results
