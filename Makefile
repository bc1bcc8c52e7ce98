# The README's two commands are `make e2e` and `make test`; everything else
# here serves them.
SHELL := /bin/bash
GO ?= go
ARTIFACTS ?= $(CURDIR)/_artifacts
TOPOLOGY ?= topologies/default.yaml
TOOLS := $(CURDIR)/_tools
export PATH := $(TOOLS):$(PATH)

.PHONY: campaign all build binaries node-tools kind-node-image ready test fuzz e2e e2e-kind e2e-existing bench gate selftest crashtest generate lint deps clean

all: build

## deps: install the Debian packages the tests need (protoc, capnp, openssl, nftables, iproute2) when missing.
deps:
	@./hack/deps.sh

VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

BIN ?= bin

# Everything in bin/ builds without cgo and with -trimpath: the kind
# provider's nodes run nvcf-ref on an empty base image, and one
# configuration compiles each package once (a cgo harness beside a static
# nvcf-ref compiled most of the dependencies twice: 345 s against 263 s
# from an empty build cache). It is also how the control plane is built
# from source, with the harness's module versions, so the packages they
# share (client-go, the API types, gRPC) come from the build cache there.
NOCGO := CGO_ENABLED=0
TRIM := -trimpath

## build: everything a run needs into $(BIN)/: the CLI, the reference components,
## the compiled scenario suite, and test2json + gotestsum for its JUnit.
## bin/harness run needs nothing else (no Go, no source tree).
## Each step says what it compiles, and keeps saying so every 20 s (hack/heartbeat.sh).
build:
	@$(NOCGO) ./hack/heartbeat.sh "compiling the harness and the reference components" $(GO) build $(TRIM) -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	@$(MAKE) --no-print-directory node-tools
	@$(NOCGO) ./hack/heartbeat.sh "compiling the scenario suite" $(GO) test $(TRIM) -c -o $(BIN)/scenarios.test ./scenarios
	@$(NOCGO) ./hack/heartbeat.sh "compiling test2json and gotestsum" $(GO) build $(TRIM) -o $(BIN)/ cmd/test2json gotest.tools/gotestsum

## binaries: download (checksum-verified) or build, once, the embedded provider's pinned control plane, and kubectl.
binaries:
	@$(NOCGO) ./hack/heartbeat.sh "compiling the harness to check the control-plane binaries" $(GO) run $(TRIM) ./cmd/harness binaries --kubectl

# node-tools: nvcf-pause and nvcf-runc go into the kind node image, whose
# cache key hashes them: built without version or VCS stamps, their bytes
# change only with their source (clusters/kind's test builds them the same way).
node-tools:
	$(GO) build -trimpath -buildvcs=false -o $(BIN)/ ./cmd/nvcf-pause ./cmd/nvcf-runc

## kind-node-image: build the kind provider's node image offline, once, into the cache (root; no Docker daemon needed).
kind-node-image: node-tools
	@./hack/deps.sh docker
	$(NOCGO) $(GO) build $(TRIM) -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/harness
	@./hack/heartbeat.sh "building the kind node image (binaries from source, Debian root, component images)" nice -n 19 ionice -c3 ./$(BIN)/harness kind node-image

# As root the tests include the embedded provider's own end-to-end test, which
# needs the control-plane binaries; build them first so its timeout covers
# the test, not a cold build.
ifeq ($(shell id -u),0)
TEST_PREREQS := binaries
endif

## test: unit and in-process integration tests with the race detector, JUnit in $(ARTIFACTS),
## then a bounded fuzz run of the reverse tunnel's decoder.
test: deps $(TEST_PREREQS)
	@mkdir -p $(ARTIFACTS)
	$(GO) tool gotestsum --format testname --junitfile $(ARTIFACTS)/junit-unit.xml -- -race -count=1 -timeout 30m ./...
	$(MAKE) fuzz

FUZZTIME ?= 20s

## fuzz: fuzz the reverse tunnel's Cap'n Proto readers for $(FUZZTIME) (malformed input must give a typed error).
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzReadStream$$' -fuzztime=$(FUZZTIME) ./fixtures/tunnel/

# ready: the control plane (a download, or a long cold build) and bin/ at
# the same time: the harness first (it fetches or builds the binaries), then
# the suite and the rest of bin/ while the binaries come.
ready: deps
	@$(NOCGO) ./hack/heartbeat.sh "compiling the harness (from an empty build cache this takes minutes)" $(GO) build $(TRIM) -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/harness
	@./$(BIN)/harness binaries & pid=$$!; \
		$(MAKE) --no-print-directory build || { kill $$pid; wait $$pid; exit 1; }; \
		wait $$pid

