#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-vms.sh ROOT BUILD "SERIES..." [demo]
#
# Every VM boot of make check, two at a time: a TCG guest keeps about one
# of this machine's two cores busy (rxe and siw are software, every round
# trip is emulated CPU work), so two boots side by side take little longer
# than one and a third would only slow the other two. First everything is
# built, one kernel after the other (check-vm.sh PART=prepare), so that no
# two boots build into the same directory. Then two workers take the boots
# from one queue, each the next as soon as its last ended:
#   SERIES user   the user-space suites (USERSPACE_KERNELS only)
#   SERIES smb    the SMB-stack interop (USERSPACE_KERNELS only)
#   SERIES kernel KUnit, kselftests, cifs.ko/ksmbd transport interop
#   demo          `make check-demo` (with "demo"): the README's command
# Each boot's output goes to BUILD/logs/vm-JOB.log and is printed, whole,
# when it ends, with the seconds it took. Exit 1 when any part failed.
set -uo pipefail
root=$1 build=$2 kernels=$3 demo=${4:-}
mkdir -p "$build/logs"
rc=0
t0=$SECONDS
for k in $kernels; do
	"$root/tests/vm/check-vm.sh" "$root" "$build" "$k" prepare || rc=1
done
echo "== VM builds done in $((SECONDS - t0)) s"
# From here on the boots only read what was built (see check-vm.sh).
export SD_VM_PREPARED=1

# The queue, longest first so that the two workers end together (boot
# times of the cold run of 2026-11-23, two boots side by side: 7.2 kernel
# 1034 s, 7.2 smb 1034 s, 7.2 user 959 s, 6.12 kernel 773 s with every
# selftest variant (fewer since), demo ~250 s; genl.sh adds to both
# kernel boots): the kernel boots of the USERSPACE_KERNELS, their smb and
# user boots, the other kernels' (lighter: see check-vm.sh's variants)
# newest first, then the demo.
userspace_kernels() {
	local k
	for k in $kernels; do
		case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) echo "$k" ;; esac
	done
}
jobs=()
for k in $(userspace_kernels); do jobs+=("$k kernel"); done
for k in $(userspace_kernels); do jobs+=("$k smb"); done
for k in $(userspace_kernels); do jobs+=("$k user"); done
for k in $(echo $kernels | tr ' ' '\n' | sort -rV); do
	case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) ;; *) jobs+=("$k kernel") ;; esac
done
[ "$demo" = demo ] && jobs+=(demo)

queue=$build/logs/vm-queue
printf '%s\n' "${jobs[@]}" >"$queue"
: >"$queue.failed"

# pop: the first job of the queue, under a lock, or nothing when empty.
pop() {
	(
		flock 9
		head -n 1 "$queue"
		sed -i 1d "$queue"
	) 9>"$queue.lock"
}

run_job() { # JOB LOG
	case $1 in
	demo) make --no-print-directory -C "$root" check-demo NO_RESET=1 BUILD="$build" ;;
	*) "$root/tests/vm/check-vm.sh" "$root" "$build" $1 ;;
	esac >"$2" 2>&1
}

worker() {
	local job log start r
	while job=$(pop) && [ -n "$job" ]; do
		log=$build/logs/vm-${job// /-}.log
		start=$SECONDS
		run_job "$job" "$log"
		r=$?
		[ $r -eq 0 ] || echo "$job" >>"$queue.failed"
		# One whole log at a time on stdout.
		(
			flock 9
			cat "$log"
			echo "== $job: $((SECONDS - start)) s (at $((SECONDS - t0)) s of the VM phase)"
		) 9>"$queue.lock"
	done
}

echo "== VM boots, two at a time: ${jobs[*]/%/,} logs in $build/logs/vm-*.log"
worker &
w1=$!
worker &
w2=$!
wait $w1 $w2
if [ -s "$queue.failed" ]; then
	echo "== VM boots with failures: $(tr '\n' ' ' <"$queue.failed")"
	rc=1
fi
echo "== VM phase: $((SECONDS - t0)) s"
exit $rc
