#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh ROOT BUILD "SERIES..." [KDIR]     (make kunit)
#
# The KUnit suites of af_smbdirect.ko, their KTAP on stdout and nothing
# else there (progress, build logs and kunit.py's summary go to stderr), so
# that a kernel CI lab consumes it as it does in-tree suites' output.
#  - Without KDIR: for each SERIES (VM_KERNELS) the test kernel
#    (tests/vm/build-kernel.sh), the KUnit build of the module against it,
#    one VM boot that only loads and unloads it (tests/vm/guest/kunit.sh),
#    and the KTAP the guest wrote: one KTAP document per kernel, in order.
#  - With KDIR (make kunit KDIR=<prepared tree>): the KUnit build against
#    that tree, for a lab to load on its own kernel (tests/kunit/ktap.sh
#    MODULE.ko does it there). When the running kernel is the tree's
#    (same release string) and we are root, it is loaded here and its KTAP
#    printed.
# Exit status: 0 every case passed or was skipped, 1 a case failed or a
# step did not work.
set -uo pipefail
root=$1 build=$2 series=$3 kdir=${4:-}
mkdir -p "$build/logs"
say() { echo "kunit: $*" >&2; }

build_module() { # kdir log -> prints the module's path
	if ! make --no-print-directory -C "$root" module KDIR="$1" BUILD="$build" \
			SMBDIRECT_KUNIT=1 >"$2" 2>&1; then
		tail -n 30 "$2" >&2
		say "the KUnit build against $1 failed (log: $2)"
		return 1
	fi
	sed -n 's/^built \(.*\/af_smbdirect.ko\) against .*/\1/p' "$2" | tail -n1
}

# A summary for the reader on stderr, by the kernel's own parser.
summarize() { # ksrc ktap label
	local kunit=$1/tools/testing/kunit/kunit.py
	[ -f "$kunit" ] || return 0
	PYTHONDONTWRITEBYTECODE=1 python3 "$kunit" parse <"$2" 2>&1 |
		sed 's/\x1b\[[0-9;]*m//g' | grep -o 'Testing complete\..*' | tail -n1 |
		sed "s/^/kunit: $3: kunit.py parse: /" >&2
}

if [ -n "$kdir" ]; then
	[ -f "$kdir/include/config/auto.conf" ] ||
		{ say "KDIR=$kdir is not a prepared kernel tree (no include/config/auto.conf)"; exit 1; }
	grep -qE '^CONFIG_KUNIT=(y|m)$' "$kdir/include/config/auto.conf" ||
		{ say "KDIR=$kdir: the kernel has no CONFIG_KUNIT: the suites cannot run on it"; exit 1; }
	tag=$(basename "$kdir")
	ko=$(build_module "$kdir" "$build/logs/kunit-$tag.log") || exit 1
	[ -n "$ko" ] && [ -f "$ko" ] || { say "no module in $build/logs/kunit-$tag.log"; exit 1; }
	release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null)
	say "built $ko for $release (CONFIG_KUNIT=$(sed -n 's/^CONFIG_KUNIT=//p' "$kdir/include/config/auto.conf"))"
	if [ "$(uname -r)" != "$release" ] || [ "$(id -u)" -ne 0 ]; then
		say "not loaded here (running $(uname -r) as uid $(id -u)): on a $release" \
			"kernel, as root: $root/tests/kunit/ktap.sh $ko"
		exit 0
	fi
	out=$build/kunit/$tag
	rm -rf "$out"
	"$root/tests/kunit/ktap.sh" "$ko" "$out" 2>&1 >/dev/null | sed 's/^/kunit: /' >&2
	rc=${PIPESTATUS[0]}
	[ -s "$out/kunit.ktap" ] && [ "$rc" -ne 2 ] || { say "no KTAP from $ko"; exit 1; }
	cat "$out/kunit.ktap"
	# An O= build directory links to its source tree.
	ksrc=$kdir
	[ -f "$ksrc/tools/testing/kunit/kunit.py" ] || ksrc=$kdir/source
	summarize "$ksrc" "$out/kunit.ktap" "$release"
	exit "$rc"
fi

rc=0
for s in $series; do
	t0=$SECONDS
	kdir=$("$root/tests/vm/build-kernel.sh" "$s") || { say "$s: no test kernel"; rc=1; continue; }
	src=$("$root/tests/vm/fetch-kernel.sh" "$s") || src=
	ko=$(build_module "$kdir" "$build/logs/kunit-$s.log") || { rc=1; continue; }
	out=$build/vm/kunit-$s
	rm -rf "$out"
	mkdir -p "$out"
	say "$s: booting the VM (console: $out/console.log)"
	SD_MODULE_DIR=$(dirname "$ko") SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_VM_TIMEOUT:-900} \
		"$root/tests/vm/run-vm.sh" "$kdir" "$out" tests/vm/guest/kunit.sh >&2
	vrc=$?
	if [ ! -s "$out/kunit.ktap" ] || [ $vrc -eq 2 ] || [ $vrc -gt 100 ]; then
		say "$s: the guest wrote no KTAP (exit $vrc); the console's end:"
		tail -n 30 "$out/console.log" >&2
		rc=1
		continue
	fi
	cat "$out/kunit.ktap"
	[ $vrc -eq 0 ] || rc=1
	[ -z "$src" ] || summarize "$src" "$out/kunit.ktap" "$s"
	if ! "$root/tests/vm/scan-dmesg.sh" "$out/dmesg.txt" >"$out/reports.txt" 2>&1; then
		say "$s: the kernel log has reports (KASAN, lockdep, ...): $out/reports.txt"
		rc=1
	fi
	say "$s: $((SECONDS - t0)) s"
done
exit $rc
