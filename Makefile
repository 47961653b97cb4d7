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
GO_TEST_FLAGS ?= -count=1
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
build: ## Build bin/magnum-capi.
	$(GO) build -o $(BIN)/magnum-capi ./cmd/magnum-capi

.PHONY: generate
generate: ## Regenerate the Go and Python code from proto/ with buf.
	PATH="$(PROTO_TOOLS):$$PATH" buf generate

.PHONY: verify
verify: deps ## Fail if generated code is stale, buf lint fails, or a pure package imports I/O code.
	PATH="$(PROTO_TOOLS):$$PATH" buf lint
	hack/verify-generated.sh "$(PROTO_TOOLS)"
	hack/lint-imports.sh $(PURE_PACKAGES)
	$(GO) vet ./...

.PHONY: go-test
go-test: ## Go tests (unit, test bed, end-to-end).
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) test $(GO_TEST_FLAGS) ./...

.PHONY: py-test
py-test: deps build ## Python tests of the shim on Debian's python3-magnum.
	MAGNUM_CAPI_BIN=$(BIN)/magnum-capi KUBEBUILDER_ASSETS="$(ASSETS)" $(PYTHON) -m pytest -q magnum

.PHONY: test
test: deps tools verify go-test py-test ## Everything CI runs (installs what it needs).

.PHONY: testbed
testbed: tools ## Run a management API with CRDs, conversion and the CAPI simulator until interrupted.
	KUBEBUILDER_ASSETS="$(ASSETS)" $(GO) run ./test/cmd/testbed

.PHONY: demo
demo: deps tools build ## One cluster through create -> CREATE_COMPLETE -> delete -> DELETE_COMPLETE via the shim.
	MAGNUM_CAPI_BIN=$(BIN)/magnum-capi KUBEBUILDER_ASSETS="$(ASSETS)" $(PYTHON) test/demo/demo.py
