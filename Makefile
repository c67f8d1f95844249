# cpesuite: two commands on a fresh machine: `make run` and `make test`.

GO          ?= go
BIN         := bin/cpesuite
PKG         := cpesuite/internal/buildinfo
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_TIME  ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS     := -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).BuildTime=$(BUILD_TIME)
STATICCHECK_VERSION := v0.7.0
STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
# Test flags: race detector on, no result cache so services are really exercised.
TESTFLAGS   ?= -race -count=1 -timeout 20m
TESTPKGS    ?= ./...
TESTSUM     := bin/testsum

.PHONY: build run test lint fmt vet staticcheck bench tidy-check clean

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/cpesuite

## run: start every implemented target on embedded defaults (Ctrl-C stops).
run: build
	./$(BIN) up

## test: unit, integration (real PostgreSQL/MariaDB/NATS/...) and e2e tests,
## ending with "N passed, N failed, N skipped" and every skipped test with its reason.
# pipefail: the target fails when go test fails, even if the summarizer did not notice.
test: SHELL := /bin/bash
test:
	$(GO) build -o $(TESTSUM) ./internal/tools/testsum
	set -o pipefail; $(GO) test -json $(TESTFLAGS) $(TESTPKGS) 2>&1 | ./$(TESTSUM)

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^vendor/')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

## bench: the Go benchmarks (see BENCHMARKS.md for the load tools and how the figures were taken).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./... | tee bench/latest.txt

## tidy-check: go.mod/go.sum are exactly what `go mod tidy` would write.
tidy-check:
	@cp go.mod /tmp/cpesuite.go.mod.bak; cp go.sum /tmp/cpesuite.go.sum.bak; \
	$(GO) mod tidy; \
	if ! git diff --quiet -- go.mod go.sum; then \
		echo "go.mod/go.sum are not tidy; run 'go mod tidy' and commit:"; git --no-pager diff -- go.mod go.sum; \
		cp /tmp/cpesuite.go.mod.bak go.mod; cp /tmp/cpesuite.go.sum.bak go.sum; exit 1; fi

clean:
	rm -rf bin
