#!/bin/sh
# make dist: release archives of cmd/signerkit for linux/amd64 and
# linux/arm64 in dist/ (DIST_DIR), with SHA256SUMS.
#
# An archive is signerkit-VERSION-linux-ARCH[-nocgo].tar.gz: "-nocgo" marks a
# build without cgo (static, runs on any Linux, but no Ledger over USB and no
# PKCS#11; docs/install.md). linux/amd64 is built both ways when a C compiler
# for it is found; linux/arm64 with cgo only given a cross compiler
# (CC_LINUX_ARM64, or aarch64-linux-gnu-gcc on PATH), else without.
#
# Each archive holds the binary, README.md, LICENSE, BUILD (what it was built
# with), docs/ (install, quickstart, daemon, state, metrics, identity, keys, migrate), contrib/systemd/ and
# contrib/udev/. The version is stamped by scripts/version-ldflags.sh;
# builds use -trimpath and archives are made with fixed owners and times.
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
out=${DIST_DIR:-dist}
stamps=$(scripts/version-ldflags.sh)
version=$(printf '%s\n' "$stamps" | sed -n 's/.*-X main\.version=\([^ ]*\).*/\1/p')
[ -n "$version" ] || version=devel
mtime=$(git log -1 --format=%ct HEAD 2>/dev/null || date +%s)
host=$($GO env GOHOSTOS)/$($GO env GOHOSTARCH)

# build ARCH CGO LABEL [CC]: one archive.
build() {
	arch=$1 cgo=$2 label=$3 cc=${4:-}
	name=signerkit-$version-$label
	stage=$out/.stage/$name
	rm -rf "$stage"
	mkdir -p "$stage/docs" "$stage/contrib"
	echo "building $name"
	CGO_ENABLED=$cgo GOOS=linux GOARCH=$arch CC=${cc:-${CC:-cc}} \
		$GO build -trimpath -ldflags "-s -w $stamps" -o "$stage/signerkit" ./cmd/signerkit
	if [ "linux/$arch" = "$host" ]; then
		# The binary says what it is; a mislabelled archive fails here.
		want=on; [ "$cgo" = 1 ] || want=off
		"$stage/signerkit" version | grep -q "^  cgo *$want:" ||
			{ echo "dist: $name does not report cgo $want" >&2; exit 1; }
	fi
	cp README.md LICENSE "$stage/"
	cp docs/install.md docs/quickstart.md docs/daemon.md docs/state.md docs/metrics.md docs/identity.md docs/keys.md docs/migrate.md "$stage/docs/"
	cp -R contrib/systemd contrib/udev "$stage/contrib/"
	{
		echo "signerkit $version for linux/$arch"
		echo "go: $($GO env GOVERSION)"
		if [ "$cgo" = 1 ]; then
			echo "cgo: on (a Ledger over USB and PKCS#11 tokens work); links glibc"
		else
			echo "cgo: off (static; no Ledger over USB, no PKCS#11 tokens)"
		fi
	} >"$stage/BUILD"
	tar -C "$out/.stage" --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime="@$mtime" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
}

# cc_for ARCH: a C compiler that targets linux/ARCH, or nothing.
cc_for() {
	case $1 in
	amd64) native=x86_64; cross=${CC_LINUX_AMD64:-x86_64-linux-gnu-gcc} ;;
	arm64) native=aarch64; cross=${CC_LINUX_ARM64:-aarch64-linux-gnu-gcc} ;;
	esac
	if [ "$host" = "linux/$1" ] && command -v "${CC:-cc}" >/dev/null; then
		echo "${CC:-cc}"
	elif command -v "$cross" >/dev/null; then
		echo "$cross"
	elif [ "$(uname -m)" = "$native" ] && command -v cc >/dev/null; then
		echo cc
	fi
}

mkdir -p "$out"
rm -rf "$out/.stage"
rm -f "$out"/signerkit-*.tar.gz "$out/SHA256SUMS"
for arch in amd64 arm64; do
	cc=$(cc_for $arch)
	if [ -n "$cc" ]; then
		build $arch 1 linux-$arch "$cc"
	else
		echo "no C compiler for linux/$arch: building it without cgo only"
	fi
	build $arch 0 linux-$arch-nocgo
done
rm -rf "$out/.stage"
(cd "$out" && sha256sum -- *.tar.gz >SHA256SUMS)
cat "$out/SHA256SUMS"
