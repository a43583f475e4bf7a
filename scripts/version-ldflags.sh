#!/bin/sh
# Prints the -ldflags -X settings that stamp cmd/signerkit's version facts
# (cmd/signerkit/version.go) from git, for make install and make dist: the
# go command stamps none with -buildvcs=false or in a git worktree. Outside
# a git checkout it prints nothing, and the binary reads its build info.
#
# The version is the exact tag at HEAD (vX.Y.Z), else a pseudo-version of
# the form the go command makes: v0.0.0-YYYYMMDDhhmmss-<12 hex>, or
# vX.Y.(Z+1)-0.YYYYMMDDhhmmss-<12 hex> after a tag vX.Y.Z; "+dirty" is
# added when the tree has uncommitted changes. VERSION overrides it.
set -eu
cd "$(dirname "$0")/.."
git rev-parse --verify -q HEAD >/dev/null 2>&1 || exit 0
rev=$(git rev-parse HEAD)
when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
modified=false
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then modified=true; fi
version=${VERSION:-}
if [ -z "$version" ]; then
	stamp=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
	short=$(printf %.12s "$rev")
	if tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
		version=$tag
	elif last=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD 2>/dev/null) &&
		echo "$last" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+$'; then
		patch=${last##*.}
		version="${last%.*}.$((patch + 1))-0.$stamp-$short"
	else
		version="v0.0.0-$stamp-$short"
	fi
	if [ "$modified" = true ]; then version="$version+dirty"; fi
fi
echo "-X main.version=$version -X main.revision=$rev -X main.revisionTime=$when -X main.modified=$modified"
