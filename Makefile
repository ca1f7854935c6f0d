# The caption engine: `make run` serves, `make test` checks everything. Both set up first.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# Build output lives outside the clone so fresh clones reuse it; nothing depends on it being warm.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/caption-engine/target
export CAPTIONS_CACHE ?= $(HOME)/.cache/caption-engine
CARGO ?= cargo

.PHONY: setup build install run test lint fmt bench

## setup: install what is missing (Debian packages, tools, whisper models); quick when done.
setup:
	@scripts/setup

build: setup
	$(CARGO) build --release -p caption-cli

## install: build, then put `captions` on the PATH with shell completions and man pages
## (/usr/local as root, else ~/.local; PREFIX=... to choose).
install: build
	@scripts/install

## run: set up, build, install, and start what the product offers.
run: install
	@scripts/run

## test: set up, then formatting, lints, every test and the benches' build.
## The lints run inside the tests' build: clippy's driver compiles the workspace's own crates
## (its lints, denied as `make lint` denies them) while every dependency is built once, for the
## tests; `cargo clippy` would check every dependency a second time (7 of a cold run's 47 minutes).
## The benches are built as the tests are (`cargo test --benches --no-run`): the build the tests
## made serves, where a release build would compile the whole workspace (whisper.cpp, FFmpeg's
## bindings) again, and `cargo build` would resolve features otherwise and compile part of it.
## The set-up's own build (scripts/setup-models) goes through the same driver when `make test`
## runs it, so that the tests' build finds it done. (CLIPPY_ARGS is how `cargo clippy` hands its
## arguments to the driver.) scripts/test-run runs the tests, the two that take minutes beside the
## others.
test: export RUSTC_WORKSPACE_WRAPPER := $(shell rustc --print sysroot)/bin/clippy-driver
test: export CLIPPY_ARGS := -D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
test: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) test --workspace --no-run
	$(CARGO) test --workspace --benches --no-run
	CARGO=$(CARGO) scripts/test-run

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	$(CARGO) bench --workspace
