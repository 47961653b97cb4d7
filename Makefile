# magnum-capi: the Cluster API driver for OpenStack Magnum.
# `make help` lists the targets.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON := /usr/bin/python3
GO ?= go
# One set of build flags for everything make compiles, the tests and vet
# included: the flags the sidecar ships with (deploy/Dockerfile: static, no
# build paths). Go caches a compiled package per set of flags, so with one
# set the driver's dependency graph compiles once on a fresh machine instead
# of once for bin/magnum-capi and again for everything else.
export CGO_ENABLED := 0
export GOFLAGS := -trimpath -buildvcs=false
BIN := $(CURDIR)/bin
# Envtest binaries (kube-apiserver, etcd) and proto tools, built once per version
# and cached outside the repository by test/tools/build.sh.
ASSETS = $(shell test/tools/build.sh kube)
PROTO_TOOLS = $(shell test/tools/build.sh proto)
# 45m: the end-to-end suite (about 20 minutes alone) runs beside the Python
# tests and can outlast go test's default 10m per package, and 30m on a
# loaded two-core machine. -shuffle=on: no test may depend on another's
# leftovers or on running first. -vet=off: make verify has run go vet on
# every package, with more checks than go test's own vet. -parallel 4:
# the end-to-end tests that run in parallel spend their time waiting for the
# Cluster API controllers, so four at a time (go test's default is the
# number of cores, two) finish sooner without loading the machine more.
GO_TEST_FLAGS ?= -count=1 -shuffle=on -parallel 4 -timeout 45m -vet=off
# What `magnum-capi version` prints (the image stamps it the same way).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PURE_PACKAGES := ./helmvalues/... ./capistatus/... ./certs/...
# The test bed's Cluster API controllers: a Go module of their own (see its doc.go).
CAPI_CONTROLLERS := test/capicontrollers
# Argo CD's own code reading the GitOps hand-off's cluster Secret: a Go module
# of its own (Argo CD pins Kubernetes 0.31; see its doc.go).
ARGOCD_TEST := test/argocd
ADAPTER_PACKAGES := ./server/openstack/... ./server/release/... ./server/kube/... ./server/watchcache/... ./server/config/... ./server/metrics/...
LEAF_PACKAGES := ./server/panics/...

.PHONY: help
help: ## Show this help.
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: deps
deps: ## Install the Debian packages the tests and demo need (apt-get).
	hack/deps.sh

.PHONY: tools
tools: assets ## Build (once per version) kube-apiserver, etcd, buf and the protoc plugins.
	@echo "proto tools:    $(PROTO_TOOLS)"

.PHONY: assets
assets:
	@echo "envtest assets: $(ASSETS)"

# bin/magnum-capi is built as deploy/Dockerfile builds the released binary
# (static, no symbol tables), so the tests and benchmarks run what ships:
# the cgo build with symbols had 25 MiB more of the binary in the
# sidecar's RSS (docs/benchmarks.md).
RELEASE_LDFLAGS = -s -w -X main.version=$(VERSION)
.PHONY: build
build: demo-build ## Build bin/magnum-capi, and what the Python tests and the demo run: bin/testbed (the test stack), bin/capi-controllers (its Cluster API controllers), bin/magnum-demo and bin/stackhpc-install (a cluster installed as the StackHPC driver does).
	$(GO) build -o $(BIN)/stackhpc-install ./test/cmd/stackhpc-install

# What the demo runs, and nothing else.
.PHONY: demo-build
demo-build:
	$(GO) build -ldflags "$(RELEASE_LDFLAGS)" -o $(BIN)/magnum-capi ./cmd/magnum-capi
	$(GO) build -o $(BIN)/testbed ./test/cmd/testbed
	$(GO) build -o $(BIN)/magnum-demo ./test/cmd/magnum-demo
	cd $(CAPI_CONTROLLERS) && $(GO) build -o $(BIN)/capi-controllers ./cmd/capi-controllers

# The shim's wheel, built as docs/operator-guide.md's build-shim block builds
# it (Debian's setuptools, no package index): what hosts without Kolla
# install (the guide's install-shim block). Kolla's images take the same
# wheel from the sidecar image (deploy/Dockerfile's shim stage).
.PHONY: wheel
wheel: ## Build the shim's wheel dist/magnum_capi-<version>-py3-none-any.whl from magnum/, with no package index.
	rm -f dist/magnum_capi-*.whl
	$(PYTHON) -m pip wheel --no-index --no-build-isolation --no-deps -w dist ./magnum
	rm -rf magnum/build

.PHONY: generate
generate: ## Regenerate the Go and Python code from proto/ with buf.
	hack/proto.sh "$(PROTO_TOOLS)" generate

