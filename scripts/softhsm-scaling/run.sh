#!/usr/bin/env bash
# SoftHSM2's own P-256 scaling from one thread to two, in C with no Go
# (probe.c): with its own mutexes, with spinning ones, and OpenSSL alone
# doing what SoftHSM2 does per sign. Modes alternate, REPS times each, so
# all see the same load.
#
#   scripts/softhsm-scaling/run.sh [REPS]     (needs gcc and softhsm2; libssl-dev for the openssl rows)
set -euo pipefail
cd "$(dirname "$0")"
reps=${1:-5}
module=${SOFTHSM2_MODULE:-/usr/lib/softhsm/libsofthsm2.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
modes=(os spin)
flags=()
if [ -f /usr/include/openssl/ec.h ]; then
	flags=(-DWITH_OPENSSL -lcrypto -Wno-deprecated-declarations)
	modes+=(openssl)
fi
gcc -O2 -o "$tmp/probe" probe.c -ldl -lpthread "${flags[@]}"
for r in $(seq "$reps"); do
	for m in "${modes[@]}"; do
		rm -rf "$tmp/tokens" && mkdir "$tmp/tokens"
		printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$tmp/tokens" >"$tmp/conf"
		SOFTHSM2_CONF="$tmp/conf" softhsm2-util --init-token --free --label probe --pin 1234 --so-pin 5678 >/dev/null
		burst=16 # ~1.2 ms of SoftHSM2 signs
		[ "$m" = openssl ] && burst=40 # about as long
		SOFTHSM2_CONF="$tmp/conf" "$tmp/probe" "$module" 1234 "$m" 200 "$burst"
	done
done
