#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/plugin/build.sh <build-dir>
#
# Builds the sdcount TCG plugin (sdcount.c) against the installed QEMU's own
# plugin header (fetch-qemu-header.sh) into <build-dir>/sdcount.so and prints
# that path. Rebuilt only when the source or the header changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: build.sh <build-dir>" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
hdr=$("$here/fetch-qemu-header.sh")
so=$out/sdcount.so
if [ ! -f "$so" ] || [ "$here/sdcount.c" -nt "$so" ] || [ "$hdr" -nt "$so" ] ||
	[ "$0" -nt "$so" ]; then
	${CC:-gcc} -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC -shared \
		-I"$(dirname "$hdr")" -o "$so.tmp" "$here/sdcount.c" -lpthread
	mv "$so.tmp" "$so"
fi
echo "$so"