## e2e: bring up (or reuse) the default topology on the embedded provider and run the whole matrix.
e2e: ready
	@mkdir -p $(ARTIFACTS)
	./bin/harness run --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)

## e2e-kind: the matrix on three kind clusters (root; Docker's daemon is started when none runs, the node image
## built once into the cache); KIND_RUN passes run flags, e.g. KIND_RUN="--layer tls" for less.
KIND_RUN ?=
e2e-kind: ready kind-node-image
	@mkdir -p $(ARTIFACTS)/kind
	./bin/harness run --provider kind --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)/kind $(KIND_RUN)

## e2e-existing: the existing provider on foreign clusters (root): embedded clusters from `harness up`, reached
## through renamed contexts; one cell's every layer (EXISTING_RUN="--layer tls" for less), then `down --provider
## existing` must leave every object of every cluster as it was.
EXISTING_RUN ?=
e2e-existing: ready
	NVCF_BIN=$(CURDIR)/$(BIN) NVCF_EXISTING_RUN="$(EXISTING_RUN)" \
		$(GO) test -count=1 -timeout 20m -run '^TestExistingProviderOnForeignClusters$$' -v ./cmd/harness/

BENCHFLAGS ?=

## bench: from nothing: bring-up time, idle memory per cluster, matrix wall time, tunnel vs direct
## invocation latency; report in $(ARTIFACTS)/bench.md (BENCHFLAGS="--layer tls" for a subset).
bench: ready
	@mkdir -p $(ARTIFACTS)
	./bin/harness bench --topology $(TOPOLOGY) --artifacts $(ARTIFACTS) $(BENCHFLAGS)

GATE ?= gates/release.yaml

## gate: apply the release gate ($(GATE)) to the run in $(ARTIFACTS): exit 0 when it may ship, 1 when it blocks.
gate:
	./bin/harness gate --file $(GATE) --artifacts $(ARTIFACTS)

## selftest: re-create every registered defect of the reference components (fixtures/defects) on a fresh
## environment and prove its scenarios catch it; the detection matrix goes to $(ARTIFACTS)/selftest
## (junit.xml, detection.md, summary.md). SELFTEST_ARGS=--epic runs the epic's five items only (CI).
SELFTEST_ARGS ?=
selftest: ready
	@mkdir -p $(ARTIFACTS)
	./bin/harness selftest --artifacts $(ARTIFACTS)/selftest $(SELFTEST_ARGS)

## campaign: a fault campaign (harness campaign) on the embedded default: a seeded random schedule of faults
## while the invariants I1-I4 are checked; reports in $(ARTIFACTS)/campaign (campaign.html, junit.xml,
## summary.md, schedule.json). CAMPAIGN_ARGS overrides the CI-sized default (seed 7, 2 minutes).
CAMPAIGN_ARGS ?= --seed 7 --duration 2m --settle 45s
campaign: ready
	@mkdir -p $(ARTIFACTS)
	./bin/harness campaign --artifacts $(ARTIFACTS)/campaign $(CAMPAIGN_ARGS)

## crashtest: kill up, run (deploy, fault), fault inject and down with SIGKILL at random points, 60 times, each of the 15 kill points four times (root); the report (every iteration, per kill point the next command's min/median/max time) goes to $(ARTIFACTS)/crashtest.txt. NVCF_CRASHTEST_OFFSET and NVCF_CRASHTEST_POINTS run it in chunks.
crashtest: deps binaries
	@mkdir -p $(ARTIFACTS)
	NVCF_CRASHTEST_ITERATIONS=$${NVCF_CRASHTEST_ITERATIONS:-60} NVCF_CRASHTEST_REPORT=$(ARTIFACTS)/crashtest.txt \
		$(GO) test -count=1 -timeout 180m -run TestCrashPoints -v ./clusters/local/

## generate: regenerate committed code (the gRPC protocol and the tunnel's Cap'n Proto schema).
generate: deps
	$(GO) build -o $(TOOLS)/ google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc capnproto.org/go/capnp/v3/capnpc-go
	$(GO) generate ./...

## lint: gofmt, go vet, and go.mod/go.sum as `go mod tidy` leaves them.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy and commit the result"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin $(TOOLS) $(ARTIFACTS)
