# proofsite: every entry point a developer or CI needs.
# Tools come through the Go module proxy (go.mod "tool" lines); nothing is
# assumed to be installed by hand.

GO      ?= go
BIN     := bin/proofsite
ADDR    ?= 127.0.0.1:8080
API_ADDR ?= 127.0.0.1:8081

.PHONY: run watch dev build test tools generate check-generated fmt-check vet staticcheck postgres unit audit bench bench-site bench-ledger bench-group-commit bench-ai bench-http bench-memory bench-eval bench-tiles fuzz-ledger fuzz-gate fuzz-eval clean FORCE

## run: set up the chain (first run only), build the site, serve it with the
## live edge on $(ADDR) and the API origin on $(API_ADDR)
run: tools $(BIN)
	$(BIN) ledger init --data data --content content
	$(BIN) build --content content --out public --data data
	$(BIN) serve --content content --public public --data data --addr $(ADDR) --api-addr $(API_ADDR)

## watch: build, serve and rebuild on every content edit, reloading the browser
watch: $(BIN)
	$(BIN) watch --content content --out public --addr $(ADDR)

## dev: like watch, and also regenerate and restart on template (.templ) edits
dev:
	$(GO) tool templ generate --watch --path templates --cmd "$(GO) run ./cmd/proofsite watch --content content --out public --addr $(ADDR)"

## build: compile proofsite and render content/ into public/
build: $(BIN)
	$(BIN) build --content content --out public --data data

$(BIN): FORCE
	@echo "building $(BIN) (on an empty Go cache the first build downloads and compiles every dependency: a few minutes; go lists each package as it goes)"
	$(GO) build -v -o $(BIN) ./cmd/proofsite

## test: everything CI checks
test: tools check-generated fmt-check vet staticcheck postgres unit

## tools: install what the voice needs (Debian's espeak-ng and lame), what
## the end-to-end tests run as an auditor would (curl and sha256sum), node
## for the browser verifier's test, wrk for the HTTP benchmark's script test
## and hugo for the site benchmark's workspace test, when missing; fails
## with a clear message when they cannot be installed
tools:
	@if ! command -v espeak-ng >/dev/null || ! command -v lame >/dev/null || ! command -v curl >/dev/null || ! command -v sha256sum >/dev/null || ! command -v node >/dev/null || ! command -v wrk >/dev/null || ! command -v hugo >/dev/null; then \
		echo "espeak-ng, lame, curl, sha256sum, node, wrk or hugo not found; installing Debian's packages (the voice route, the auditor guide, the browser verifier's and the benchmarks' tests need them)"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get install -y -qq espeak-ng lame curl coreutils nodejs wrk hugo >/dev/null 2>&1 || \
		{ $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq espeak-ng lame curl coreutils nodejs wrk hugo; } || \
		{ echo "make tools: could not install espeak-ng, lame, curl, coreutils, nodejs, wrk and hugo; install them with: apt-get install espeak-ng lame curl coreutils nodejs wrk hugo" >&2; exit 1; }; \
		for t in espeak-ng lame curl sha256sum node wrk hugo; do command -v $$t >/dev/null || \
		{ echo "make tools: $$t still missing after apt-get; install it by hand" >&2; exit 1; }; done; fi

## generate: regenerate templ components
generate:
	$(GO) tool templ generate -path templates

check-generated: generate
	@if [ -n "$$(git status --porcelain -- templates)" ]; then \
		echo "templ output is out of date; run 'make generate' and commit:"; \
		git status --porcelain -- templates; exit 1; fi

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$out" ]; then echo "not gofmt-formatted:"; echo "$$out"; exit 1; fi

# vet, staticcheck and unit compile every package the same way, under the
# race detector, so that an empty Go cache compiles the module and its
# dependencies once, not once with and once without -race. (The one file
# built only without it, live/eval/quality/norace_test.go, declares a
# constant.) staticcheck reads the compiled packages through go list, hence
# GOFLAGS; the tool itself is built without -race either way.
vet:
	$(GO) vet -race ./...

staticcheck:
	GOFLAGS="$$($(GO) env GOFLAGS) -race" $(GO) tool staticcheck ./...

## postgres: install Debian's PostgreSQL when missing; the live/memory/dual tests
## start a throwaway server from its binaries (and fail without them)
postgres:
	bash .ci/install-postgres

