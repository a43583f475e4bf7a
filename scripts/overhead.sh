#!/usr/bin/env bash
# Instructions per sign of benchmark rows, counted by valgrind's callgrind:
# repeatable where timings on a shared machine are not. Each row runs at two
# iteration counts; the extra instructions over the extra iterations are its
# cost per sign (start-up and the untimed first sign cancel out).
#
#   scripts/overhead.sh [row …]     (default: raw-ed25519 inprocess-ed25519 inprocess-ed25519-traced)
set -euo pipefail
command -v valgrind >/dev/null || { echo "overhead.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
cd "$(dirname "$0")/.."
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=(raw-ed25519 inprocess-ed25519 inprocess-ed25519-traced)
payload=${PAYLOAD:-256}
lo=1000 hi=9000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .

# cpu.rdtscp=off: since Go 1.26, runtime.cputicks reads the clock with
# RDTSCP when the CPU has it, and valgrind 3.19 does not know that
# instruction (SIGILL in cputicks, from the runtime's lock spinning); off, the
# runtime uses MFENCE; LFENCE; RDTSC, which valgrind runs. golang.org/x/sys/cpu
# reads GODEBUG too and warns that it does not know "rdtscp"; the warning is
# harmless.
count() { # row iterations → instructions
	local out
	out=$(GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$tmp/bench.test" -test.run '^$' -test.bench "Sign/backend=$1\$/payload=$payload\$" -test.benchtime "$2x" 2>&1)
	if ! grep -q "^BenchmarkSign/backend=$1/payload=$payload" <<<"$out"; then
		echo "row $1 at payload=$payload did not run:" >&2
		grep -v '^==' <<<"$out" >&2
		exit 1
	fi
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out"
}

for row in "${rows[@]}"; do
	a=$(count "$row" $lo)
	b=$(count "$row" $hi)
	echo "$row payload=$payload $(( (b - a) / (hi - lo) )) instructions/sign"
done
