# The README's two commands are `make e2e` and `make test`; everything else
# here serves them.
SHELL := /bin/bash
GO ?= go
ARTIFACTS ?= $(CURDIR)/_artifacts
TOPOLOGY ?= topologies/default.yaml
TOOLS := $(CURDIR)/_tools
export PATH := $(TOOLS):$(PATH)

.PHONY: all build binaries test fuzz e2e crashtest generate lint deps clean

all: build

## deps: install the Debian packages the tests need (protoc, capnp, openssl, nftables, iproute2) when missing.
deps:
	@./hack/deps.sh

VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

BIN ?= bin

## build: everything a run needs into $(BIN)/: the CLI, the reference components,
## the compiled scenario suite, and test2json + gotestsum for its JUnit.
## bin/harness run needs nothing else (no Go, no source tree).
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...
	$(GO) test -c -o $(BIN)/scenarios.test ./scenarios
	$(GO) build -o $(BIN)/ cmd/test2json gotest.tools/gotestsum

## binaries: download (checksum-verified) or build, once, the embedded provider's pinned control plane.
binaries:
	$(GO) run ./cmd/harness binaries

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

## e2e: bring up (or reuse) the default topology on the embedded provider and run the whole matrix.
e2e: deps binaries build
	@mkdir -p $(ARTIFACTS)
	./bin/harness run --topology $(TOPOLOGY) --artifacts $(ARTIFACTS)

## crashtest: kill up, run (deploy, fault), fault inject and down with SIGKILL at random points, 60 times, each of the 15 kill points four times (root); the summary goes to $(ARTIFACTS)/crashtest.txt.
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