## unit: every package's tests under the race detector; the timeout leaves
## room for the chain's crash and vector tests on a busy 2-core machine. The
## real proofsite and verify-ledger commands that the end-to-end tests run
## (cmd/proofsite, ledger/store) are built once, here, also under the race
## detector, and handed to the tests in PROOFSITE_TEST_BIN_DIR. go test's own
## vet checks are a subset of go vet's, which unit runs first.
TEST_BIN_DIR := bin/test
unit: vet
	$(GO) build -race -o $(TEST_BIN_DIR)/ ./cmd/proofsite ./cmd/verify-ledger
	PROOFSITE_TEST_BIN_DIR=$(CURDIR)/$(TEST_BIN_DIR) $(GO) test -race -vet=off -timeout 30m ./...

## audit: Lighthouse (light and dark: 100 in every category), axe-core (no
## violation), layout checks and screenshots at 1280 and 390 px of a served
## build, in Debian's Chromium (tools/audit/audit.mjs says what is checked).
## Installs chromium and node from Debian when missing and the audit tools
## with npm ci; reports and screenshots go to tools/audit/out/ (ignored).
## Not part of make test: it needs a browser.
AUDIT_OUT := tools/audit/out
audit: $(BIN)
	@missing=; command -v chromium >/dev/null || missing=chromium; \
	{ command -v node >/dev/null && command -v npm >/dev/null; } || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then echo "installing Debian's$$missing"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get install -y -qq $$missing || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; }; fi
	cd tools/audit && npm ci --no-audit --no-fund
	rm -rf $(AUDIT_OUT) && mkdir -p $(AUDIT_OUT)
	$(BIN) ledger init --data $(AUDIT_OUT)/data --content content
	$(BIN) build --content content --out $(AUDIT_OUT)/public --data $(AUDIT_OUT)/data
	node tools/audit/audit.mjs --bin $(BIN) --public $(AUDIT_OUT)/public --data $(AUDIT_OUT)/data --content content --out $(AUDIT_OUT)

## bench: measured speed (see README, "Benchmarks")
bench: bench-site bench-ledger bench-group-commit bench-ai bench-http bench-memory bench-eval bench-tiles

## bench-memory: durable dual-write memory stores/s (chain block + Badger +
## SQL), with SQLite and with PostgreSQL (a throwaway local server), 1 and
## 32 concurrent callers; then POST /api/memory/store requests/s over HTTP
## on loopback (token check, chain block, Badger, SQLite), 1 and 32 clients
bench-memory: postgres
	$(GO) test -run '^$$' -bench 'Put' -benchtime 5s ./live/memory/dual
	$(GO) test -run '^$$' -bench 'MemoryStore' -benchtime 5s ./live

## bench-group-commit: durable chain appends/s from 1, 8 and 64 concurrent
## clients, unbatched (one sync per append) and with group commit, in the
## same run; then through the chain (appends and their tiles), 1 and 64
## clients; then durable town wall signatures/s (chain block + the wall's
## index): one client, and 64 clients unbatched and with group commit. The
## store's and the towns' runs end with a full walk of every appended block.
bench-group-commit:
	$(GO) test -run '^$$' -bench 'GroupCommit' -benchtime 3s ./ledger/store
	$(GO) test -run '^$$' -bench 'Append' -benchtime 3s ./ledger/chain
	$(GO) test -run '^$$' -bench 'Sign' -benchtime 3s ./live/towns

## bench-tiles: the tiled log at 1,000,000 rows: tiling from scratch and
## per appended row (ledger/tiles), and the check of a remembered checkpoint
## against the tiles at 1,000 to 1,000,000 rows (verify-ledger --tiles)
bench-tiles:
	$(GO) test -run '^$$' -bench 'TileFromScratch|TileAppend' -benchtime 1x -timeout 30m ./ledger/tiles
	$(GO) test -run '^$$' -bench 'RememberedCheckpoint' -timeout 30m ./cmd/verify-ledger

## bench-ai: the AI layer in-process: the offline responder's answer (p99
## reported), a node's reply through the official SDKs against local fake
## servers, the voice's cache, and the live edge's own cost of /api/chat
## with a zero-latency provider (its rate beside bare fiber is bench-http's)
bench-ai: tools
	$(GO) test -run '^$$' -bench 'OfflineAnswer|NodeReply' ./live/ai
	$(GO) test -run '^$$' -bench 'SpeakCached' ./live/ai/voice
	$(GO) test -run '^$$' -bench 'Chat' ./live

