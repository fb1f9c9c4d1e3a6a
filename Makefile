# quotagate — `make run` opens the window (or serves headless without a
# display); `make test` runs every test layer. `make help` lists the targets.
SHELL    := /bin/bash
VERSION  ?= $(shell scripts/version.sh)
TAGS     := desktop,production,webkit2_41
BIN      := build/bin/quotagate
FUZZTIME ?= 30s
LDFLAGS  := -w -s -X main.version=$(VERSION)
NODE_OK  := frontend/node_modules/.package-lock.json
DIST     := frontend/dist/index.html
FRONTEND_SRC := $(shell find frontend/src frontend/public -type f 2>/dev/null) \
                frontend/index.html frontend/vite.config.ts frontend/tsconfig.json

.PHONY: help deps frontend build run serve test smoke package package-check bench fuzz soak clean

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

test: build ## vet, frontend tests + typecheck, pinned clients, go test -race (browser e2e), short fuzz, desktop smoke, packages
	npm --prefix frontend test
	npm --prefix frontend run typecheck
	go vet ./...
	clients=$$(scripts/clients.sh) && E2E_REQUIRED=1 QUOTAGATE_CLIENTS_DIR=$$clients go test -race -count=1 ./...
	FUZZTIME=1s scripts/fuzz.sh
	scripts/smoke.sh
	VERSION=$(VERSION) scripts/package.sh
	VERSION=$(VERSION) scripts/package_check.sh

smoke: build ## the desktop smoke test alone (screenshot in build/smoke/)
	scripts/smoke.sh

package: build ## the .deb, the Linux tarball and the Windows zip, into build/package/
	VERSION=$(VERSION) scripts/package.sh

package-check: ## install the built .deb, run it, remove it; check the tarball and the .exe
	VERSION=$(VERSION) scripts/package_check.sh

bench: build ## benchmarks, each against its baseline; quotagate against a direct call (cmd/gatebench)
	go test -run '^$$' -bench . -benchmem ./...
	go run ./cmd/gatebench -binary $(BIN)

fuzz: ## every fuzz target for FUZZTIME (default 30s)
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

soak: ## long-running tests (QUOTAGATE_LONG=1)
	QUOTAGATE_LONG=1 go test -race -count=1 -timeout 60m ./...

clean: ## remove build output (binary, smoke artifacts, built dashboard)
	rm -rf build/bin build/smoke build/package rsrc_windows_amd64.syso
	find frontend/dist -mindepth 1 ! -name .gitkeep -delete
