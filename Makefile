# quotagate — `make run` opens the window (or serves headless without a
# display); `make test` runs every test layer. `make help` lists the targets.
SHELL    := /bin/bash
VERSION  ?= $(shell scripts/version.sh)
TAGS     := desktop,production,webkit2_41
BIN      := build/bin/quotagate
FUZZTIME ?= 30s
# -race also turns on checkptr, which checks every unsafe.Pointer conversion.
# In modernc.org's SQLite (C translated to Go, all pointer arithmetic) that
# check was over half the CPU of every test on a real ledger, and it checks
# the translator's code, not ours; the race detector stays on everywhere.
RACE     := -race -gcflags=modernc.org/...=-d=checkptr=0
# The longest test packages first: go test starts packages in the order
# named, and the last one started runs alone at the end.
SLOWEST  := ./e2e/ ./backend/sqlite/ ./backend/gateway/ ./backend/postgres/ ./backend/quota/sim/
# step NAME, CMD: run CMD and print its wall and CPU seconds (user + sys,
# its children included), to see where make test's time goes.
step = TIMEFORMAT="step $(1): %R s wall, %U s user, %S s sys"; time $(2)
LDFLAGS  := -w -s -X main.version=$(VERSION)
NODE_OK  := frontend/node_modules/.package-lock.json
DIST     := frontend/dist/index.html
FRONTEND_SRC := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
                frontend/index.html frontend/vite.config.ts frontend/tsconfig.json

.PHONY: help deps frontend build run serve test smoke package package-check bench bench-books fuzz soak clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-9s %s\n", $$1, $$2}'

deps: ## install missing apt packages (GTK, WebKitGTK 4.1, Xvfb, Chromium, ImageMagick)
	@scripts/deps.sh

$(NODE_OK): frontend/package-lock.json
	npm --prefix frontend ci --no-audit --no-fund

$(DIST): $(NODE_OK) $(FRONTEND_SRC)
	npm --prefix frontend run build

frontend: $(DIST) ## build the dashboard (npm ci when node_modules is stale)

build: deps frontend ## build the desktop binary into build/bin/quotagate, and beside it the headless one `serve` runs from
	CGO_ENABLED=1 go build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o $(BIN)-headless .

run: build ## open the window; without a display it says so and serves, from the headless build as `serve` does
	./$(BIN)

serve: build ## run headless and print the dashboard URL and the local key
	./$(BIN) serve

# make test runs three independent chains at once, each one's output printed
# when it ends: go test waits on browsers, child processes and SDK back-offs,
# and the other two fill that idle CPU.
test: build ## vet, frontend tests + typecheck, pinned clients, go test -race (browser e2e), short fuzz, desktop smoke, packages
	$(MAKE) --no-print-directory -j3 -O test-go test-checks test-desktop

.PHONY: test-go test-checks test-desktop
# The longest packages (e2e, sqlite, postgres) take 5-6 minutes under -race
# on an idle 2-core machine, and twice that on a loaded one: past go test's
# default 10-minute alarm, which then reports a hang that is not one.
test-go:
	clients=$$(scripts/clients.sh) && { $(call step,go test,E2E_REQUIRED=1 QUOTAGATE_CLIENTS_DIR=$$clients go test $(RACE) -count=1 -timeout 25m $(SLOWEST) ./...); }

test-checks:
	$(call step,frontend test,npm --prefix frontend test)
	$(call step,frontend typecheck,npm --prefix frontend run typecheck)
	$(call step,go vet,go vet ./...)
	$(call step,fuzz,env FUZZTIME=1s scripts/fuzz.sh)

test-desktop:
	$(call step,smoke,scripts/smoke.sh)
	$(call step,package,env VERSION=$(VERSION) scripts/package.sh)
	$(call step,package-check,env VERSION=$(VERSION) scripts/package_check.sh)

smoke: build ## the desktop smoke test alone (screenshot in build/smoke/)
	scripts/smoke.sh

package: build ## the .deb, the Linux tarball and the Windows zip, into build/package/
	VERSION=$(VERSION) scripts/package.sh

package-check: ## install the built .deb, run it, remove it; check the tarball and the .exe
	VERSION=$(VERSION) scripts/package_check.sh

bench: build ## benchmarks, each against its baseline; quotagate against a direct call (cmd/gatebench)
	go test -run '^$$' -bench . -benchmem ./...
	go run ./cmd/gatebench -binary $(BIN)

BOOKS_RUNS ?= 100000
bench-books: ## the dashboard's reads and a call's CPU on ledgers of BOOKS_RUNS settled runs (built once by ledgergen into $$QUOTAGATE_BOOKS_DIR or /tmp; BOOKS_RUNS="1000000 20000000" for the big ones: ~1 KB and ~250 CPU-µs a run)
	for n in $(BOOKS_RUNS); do QUOTAGATE_BOOKS_RUNS=$$n go test -run '^$$' -bench 'BenchmarkBooks' -benchtime 1000x -v -timeout 24h ./backend/sqlite/ || exit 1; done

fuzz: ## every fuzz target for FUZZTIME (default 30s)
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# The quota simulator is arithmetic on one goroutine: its 100 seeds × 30 days
# a condition run without -race (≈10× faster), everything else with it.
soak: ## long-running tests (QUOTAGATE_LONG=1); the quota simulator's 100 seeds × 30 days per condition
	QUOTAGATE_LONG=1 go test -count=1 -timeout 180m -v -run 'TestConditions|TestHarsherProvider|TestSixtyDays' ./backend/quota/sim/
	QUOTAGATE_LONG=1 go test $(RACE) -count=1 -timeout 60m $$(go list ./... | grep -v '/backend/quota/sim$$')

clean: ## remove build output (binary, smoke artifacts, built dashboard)
	rm -rf build/bin build/smoke build/package rsrc_windows_amd64.syso
	find frontend/dist -mindepth 1 ! -name .gitkeep -delete