## bench-ledger: durable appends/s, incremental verify and Merkle append per
## row, raw crypto rate, and full walks (payloads and Merkle root included) of
## 100k and 1M stored blocks against that raw rate (fixtures are generated
## once under bench/out, which is gitignored)
bench-ledger:
	$(GO) test -run '^$$' -bench 'RawCrypto|DurableAppend|IncrementalVerify|MerkleAppend' ./ledger/store
	$(GO) test -run '^$$' -bench 'FullWalk' -benchtime 1x -timeout 60m ./ledger/store

## bench-http: requests/s, p99 and server CPU per request of the live edge
## under wrk on loopback, against a bare fiber JSON handler and nginx
## serving the same 10 KB page, measured in the same run, and POST
## /api/v1/evaluate on four ordinary 2 KB texts at 64 connections (p99 under
## 10 ms); prints a markdown report. Work files, logs and
## results.md go to bench/out/http/ (ignored). Pass flags with
## HTTPBENCH_FLAGS="--rounds 5"; "go run ./cmd/httpbench -h" lists them.
bench-http: $(BIN)
	@if ! command -v wrk >/dev/null || ! PATH="$$PATH:/usr/sbin" command -v nginx >/dev/null; then \
		echo "wrk or nginx not found; installing Debian's packages"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get install -y -qq wrk nginx || { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq wrk nginx; }; fi
	$(GO) build -o bin/httpbench ./cmd/httpbench
	bin/httpbench --bin $(BIN) --work bench/out/http $(HTTPBENCH_FLAGS)

## bench-eval: the evaluator's quality (precision, recall, F1 per category,
## false-positive rate) on the project's held-out split and on
## ../shared/eval/heldout, beside a substring heuristic, then its speed on
## 2 KB texts (latency one at a time, texts/s on every core) and the Go
## benchmarks. POST /api/v1/evaluate at 64 connections is bench-http's (wrk
## in a process of its own). Pass flags with EVALBENCH_FLAGS="-split both"
## (EVALBENCH_FLAGS='-shared ""' skips the shared set);
## "go run ./cmd/evalbench -h" lists them.
bench-eval:
	$(GO) run ./cmd/evalbench $(EVALBENCH_FLAGS)
	$(GO) test -run '^$$' -bench 'Evaluate' -benchtime 3s ./live/eval

## fuzz-eval: run the evaluator's fuzz target for FUZZTIME
fuzz-eval:
	$(GO) test -run '^$$' -fuzz '^FuzzEvaluate$$' -fuzztime $(FUZZTIME) ./live/eval

## fuzz-ledger: run each ledger fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
fuzz-ledger:
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalize$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./ledger
	$(GO) test -run '^$$' -fuzz '^FuzzHeaderPreimage$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./ledger
	$(GO) test -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./ledger
	$(GO) test -run '^$$' -fuzz '^FuzzHistory$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./ledger
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalHeader$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./cmd/verify-ledger
	$(GO) test -run '^$$' -fuzz '^FuzzCanonicalJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./cmd/verify-ledger
	$(GO) test -run '^$$' -fuzz '^FuzzMutation$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./cmd/verify-ledger

## fuzz-gate: run the gate's authorization-parser fuzz targets for FUZZTIME each
fuzz-gate:
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime $(FUZZTIME) ./ledger/gate
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeAuthorization$$' -fuzztime $(FUZZTIME) ./ledger/gate

## bench-site: full and incremental builds of 1,000/5,000 generated pages,
## proofsite against Hugo; prints a markdown report. Work files go to
## bench/out/site/ (ignored). Pass flags with BENCH_FLAGS="-runs 9 -keep";
## "go run ./cmd/sitebench -h" lists them.
bench-site: $(BIN)
	@command -v hugo >/dev/null 2>&1 || { \
		echo "hugo not found; installing Debian's package"; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq hugo; }
	$(GO) run ./cmd/sitebench $(BENCH_FLAGS)

## clean: remove build outputs; never data/ (the chain and its private keys)
clean:
	rm -rf bin public/*

FORCE:
