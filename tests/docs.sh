#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# docs.sh ROOT BUILD: the documentation layer of `make check`, two results
# appended to $SMBDIRECT_RESULTS (default BUILD/results.txt):
#
#   docs/html            `make docs`: Documentation/ rendered by Sphinx with
#                        warnings as errors (BUILD/docs/html)
#   docs/uapi-complete   every #define and every struct of
#                        uapi/linux/smbdirect.h is named, as a whole word,
#                        in Documentation/uapi.rst
#   docs/man-80-columns  every man page in Documentation/man/ renders at 80
#                        columns without a warning of man --warnings (groff
#                        -ww: "table wider than line width", bad macros),
#                        and there is a section-7 page for the socket family
#
# Exit 1 when one fails.
set -uo pipefail
root=$(cd "$1" && pwd)
build=$2
results=${SMBDIRECT_RESULTS:-$build/results.txt}
mkdir -p "$build/docs"

result() {
	echo "$1 docs/$2" >>"$results"
	echo "$1 docs/$2"
}

rc=0

log=$build/docs/sphinx.log
t0=$(date +%s)
if make -C "$root" --no-print-directory docs BUILD="$build" >"$log" 2>&1; then
	result pass html
	echo "   $build/docs/html/index.html ($(($(date +%s) - t0)) s)"
else
	result fail html
	# The warnings (Sphinx names file and line), else the end of the log.
	grep -E 'WARNING|ERROR|SEVERE|rror|No such file|not found' "$log" | head -n 40 | sed 's/^/   /' | grep . ||
		tail -n 20 "$log" | sed 's/^/   /'
	rc=1
fi

hdr=$root/uapi/linux/smbdirect.h
doc=$root/Documentation/uapi.rst
names=$( {
	sed -n 's/^[[:space:]]*#[[:space:]]*define[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$hdr"
	sed -n 's/^[[:space:]]*struct[[:space:]]\{1,\}\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*{.*/\1/p' "$hdr"
} | grep -vx '_UAPI_LINUX_SMBDIRECT_H' | sort -u)
missing=
count=0
for n in $names; do
	count=$((count + 1))
	grep -qw -- "$n" "$doc" 2>/dev/null || missing+=" $n"
done
if [ "$count" -gt 0 ] && [ -z "$missing" ]; then
	result pass uapi-complete
	echo "   $count names of uapi/linux/smbdirect.h, all in Documentation/uapi.rst"
else
	result fail uapi-complete
	echo "   not in Documentation/uapi.rst:${missing:- (no names found in $hdr)}"
	rc=1
fi
# man-db renders each page as a reader at 80 columns would; any warning
# (groff's -ww: tables wider than the line, unknown macros) fails.
# From Documentation/man, where a page's ".so man3/..." resolves.
pages=$(cd "$root/Documentation/man" && ls man*/*.[0-9])
bad=
for p in $pages; do
	w=$(cd "$root/Documentation/man" &&
		MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$p" 2>&1 >/dev/null)
	[ -z "$w" ] || bad+="Documentation/man/$p: $(echo "$w" | tr '\n' ' ')"$'\n'
done
[ -f "$root/Documentation/man/man7/smbdirect.7" ] || bad+="no Documentation/man/man7/smbdirect.7"$'\n'
if ! command -v man >/dev/null; then
	result fail man-80-columns
	echo "   no man (man-db): make deps installs it"
	rc=1
elif [ -z "$bad" ]; then
	result pass man-80-columns
	echo "   $(echo "$pages" | wc -l) man pages render at 80 columns without a warning"
else
	result fail man-80-columns
	printf '%s' "$bad" | head -n 40 | sed 's/^/   /'
	rc=1
fi
exit $rc
