#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The release tarball (`make dist`, issue #49):
#
#   tests/host/dist.sh <repo-root> <build-dir>
#
# host/dist-contents       the tarball holds exactly the files git tracks of
#                          the Makefile's DIST_FILES, under smbdirect-VERSION/
#                          (checked only where the tree is a git work tree)
# host/dist-reproducible   the same bytes from a second tree elsewhere: a copy
#                          of the tarball's files at another path, without
#                          git, every mtime now, written under umask 077
#                          (so the order, times, owners and modes the
#                          tarball records must all be normalised)
# One "pass|fail host/<name>" line each in $SMBDIRECT_RESULTS.
set -u -o pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 <repo-root> <build-dir>" >&2
	exit 2
fi
repo=$(realpath "$1")
mkdir -p "$2"
build=$(realpath "$2")/dist-check
results=${SMBDIRECT_RESULTS:-}
status=0
record() { # record pass|fail name
	[ -n "$results" ] && echo "$1 $2" >>"$results"
	[ "$1" = pass ] || status=1
}

rm -rf "$build" && mkdir -p "$build"
if ! make --no-print-directory -C "$repo" dist BUILD="$build/a" >"$build/a.log" 2>&1; then
	echo "dist: make dist failed:"
	tail -n 20 "$build/a.log"
	record fail host/dist-contents
	record fail host/dist-reproducible
	exit 1
fi
tarball=$(ls "$build"/a/dist/smbdirect-*.tar.xz)
top=$(basename "$tarball" .tar.xz)
echo "dist: $tarball ($(stat -c %s "$tarball") bytes)"

# What it holds.
if [ -e "$repo/.git" ]; then
	files=$(sed -n 's/^DIST_FILES = //p' "$repo/Makefile")
	# shellcheck disable=SC2086 # a list of names
	git -C "$repo" ls-files -- $files | sed "s,^,$top/," | LC_ALL=C sort >"$build/want"
	tar -tJf "$tarball" | LC_ALL=C sort >"$build/got"
	if cmp -s "$build/want" "$build/got"; then
		record pass host/dist-contents
	else
		echo "dist: the tarball's files are not what git tracks of DIST_FILES:"
		diff "$build/want" "$build/got" | head -n 20
		record fail host/dist-contents
	fi
fi

# The same bytes from elsewhere.
mkdir -p "$build/elsewhere"
(umask 077 && tar -C "$build/elsewhere" --no-same-permissions -m -xJf "$tarball")
if make --no-print-directory -C "$build/elsewhere/$top" dist BUILD="$build/b" \
	>"$build/b.log" 2>&1 && cmp "$tarball" "$build"/b/dist/"$top".tar.xz; then
	record pass host/dist-reproducible
else
	echo "dist: make dist in a second tree made other bytes (or failed):"
	tail -n 5 "$build/b.log"
	diff <(tar -tvJf "$tarball") <(tar -tvJf "$build/b/dist/$top.tar.xz" 2>/dev/null) | head -n 10
	record fail host/dist-reproducible
fi
rm -rf "$build/elsewhere"
exit $status
