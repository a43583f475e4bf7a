#!/usr/bin/env bash
# benchcmp: the benchmark suite at BASE and at HEAD on this machine,
# interleaved, then benchstat's table of the two.
#
# Both trees are exported from git (uncommitted changes take no part), and
# every package with benchmarks is compiled once per side with go test -c.
# Then COUNT rounds run each package's binary once for each side, the order
# of the two sides alternating from round to round, so that drift in the
# machine (heat, other load) falls on both sides alike rather than on
# whichever ran second.
#
#   BASE       the base ref (required), e.g. origin/main or HEAD~3
#   HEAD       the ref compared against it (default HEAD)
#   BENCH      go test -bench regexp (default .)
#   PKGS       packages, as go list takes them (default ./...)
#   COUNT      rounds (default 10; benchstat wants 10 or more for a
#              confident delta)
#   BENCHTIME  go test -benchtime (default: each package's own)
#   OUT        directory for base.txt, head.txt and benchstat.txt
#              (default: a new temporary directory, kept)
#   BENCHSTAT_VERSION  golang.org/x/perf/cmd/benchstat's version
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
: "${BASE:?set BASE to the ref to compare against, e.g. make benchcmp BASE=origin/main}"
: "${BENCHSTAT_VERSION:?}"
HEAD=${HEAD:-HEAD}
BENCH=${BENCH:-.}
PKGS=${PKGS:-./...}
COUNT=${COUNT:-10}
BENCHTIME=${BENCHTIME:-}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/benchcmp.XXXXXX")}
mkdir -p "$OUT"

base_rev=$(git rev-parse --verify "$BASE^{commit}")
head_rev=$(git rev-parse --verify "$HEAD^{commit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/benchcmp-trees.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "benchcmp: base $BASE ($(git rev-parse --short "$base_rev")), head $HEAD ($(git rev-parse --short "$head_rev"))," \
	"-bench '$BENCH' ${BENCHTIME:+-benchtime $BENCHTIME }in $PKGS, $COUNT rounds; raw output in $OUT" >&2

# build SIDE REV: export REV into $work/SIDE and compile the test binary of
# each of its packages (in PKGS) that has a benchmark, listing them in
# $work/SIDE.pkgs as "import-path binary package-dir".
build() {
	local side=$1 rev=$2 tree=$work/$1
	mkdir -p "$tree" "$work/$side.bin"
	git archive "$rev" | tar -x -C "$tree"
	: >"$work/$side.pkgs"
	local path dir n=0
	while read -r path dir; do
		grep -qs '^func Benchmark' "$dir"/*_test.go || continue
		n=$((n + 1))
		local bin=$work/$side.bin/$n.test
		(cd "$tree" && "$GO" test -c -o "$bin" "$path")
		echo "$path $bin $dir" >>"$work/$side.pkgs"
	done < <(cd "$tree" && "$GO" list -f '{{.ImportPath}} {{.Dir}}' $PKGS)
}
build base "$base_rev"
build head "$head_rev"

# Only packages on both sides are compared.
mapfile -t pkgs < <(cut -d' ' -f1 "$work/base.pkgs" | sort | comm -12 - <(cut -d' ' -f1 "$work/head.pkgs" | sort))
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "benchcmp: no package in $PKGS has benchmarks at both refs" >&2
	exit 1
fi

# run SIDE PKG: one run of PKG's binary for SIDE, from its package
# directory (as go test runs it), appended to $OUT/SIDE.txt.
run() {
	local side=$1 pkg=$2 bin dir
	read -r _ bin dir < <(grep "^$pkg " "$work/$side.pkgs")
	(cd "$dir" && "$bin" -test.run '^$' -test.bench "$BENCH" -test.count 1 \
		${BENCHTIME:+-test.benchtime "$BENCHTIME"}) >>"$OUT/$side.txt" || {
		echo "benchcmp: $pkg at $side failed (exit $?); see $OUT/$side.txt" >&2
		failed=1
	}
}
failed=0
: >"$OUT/base.txt"
: >"$OUT/head.txt"
for ((i = 1; i <= COUNT; i++)); do
	echo "benchcmp: round $i of $COUNT" >&2
	for pkg in "${pkgs[@]}"; do
		if ((i % 2)); then
			run base "$pkg"
			run head "$pkg"
		else
			run head "$pkg"
			run base "$pkg"
		fi
	done
done

"$GO" run "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION" base="$OUT/base.txt" head="$OUT/head.txt" |
	tee "$OUT/benchstat.txt"
exit $failed
