#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# module-tree.sh ROOT DIR: make DIR a tree of symlinks to the module's
# sources (Kbuild, kernel/, uapi/, tests/kunit/, tests/kmod/) so that Kbuild writes its
# objects into DIR, one DIR per kernel. Links to deleted sources are removed.
set -euo pipefail
root=$1 dir=$2
mkdir -p "$dir"
for p in Kbuild kernel uapi tests/kunit tests/kmod; do
	[ -e "$root/$p" ] || continue
	mkdir -p "$dir/$(dirname "$p")"
	cp -rsf "$root/$p" "$dir/$(dirname "$p")/"
done
find "$dir" -xtype l -delete
