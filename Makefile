# magnum-capi: the Cluster API driver for OpenStack Magnum.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON := /usr/bin/python3
GO ?= go
BIN := $(CURDIR)/bin
# Envtest binaries (kube-apiserver, etcd) and proto tools, built once per version
# and cached outside the repository by test/tools/build.sh.
ASSETS = $(shell test/tools/build.sh kube)
PROTO_TOOLS = $(shell test/tools/build.sh proto)
# 30m: the end-to-end suite and the static build of deploy/Dockerfile's test can
# outlast go test's default 10m per package on a busy two-core machine.
GO_TEST_FLAGS ?= -count=1 -timeout 30m
PURE_PACKAGES := ./helmvalues/... ./capistatus/... ./certs/...

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: deps
deps: ## Install the Debian packages the tests and demo need (apt-get).
	hack/deps.sh

.PHONY: tools
tools: ## Build (once per version) kube-apiserver, etcd, buf and the protoc plugins.
	@echo "envtest assets: $(ASSETS)"
	@echo "proto tools:    $(PROTO_TOOLS)"

.PHONY: build
build: ## Build bin/magnum-capi, and what the Python tests and the demo run: bin/testbed (the test stack) and bin/stackhpc-install (a cluster installed as the StackHPC driver does).
	$(GO) build -o $(BIN)/magnum-capi ./cmd/magnum-capi
	$(GO) build -o $(BIN)/testbed ./test/cmd/testbed
	$(GO) build -o $(BIN)/stackhpc-install ./test/e2e/testdata/stackhpc/cmd

.PHONY: generate
generate: ## Regenerate the Go and Python code from proto/ with buf.
	PATH="$(PROTO_TOOLS):$$PATH" buf generate

.PHONY: verify
verify: deps ## Fail if generated code is stale, buf lint fails, or a pure package imports I/O code.
	PATH="$(PROTO_TOOLS):$$PATH" buf lint
	hack/verify-generated.sh "$(PROTO_TOOLS)"
	hack/lint-imports.sh $(PURE_PACKAGES)
	$(GO) vet ./...

# test/magnum has its own target (magnum-test), run verbose: its log shows
# each Magnum release's lane step by step, with times.
GO_TEST_PACKAGES = $(shell $(GO) list ./... | grep -v '/test/magnum$$')

.PHONY: go-test
go-test: ## Go tests (unit, test bed, end-to-end).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) test $(GO_TEST_FLAGS) $(GO_TEST_PACKAGES)

.PHONY: magnum-test
magnum-test: deps tools build ## Real Magnum 15, 20 and 23 (services, MariaDB, RabbitMQ, Keystone, the openstack CLI) through a cluster's life; builds Debian trixie and sid roots once per machine.
	KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BIN=$(BIN)/magnum-capi $(GO) test -count=1 -timeout 60m -v ./test/magnum/

# Benchmarks run only here, never in go-test: the stack benchmarks of
# test/bench need MAGNUM_CAPI_BENCH=1 (go test ./... only compiles them).
BENCH_FLAGS ?= -count=1 -run '^$$' -benchmem
# Each go test of test/bench starts its own stack: the status benchmark stops
# the simulator and leaves 2,000 clusters' objects behind.
BENCH_STACK = KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BENCH=1 MAGNUM_CAPI_BIN=$(BIN)/magnum-capi \
	$(GO) test $(BENCH_FLAGS) -timeout 60m -benchtime 1x -v
.PHONY: bench
bench: deps tools build ## Benchmarks: values rendering, cache reads, status at 100/1,000/2,000 clusters, create vs SSA, 200 creates at once (docs/benchmarks.md).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) test $(BENCH_FLAGS) -bench . ./helmvalues/ ./server/kube/
	$(BENCH_STACK) -bench BenchmarkCreate ./test/bench/
	$(BENCH_STACK) -bench BenchmarkStatus ./test/bench/

# The long forms of test/e2e's reliability tests (the short ones run in
# go-test): 200 clusters through create -> complete -> delete, 10 at a time.
SOAK_ENV = MAGNUM_CAPI_LOAD_CLUSTERS=200 MAGNUM_CAPI_LOAD_PARALLEL=10
.PHONY: soak
soak: deps tools build ## Long reliability runs: 200 clusters through the gRPC API, API server restart, chart repository offline, malformed requests.
	KUBEBUILDER_ASSETS="$(ASSETS)" $(SOAK_ENV) $(GO) test -count=1 -timeout 150m -v -run '^TestReliability' ./test/e2e/

# The Python tests and the demo start the test stack and the sidecar from these.
PY_ENV = MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_TESTBED_BIN=$(BIN)/testbed \
	MAGNUM_CAPI_STACKHPC_INSTALL_BIN=$(BIN)/stackhpc-install KUBEBUILDER_ASSETS="$(ASSETS)"

.PHONY: py-test
py-test: deps build ## Python tests of the shim on Debian's python3-magnum.
	cd magnum && $(PY_ENV) $(PYTHON) -m pytest -q -p no:warnings -p no:cacheprovider magnum_capi

.PHONY: test
test: deps tools verify go-test py-test magnum-test ## Everything CI runs (installs what it needs).

.PHONY: testbed
testbed: deps tools build ## Run the test stack (management API, CRDs, conversion, simulator, chart repo, Keystone) until interrupted.
	KUBEBUILDER_ASSETS="$(ASSETS)" $(BIN)/testbed -sidecar-config $(BIN)/magnum-capi-testbed.yaml

.PHONY: demo
demo: deps tools build ## Real Magnum 15 services driven by the openstack CLI (create, show, config, resize, delete), then the timeline of one cluster through the shim.
	KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BIN=$(BIN)/magnum-capi $(GO) run ./test/cmd/magnum-demo
	$(PY_ENV) $(PYTHON) test/demo/demo.py