.PHONY: verify
verify: deps ## Fail if generated code is stale, buf lint fails, a pure package imports I/O code, an adapter imports the domain or a production function is over 80 lines.
	hack/proto.sh "$(PROTO_TOOLS)" lint
	hack/verify-generated.sh "$(PROTO_TOOLS)"
	hack/lint-imports.sh pure $(PURE_PACKAGES)
	hack/lint-imports.sh adapters $(ADAPTER_PACKAGES)
	hack/lint-imports.sh leaf $(LEAF_PACKAGES)
	$(GO) run ./hack/funclen -max 80 ./cmd ./server ./helmvalues ./capistatus ./certs ./hack
	$(GO) vet ./...
	cd $(CAPI_CONTROLLERS) && $(GO) vet ./...
	cd $(ARGOCD_TEST) && $(GO) vet ./...

# test/magnum has its own target (magnum-test), run verbose: its log shows
# each Magnum release's lane step by step, with times.
# test/e2e first: go test runs packages in the order given, two at once, and
# the end-to-end suite is the longest by far, so the others run beside it
# instead of before it.
GO_TEST_PACKAGES = ./test/e2e $(shell $(GO) list ./... | grep -v -e '/test/magnum$$' -e '/test/e2e$$')

# The tests that run the sidecar binary (end to end, deploy/'s version
# stamp) use the one make build built instead of building their own.
.PHONY: go-test
go-test: build ## Go tests (unit, test bed, end-to-end).
	cd $(CAPI_CONTROLLERS) && $(GO) test $(GO_TEST_FLAGS) ./...
	cd $(ARGOCD_TEST) && $(GO) test $(GO_TEST_FLAGS) ./...
	KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers MAGNUM_CAPI_VERSION="$(VERSION)" $(GO) test $(GO_TEST_FLAGS) $(GO_TEST_PACKAGES)

.PHONY: magnum-test
# Two lanes at once, longest first (test/magnum's laneSlots): three at once
# next to the rest of the stack overload this machine. -parallel 4 lets
# every lane wait for its turn in laneSlots rather than in go test's order.
magnum-test: deps tools build ## Real Magnum 15, 20 and 23 (services, MariaDB, RabbitMQ, Keystone, the openstack CLI) through a cluster's life; builds Debian trixie and sid roots once per machine.
	KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers $(GO) test -count=1 -parallel 4 -timeout 60m -v ./test/magnum/

# Benchmarks run only here, never in go-test: the stack benchmarks of
# test/bench need MAGNUM_CAPI_BENCH=1 (go test ./... only compiles them).
BENCH_FLAGS ?= -count=1 -run '^$$' -benchmem
# Each go test of test/bench starts its own stack: the status benchmark stops
# the Cluster API controllers and leaves 2,000 clusters' objects behind.
BENCH_STACK = KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BENCH=1 MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers \
	$(GO) test $(BENCH_FLAGS) -timeout 60m -benchtime 1x -v
.PHONY: bench
bench: deps tools build ## Benchmarks: values rendering, request checks, cache reads, Helm deploys with shared vs per-action discovery, status at 100/1,000/2,000 clusters, create vs SSA, 200 creates at once, create and resize side by side with the peer's helm process and the parallel-SSA floor, 50 creates at once vs 50 peer processes, 100 clusters on the real Cluster API controllers (docs/benchmarks.md).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) test $(BENCH_FLAGS) -bench . ./helmvalues/ ./server/ ./server/watchcache/ ./server/release/
	$(BENCH_STACK) -bench BenchmarkCreate ./test/bench/
	$(BENCH_STACK) -bench BenchmarkPeer ./test/bench/
	$(BENCH_STACK) -bench BenchmarkTestBed ./test/bench/
	$(BENCH_STACK) -bench BenchmarkStatus ./test/bench/

# Fuzzing runs only here, never in go-test: every fuzz target (hack/fuzz.sh
# finds them) for FUZZ_EXECS executions each, one after another; the table
# (executions, time and rate per target) goes to docs/benchmarks.md by hand
# from bin/fuzz.md. A failing input lands in <package>/testdata/fuzz/<target>/,
# a seed case for every later go test.
FUZZ_EXECS ?= 1000000
.PHONY: fuzz
fuzz: ## Every fuzz target for FUZZ_EXECS executions each (default 10^6; not part of make test), table in bin/fuzz.md.
	mkdir -p $(BIN)
	GO=$(GO) hack/fuzz.sh $(FUZZ_EXECS) $(BIN)/fuzz.md
	cat $(BIN)/fuzz.md

