# signerkit — `make test` installs what the tests need and runs them all.
GO ?= go
# Debian packages the tests need; `make deps` installs the missing ones when
# run as root (CI and fresh machines). Backends add theirs here.
DEBIAN_PACKAGES ?= softhsm2 opensc pcscd vsmartcard-vpcd gnupg scdaemon yubikey-manager etcd-server
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
# make lint's checkers, pinned. staticcheck v0.8.2 is release 2026.2.2.
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK_VERSION := v1.10.0
# govulncheck's advisories: golang.org/x/vulndb's OSV files at this commit,
# through the module proxy (see scripts/govulncheck.sh); bump it to see
# newer ones. The standard library is checked as of VULNCHECK_GO, the newest
# patch release the proxy serves of the Go the module builds with.
VULNDB_VERSION := v0.0.0-20261105234957-e22db6528018
VULNCHECK_GO ?= go1.26.11
FUZZTIME ?= 15s

.PHONY: install dist demo interop test deps fmt-check vet lint staticcheck deprecated govulncheck build-nocgo race bench bench-smoke benchcmp fuzz benchstat overhead softhsm-scaling report multicoord sidebyside

## test: install test dependencies, then check formatting, vet, lint, build
## without cgo and run every test under the race detector.
test: deps fmt-check vet lint build-nocgo race

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
		echo "missing Debian packages:$$missing (run make deps as root, or install them)"; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## lint: staticcheck (its default checks, SA1019 included; see staticcheck.conf)
## and govulncheck, both pinned, on the main module.
lint: staticcheck govulncheck

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## deprecated: staticcheck's SA1019 alone (use of a deprecated identifier),
## which make lint also runs; it prints nothing while there are none.
deprecated:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -checks SA1019 ./...

govulncheck:
	GO=$(GO) GOVULNCHECK_VERSION=$(GOVULNCHECK_VERSION) VULNDB_VERSION=$(VULNDB_VERSION) \
		VULNCHECK_GO=$(VULNCHECK_GO) scripts/govulncheck.sh

build-nocgo:
	CGO_ENABLED=0 $(GO) build ./...

race:
	$(GO) test -race ./...

## interop: the nested modules that run gno's, CometBFT's and etcd v3.7.3's own code
## against signerkit (downloads their modules on first use).
interop:
	cd interop && $(GO) vet ./... && $(GO) test ./...
	cd interop/cometbft040 && $(GO) vet ./... && $(GO) vet -tags bls12381 ./... && $(GO) test -tags bls12381 ./...
	cd interop/horcrux && $(GO) vet ./... && $(GO) test ./...
	cd interop/etcd && $(GO) vet ./... && $(GO) test ./...
	cd interop/cggmp21 && $(GO) vet ./... && $(GO) test ./... && \
		$(GO) test -run '^$$' -bench 'Threshold/cggmp21-2of3-secp256k1/presign$$' -benchtime 1x . && \
		$(GO) test -run '^$$' -bench 'Threshold/cggmp21-2of3-secp256k1/^sign$$/net=same-zone/inflight=1$$' -benchtime 1x .
	cd interop/sidebyside && $(GO) vet ./... && $(GO) test ./...

## sidebyside: signerkit's FROST 2-of-3 against horcrux v3.3.2's 2-of-3 on
## one CometBFT v0.38.26 node, on loopback and three netshape profiles
## (interop/sidebyside; make interop runs its 20-height smoke version);
## writes docs/report/threshold-vs-horcrux.md. About 15 minutes.
sidebyside:
	cd interop/sidebyside && SIDEBYSIDE_FULL=1 SIDEBYSIDE_REPORT=$(CURDIR)/docs/report/threshold-vs-horcrux.md \
		$(GO) test -run TestSideBySide -count=1 -timeout 60m -v ./...

## install: go install ./cmd/signerkit, its version stamped from git
## (scripts/version-ldflags.sh), with cgo: without a C compiler it fails
## rather than quietly leave out a Ledger over USB and PKCS#11 (make install
## CGO_ENABLED=0 builds without, docs/install.md). Prints the installed
## binary's version facts.
CGO_ENABLED ?= 1
install:
	CGO_ENABLED=$(CGO_ENABLED) $(GO) install -trimpath -ldflags "$$(scripts/version-ldflags.sh)" ./cmd/signerkit
	@bin=$$($(GO) env GOBIN); [ -n "$$bin" ] || bin=$$($(GO) env GOPATH)/bin; \
		echo "installed $$bin/signerkit"; "$$bin/signerkit" version

## dist: release archives for linux/amd64 and linux/arm64 in dist/, a
## build without cgo named so (-nocgo), with SHA256SUMS (scripts/dist.sh).
dist:
	GO=$(GO) scripts/dist.sh

## interop-migrate: moving real CometBFT v0.38 and gnoland v1.7.1 nodes
## from their FilePV to signerkit, docs/quickstart.md's lists run as they
## are, and node restarts (builds gnoland: minutes on a fresh cache).
.PHONY: interop-migrate
interop-migrate:
	cd interop && SK_INTEROP_GNOLAND=1 $(GO) test -count=1 -run 'TestMigrate(CometBFT|Gno)Node|TestQuickstart|TestRedialCometBFTNode' -v .

