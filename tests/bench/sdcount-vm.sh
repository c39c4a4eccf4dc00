#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sdcount-vm.sh ROOT BUILD [SERIES]
#
# The sdcount plugin in system emulation: boots the SERIES (default 7.2)
# test kernel of make check (build-kernel.sh's "test" variant, cached)
# under -accel tcg,thread=single with the plugin and runs
# tests/bench/guest-sdloop.sh: sdloop's windows must count exactly 2N+3
# and 4N+3 instructions in the "user" bucket, and the kernel's buckets must
# be nonzero (interrupts during the loop, counted apart). One boot, about
# 25 s on a loaded 2-core machine. Results "pass|fail vm-sdcount/..." to
# $SMBDIRECT_RESULTS if set. Not part of make check (yet).
set -euo pipefail
root=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
series=${3:-7.2}
results=${SMBDIRECT_RESULTS:-}
n=1000000
status=0
record() { # pass|fail name [why]
	[ -z "$results" ] || echo "$1 $2" >>"$results"
	echo "$1 $2${3:+: $3}"
	[ "$1" = pass ] || status=1
}

SMBDIRECT_RESULTS="" "$root/tests/host/sdcount.sh" "$root" "$build" >/dev/null ||
	{ record fail vm-sdcount/loop "the host test fails first"; exit 1; }
so=$build/sdcount/sdcount.so
kdir=$("$root/tests/vm/build-kernel.sh" "$series")
names=$build/sdcount/kernel-names.txt
"$root/tests/bench/plugin/sdsyms.sh" "$kdir" > "$names"
out=$build/sdcount/vm
rm -rf "$out"
mkdir -p "$out"
rc=0
SD_VM_QUIET=1 SD_VM_TIMEOUT=600 SD_VM_ACCEL=tcg,thread=single SD_VM_APPEND=nokaslr \
	SD_VM_PLUGIN="$so,out=$out/sdcount.txt,ranges=$out/ranges.txt" \
	"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/bench/guest-sdloop.sh \
	"$build/sdcount/sdloop" "$n" "$names" || rc=$?
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
l1=$(grep -m1 'label=1 ' "$out/sdcount.txt" 2>/dev/null || true)
l2=$(grep -m1 'label=2 ' "$out/sdcount.txt" 2>/dev/null || true)
echo "guest exit $rc; $l1; $l2"
if [ "$(field user "$l1")" = $((2 * n + 3)) ] && [ "$(field user "$l2")" = $((4 * n + 3)) ]; then
	record pass vm-sdcount/loop "user $((2 * n + 3)) and $((4 * n + 3)) exactly"
else
	record fail vm-sdcount/loop "want user=$((2 * n + 3)) and user=$((4 * n + 3)): '$l1' '$l2' (guest exit $rc)"
fi
k=$(( $(field insns "$l2") - $(field user "$l2") ))
if [ "$k" -gt 0 ] && [ -s "$out/ranges.txt" ]; then
	record pass vm-sdcount/kernel-apart "$k kernel instructions in the 2N window"
else
	record fail vm-sdcount/kernel-apart "no kernel instructions or no ranges: '$l2'"
fi
exit "$status"