# The long forms of test/e2e's reliability tests (the short ones run in
# go-test): 200 clusters through create -> complete -> delete, 10 at a time.
SOAK_ENV = MAGNUM_CAPI_LOAD_CLUSTERS=200 MAGNUM_CAPI_LOAD_PARALLEL=10
.PHONY: soak
soak: deps tools build ## Long reliability runs: 200 clusters through the gRPC API, API server restart, chart repository offline, malformed requests.
	KUBEBUILDER_ASSETS="$(ASSETS)" $(SOAK_ENV) $(GO) test -count=1 -timeout 150m -v -run '^TestReliability' ./test/e2e/

# The Python tests and the demo start the test stack and the sidecar from these.
PY_ENV = MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_TESTBED_BIN=$(BIN)/testbed MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers \
	MAGNUM_CAPI_STACKHPC_INSTALL_BIN=$(BIN)/stackhpc-install KUBEBUILDER_ASSETS="$(ASSETS)"

.PHONY: py-test
py-test: deps build ## Python tests of the shim on Debian's python3-magnum.
	cd magnum && $(PY_ENV) $(PYTHON) -m pytest -q --durations=15 -p no:warnings -p no:cacheprovider magnum_capi

# The Debian roots the Magnum lanes run from, built once per machine
# (test/cmd/debian-roots). make test starts this first and in the
# background: debootstrap waits on Debian's archive and dpkg, so it runs
# beside the compiles; a lane that asks for a root still being built waits
# for it.
.PHONY: roots
roots: deps ## Build (once per machine) the Debian trixie and sid root file systems of the Magnum 20 and 23 lanes.
	$(GO) run ./test/cmd/debian-roots

.PHONY: test
# The Go tests and the Python tests side by side: each runs one stack and
# spends most of its time waiting for the Cluster API controllers (together
# well under two cores). The Magnum lanes after them, alone: next to
# another stack, the API server's writes took seconds each and a resize
# outlasted the shim's 45 s call_timeout, which a cloud's management
# cluster would not see. --output-sync: each suite's output in one piece.
# On a fresh machine kube-apiserver and etcd compile beside the binaries
# (long compiles whose single-threaded stretches leave a core idle), and
# verify's vet then finds most of the tests' packages compiled.
# The demo runs too, its first half as a Magnum 15 lane of its own
# (test/magnum's TestCLILifecycle/demo), its second half as a Python test
# (test_demo.py), so a broken demo fails here.
test: deps ## Everything CI runs (installs what it needs).
	mkdir -p $(BIN)
	$(GO) build -o $(BIN)/debian-roots ./test/cmd/debian-roots
	$(BIN)/debian-roots > $(BIN)/debian-roots.log 2>&1 &
	$(MAKE) --no-print-directory -j2 --output-sync=target assets build
	$(MAKE) --no-print-directory verify
	$(MAKE) --no-print-directory -j2 --output-sync=target go-test py-test
	$(MAKE) --no-print-directory magnum-test

.PHONY: testbed
testbed: deps tools build ## Run the test stack (management API, CRDs, conversion, the real Cluster API controllers, chart repo, Keystone) until interrupted.
	KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers $(BIN)/testbed -sidecar-config $(BIN)/magnum-capi-testbed.yaml

.PHONY: demo
# kube-apiserver and etcd build beside the demo's binaries: on a fresh
# machine both are long compiles whose single-threaded stretches (big
# packages, links) leave a core idle.
# (make expands a recipe whole before running it, so the demo runs in a
# make of its own, once $(ASSETS) is built.)
demo: deps ## Real Magnum 15 services driven by the openstack CLI (create, show, config, resize, delete), then the timeline of one cluster through the shim.
	$(MAKE) --no-print-directory -j2 --output-sync=target assets demo-build
	$(MAKE) --no-print-directory demo-run

# The two halves run at once, each on a stack of its own; the second's
# timeline is printed after the first's tables, as if they had run one
# after the other.
.PHONY: demo-run
demo-run:
	second=$$(mktemp); trap 'rm -f "$$second"' EXIT; \
	$(PY_ENV) $(PYTHON) test/demo/demo.py > "$$second" 2>&1 & py=$$!; \
	first=0; KUBEBUILDER_ASSETS="$(ASSETS)" MAGNUM_CAPI_BIN=$(BIN)/magnum-capi MAGNUM_CAPI_CONTROLLERS_BIN=$(BIN)/capi-controllers $(BIN)/magnum-demo || first=$$?; \
	wait $$py && rc=0 || rc=$$?; cat "$$second"; \
	exit $$(( first != 0 ? first : rc ))
