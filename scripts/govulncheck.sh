#!/usr/bin/env bash
# govulncheck on the main module, offline from vuln.go.dev: the advisories
# are golang.org/x/vulndb's OSV files at VULNDB_VERSION, downloaded through
# the module proxy and indexed into govulncheck's database layout by
# vulndb's own cmd/indexdb (once per version, into a cache directory).
#
# The standard library is checked as of VULNCHECK_GO, the newest patch
# release of the Go the module builds with, which the go command fetches
# from the module proxy as golang.org/toolchain. Standard library
# vulnerabilities are fixed by building with a newer patch release, not by
# changing this module; a local toolchain older than VULNCHECK_GO gets a
# note naming it (VULNCHECK_GO=local checks the local one's instead).
#
# VULNDB=https://vuln.go.dev (or any file:// or https:// database) skips the
# download and uses that database instead.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
: "${GOVULNCHECK_VERSION:?}" "${VULNDB_VERSION:?}" "${VULNCHECK_GO:?}"

db=${VULNDB:-}
if [ -z "$db" ]; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/signerkit/vulndb-$VULNDB_VERSION
	if [ ! -f "$cache/index/db.json" ]; then
		# Outside any module, so that nothing here touches go.mod or go.sum.
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		src=$(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod "$GO" mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		if [ ! -d "$src/data/osv" ]; then
			echo "govulncheck: golang.org/x/vulndb@$VULNDB_VERSION has no data/osv" >&2
			exit 1
		fi
		echo "govulncheck: indexing $(ls "$src/data/osv" | wc -l) advisories of golang.org/x/vulndb@$VULNDB_VERSION into $cache"
		mkdir -p "$(dirname "$cache")"
		rm -rf "$cache.tmp"
		(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod "$GO" run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" \
			-vulns "$src/data/osv" -out "$cache.tmp")
		rm -rf "$cache"
		mv "$cache.tmp" "$cache"
	fi
	db=file://$cache
fi

local_go=$("$GO" env GOVERSION)
if [ "$VULNCHECK_GO" != local ] && [ "$VULNCHECK_GO" != "$local_go" ]; then
	echo "govulncheck: checking the standard library of $VULNCHECK_GO, not this toolchain's ($local_go);" \
		"make govulncheck VULNCHECK_GO=local lists what $local_go carries"
fi
GOTOOLCHAIN=$VULNCHECK_GO "$GO" run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "$db" ./...