## interop-threshold: CometBFT v0.38 and gnoland v1.7.1 nodes signed through
## a 2-of-3 threshold key (three signerkit party processes), 200 heights
## each (SK_THRESHOLD_HEIGHTS), every party killed in turn and the
## coordinator daemon once; make interop runs 30 heights on CometBFT.
.PHONY: interop-threshold
interop-threshold:
	cd interop && SK_INTEROP_GNOLAND=1 SK_THRESHOLD_HEIGHTS=$${SK_THRESHOLD_HEIGHTS:-200} $(GO) test -count=1 -timeout 30m -run 'TestThreshold(CometBFT|Gno)Node' -v .

## scenarios: the latency analysis on a live 4-validator gnoland v1.7.1
## network, 100 blocks per scenario, into docs/report/scenarios.md
## (interop/scenarios; SK_SCENARIO_BUDGET lifts the 3-minute budget per
## scenario on a busy machine). scenarios-smoke: scenarios a and c, 10 blocks.
.PHONY: scenarios scenarios-smoke
scenarios:
	cd interop && SK_SCENARIOS=all SK_SCENARIO_REPORT=$(CURDIR)/docs/report/scenarios.md \
		$(GO) test -count=1 -timeout 60m -run TestScenarios -v ./scenarios/
scenarios-smoke:
	cd interop && SK_SCENARIOS=a,c SK_SCENARIO_BLOCKS=10 $(GO) test -count=1 -timeout 10m -run TestScenarios ./scenarios/

## demo: a simulated Ledger behind the signerkit daemon, signing for a
## validator side, with /metrics on 127.0.0.1:26661.
demo:
	$(GO) run ./cmd/signerkit demo

## bench: the benchmark suite on simulated devices (the same as
## `go test -bench=. ./...`).
bench:
	$(GO) test -run '^$$' -bench . ./...

## bench-smoke: every benchmark once, as CI runs it.
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

## benchcmp: the suite at BASE and at HEAD on this machine, the two
## interleaved COUNT times, then benchstat's table (see scripts/benchcmp.sh;
## BENCH, PKGS, BENCHTIME narrow it). make benchcmp BASE=origin/main
benchcmp:
	GO=$(GO) BENCHSTAT_VERSION=$(BENCHSTAT_VERSION) scripts/benchcmp.sh

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## multicoord: 1,000 randomized runs of two coordinators asking the same
## three parties for conflicting votes (make test runs 20).
multicoord:
	SIGNERKIT_MULTICOORD_RUNS=1000 $(GO) test -run '^TestCoordinatorsNeverDoubleSign$$' -v ./threshold

## ha: 1,000 randomized fault schedules against three signers sharing one
## state in a real 3-member etcd cluster (guard/etcdstore; make test runs
## 10). About 70 minutes; SIGNERKIT_ETCD_SEED reruns a seed.
.PHONY: ha
ha:
	SIGNERKIT_REQUIRE_ETCD=1 SIGNERKIT_ETCD_SCHEDULES=1000 $(GO) test -count=1 -timeout 6h -run '^TestCheckerNeverDoubleSigns$$' -v ./guard/etcdstore

## benchstat: install benchstat, pinned, for comparing benchmark runs.
benchstat:
	$(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

## overhead: instructions per sign of the in-process rows against
## raw-ed25519, counted by valgrind (see scripts/overhead.sh).
overhead:
	scripts/overhead.sh

## softhsm-scaling: SoftHSM2's own P-256 scaling from one thread to two,
## in C with no Go, with its mutexes and with spinning ones (see
## scripts/softhsm-scaling/probe.c).
softhsm-scaling:
	scripts/softhsm-scaling/run.sh

## bench-threshold-ecdsa: the 2-of-3 threshold rows side by side (FROST
## of internal/thresholdbench, DKLS23 of internal/dklsbench,
## the CGGMP21 comparator of interop/cggmp21) into one `go test -bench`
## output, $(THRESHOLD_ECDSA_OUT)/bench.txt, and signerbench's report of
## it there. THRESHOLD_ECDSA_BENCH narrows the rows, _BENCHTIME and _COUNT
## set their runs. cggmp21-keys: the comparator's cached test key, made
## anew (testdata/keys.bin; a key generation takes 10 to 60 s of CPU).
THRESHOLD_ECDSA_OUT ?= signerbench-report/threshold-ecdsa
THRESHOLD_ECDSA_BENCH ?= BenchmarkThreshold
THRESHOLD_ECDSA_BENCHTIME ?= 1s
THRESHOLD_ECDSA_COUNT ?= 1
.PHONY: bench-threshold-ecdsa cggmp21-keys
bench-threshold-ecdsa:
	mkdir -p $(THRESHOLD_ECDSA_OUT)
	{ $(GO) test -run '^$$' -bench '$(THRESHOLD_ECDSA_BENCH)' -benchtime $(THRESHOLD_ECDSA_BENCHTIME) -count $(THRESHOLD_ECDSA_COUNT) -timeout 0 \
		./internal/thresholdbench ./internal/dklsbench && \
	  cd interop/cggmp21 && $(GO) test -run '^$$' -bench '$(THRESHOLD_ECDSA_BENCH)' -benchtime $(THRESHOLD_ECDSA_BENCHTIME) -count $(THRESHOLD_ECDSA_COUNT) -timeout 0 . ; \
	} > $(THRESHOLD_ECDSA_OUT)/bench.txt
	$(GO) run ./cmd/signerbench -q -input $(THRESHOLD_ECDSA_OUT)/bench.txt -out $(THRESHOLD_ECDSA_OUT)
cggmp21-keys:
	cd interop/cggmp21 && $(GO) generate .

## report: the decision report of every signer path on simulated devices,
## into docs/report (report.md and two SVG charts).
report:
	$(GO) run ./cmd/signerbench -q -out docs/report
