#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# quick.sh SERIES SCRIPT...   (a developer's loop, not part of make check)
#
# Builds what check-vm.sh builds (test module, selftests, user space), boots
# the SERIES test VM, loads the module, runs only the given test scripts
# (paths in the repository, e.g. tests/userspace/lib.sh, or a kselftest:
# tests/selftests/socket_test runs the binary built for SERIES), prints their TAP
# and any KASAN/lockdep/kmemleak report. Exit 0 when every script passed and
# dmesg is clean.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
series=${1:?usage: quick.sh SERIES SCRIPT...}
shift
# One quick run at a time on this machine: runs share the build tree and two
# TCG guests on two cores only slow each other down.
mkdir -p "$build"
exec 8>"$build/.quick.lock"
if ! flock -n 8; then
	echo "quick: waiting for another quick.sh run to finish" >&2
	flock 8
fi
# The kernel make check boots for SERIES (build-kernel.sh's "test" variant;
# SD_KERNEL_VARIANT=debug or light for another).
kdir=$("$root/tests/vm/build-kernel.sh" "$series") || exit 1
src=$("$root/tests/vm/fetch-kernel.sh" "$series") || exit 1
mkdir -p "$build/logs"
mlog=$build/logs/module-quick-$series.log
make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" WERROR=1 \
	SMBDIRECT_KUNIT=1 >"$mlog" 2>&1 || { tail -n 30 "$mlog"; exit 1; }
mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$mlog" | tail -n1)
sdir=$build/selftests/$series
make --no-print-directory -C "$root/tests/selftests" KSRC="$src" OUT="$sdir" \
	ROOT="$root" >"$build/logs/selftests-quick-$series.log" 2>&1 ||
	{ tail -n 30 "$build/logs/selftests-quick-$series.log"; exit 1; }
us=$("$root/tests/userspace/build.sh" "$root" "$build" "$kdir") ||
	echo "quick: the user space did not build: scripts that need it will fail" >&2
out=$build/vm/quick-$series-$$
mkdir -p "$out"
SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_VM_TIMEOUT:-1200} \
	"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/vm/guest/quick.sh "$sdir" "$us" "$@"
rc=$?
for f in "$out"/tap/*.tap; do
	[ -f "$f" ] && { echo "==== $(basename "$f")"; cat "$f"; }
done
grep -q '^not ok' "$out"/tap/*.tap 2>/dev/null && rc=1
# A script that ended badly without a failing case (it could not start,
# timed out) fails too.
grep -q '^# exit [1-9]' "$out"/tap/*.tap 2>/dev/null && rc=1
if ! "$root/tests/vm/scan-dmesg.sh" "$out/dmesg.txt" "$out/kmemleak.txt"; then
	rc=1
fi
echo "quick: exit $rc (output in $out)"
exit $rc
