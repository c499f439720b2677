# Lens: `make run` sets up, builds and serves on http://127.0.0.1:8080; `make test` runs every test.
SHELL := /bin/bash
ENV := source scripts/env.sh &&
WEB := PATH="$(CURDIR)/scripts/trunk-cargo:$$PATH" trunk build --release
# Where `make run` keeps its data; the address comes from LENS_ADDR (default 127.0.0.1:8080).
DATA ?= ./data

.PHONY: run test setup web server bench cluster clean

setup:
	@scripts/setup

# The web app is rebuilt only when its sources change (trunk's wasm-opt pass alone takes
# tens of seconds, even when cargo has nothing to do).
WEB_SOURCES := $(shell find src style public crates/lens-types/src -type f 2>/dev/null) index.html Trunk.toml Cargo.toml Cargo.lock .cargo/config.toml

web: setup dist/index.html

dist/index.html: $(WEB_SOURCES)
	@$(ENV) $(WEB)

server: setup
	@$(ENV) cargo build --release --locked -p lens-server -p lens-sandbox-agent

run: web server
	@echo "Lens runs code in a bubblewrap sandbox per conversation (--sandbox); see docs/sandbox.md"
	@$(ENV) ./target/release/lens serve --data-dir $(DATA) --web-dist ./dist --sandbox

# The tests' own tools beyond setup's: NVIDIA's real gateway, its supervisor and podman.
test: setup
	@scripts/openshell/real-setup
	@$(ENV) scripts/test

# PostgreSQL, Garage, the fake OpenShell gateway, three replicas and nginx on loopback:
# the set the replica tests use, to try by hand (docs/scale.md).
cluster: web server
	@$(ENV) cargo build --release --locked -p lens-openshell --features fake --bin lens-fake-gateway
	@$(ENV) scripts/cluster

bench: web server
	@$(ENV) scripts/bench

clean:
	rm -rf dist tmp e2e/test-results
