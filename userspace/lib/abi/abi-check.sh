#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# abi-check.sh check|update LIBRARY ABI_FILE HEADER_DIR...
#
# Describes the ABI of LIBRARY (abidw, from its DWARF, limited to the types
# the public headers in HEADER_DIR... declare, without build paths) and
#   check:  compares it with the committed ABI_FILE (abidiff); any change,
#           even an added function, fails with the report and how to accept it
#   update: writes it to ABI_FILE
set -euo pipefail
mode=$1 lib=$2 abi=$3
shift 3
args=(--no-corpus-path --no-comp-dir-path --no-show-locs --exported-interfaces-only
	--drop-private-types)
for d in "$@"; do
	args+=(--headers-dir "$d")
done
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.raw"' EXIT
abidw "${args[@]}" --out-file "$tmp.raw" "$lib"
# Translation units are named by their source path: keep it repository-relative.
sed -e "s|path='[^']*/\(userspace/lib/src/[^']*\)'|path='\1'|" "$tmp.raw" >"$tmp"
rm -f "$tmp.raw"
case $mode in
update)
	cp "$tmp" "$abi"
	echo "abi: wrote $abi"
	;;
check)
	if [ ! -f "$abi" ]; then
		echo "abi: $abi is missing; create it with: cmake --build <build dir> --target abi-update" >&2
		exit 1
	fi
	rc=0
	report=$(abidiff --no-show-locs "$abi" "$tmp") || rc=$?
	if [ $rc -ne 0 ]; then
		echo "$report" >&2
		echo "abi: $(basename "$lib") differs from $abi (abidiff exit $rc)." >&2
		echo "abi: if the change is intended (and the soname/version node says so)," \
			"accept it with: cmake --build <build dir> --target abi-update, and commit $abi" >&2
		exit 1
	fi
	;;
*)
	echo "usage: $0 check|update LIBRARY ABI_FILE HEADER_DIR..." >&2
	exit 2
	;;
esac
