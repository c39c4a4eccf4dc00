#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-vms.sh ROOT BUILD "SERIES..." [demo]
#
# Every VM boot of make check, two at a time: a TCG guest running these
# tests keeps about one of this machine's two cores busy (their traffic is
# round trips through rxe/siw), so two boots side by side take little
# longer than one. First everything is built, one kernel after the other
# (check-vm.sh PART=prepare), so that no two boots build into the same
# directory. Then two lanes:
#   lane 1: the smb part of each kernel in USERSPACE_KERNELS (user-space
#           suites and SMB-stack interop), the longest single boot;
#   lane 2: the kernel part of each kernel (KUnit, kselftests, transport
#           interop);
# and, with "demo", `make check-demo` as soon as either lane is done.
# Each lane's output is printed when it ends (BUILD/logs/vm-lane*.log).
# Exit 1 when any part failed.
set -uo pipefail
root=$1 build=$2 kernels=$3 demo=${4:-}
mkdir -p "$build/logs"
rc=0
for k in $kernels; do
	"$root/tests/vm/check-vm.sh" "$root" "$build" "$k" prepare || rc=1
done

lane1() {
	local k r=0
	for k in $kernels; do
		case " ${USERSPACE_KERNELS:-7.2} " in
		*" $k "*) "$root/tests/vm/check-vm.sh" "$root" "$build" "$k" smb || r=1 ;;
		esac
	done
	return $r
}
lane2() {
	local k r=0
	for k in $kernels; do
		"$root/tests/vm/check-vm.sh" "$root" "$build" "$k" kernel || r=1
	done
	return $r
}
log1=$build/logs/vm-lane1.log log2=$build/logs/vm-lane2.log
echo "== VM lanes: user space and SMB stacks ($log1), kernel suites ($log2)"
lane1 >"$log1" 2>&1 &
pid1=$!
lane2 >"$log2" 2>&1 &
pid2=$!

# The first lane to end makes room for the demo.
declare -A done_rc=()
wait -n -p first $pid1 $pid2
done_rc[$first]=$?
if [ "$first" = "$pid1" ]; then cat "$log1"; else cat "$log2"; fi
if [ "$demo" = demo ]; then
	make --no-print-directory -C "$root" check-demo NO_RESET=1 BUILD="$build" || rc=1
fi
for p in $pid1 $pid2; do
	[ "$p" = "$first" ] && continue
	wait $p
	done_rc[$p]=$?
	if [ "$p" = "$pid1" ]; then cat "$log1"; else cat "$log2"; fi
done
[ "${done_rc[$pid1]}" = 0 ] && [ "${done_rc[$pid2]}" = 0 ] || rc=1
exit $rc
