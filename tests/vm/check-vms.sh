#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-vms.sh ROOT BUILD "SERIES..." [demo]
#
# Every VM boot of make check, two at a time: a TCG guest keeps about one
# of this machine's two cores busy (rxe and siw are software, every round
# trip is emulated CPU work), so two boots side by side take little longer
# than one and a third would only slow the other two. Each kernel is
# prepared (check-vm.sh PART=prepare: test kernel, test module, selftests,
# and the user space once), one kernel after the other, the USERSPACE_KERNELS
# first; a kernel's boots may start as soon as it is prepared. The boots:
#   SERIES user   the user-space suites (USERSPACE_KERNELS only)
#   SERIES smb    the SMB-stack interop (USERSPACE_KERNELS only)
#   SERIES kernel KUnit, kselftests, cifs.ko/ksmbd transport interop
#   SERIES subset the user-space and SMB-stack suites a release for that
#                 kernel must pass (the other kernels: 6.12, Debian 13's)
#   demo          `make check-demo` (with "demo"): the README's command
#   deb           tests/vm/deb-vm.sh (with "demo"): the Debian packages
#                 built, linted, installed with DKMS into a scratch root
#                 each kernel boots in turn (DEB_KERNELS, default every
#                 kernel, the USERSPACE_KERNELS first), purged
# Worker 1 starts with the first prepared kernel, worker 2 when every
# kernel is prepared: on a machine without cached kernels, one guest and
# the next kernel's build keep the two cores busy (two guests would leave
# the build only the ~15-20 % of the machine they leave idle, measured
# 2026-11-27). Each worker takes the longest boot whose kernel is
# prepared. Each boot's output goes to BUILD/logs/vm-JOB.log and is
# printed, whole, when it ends, with the seconds it took. Exit 1 when any
# part failed.
set -uo pipefail
root=$1 build=$2 kernels=$3 demo=${4:-}
mkdir -p "$build/logs"
rc=0
t0=$SECONDS
userspace_kernels() {
	local k
	for k in $kernels; do
		case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) echo "$k" ;; esac
	done
}
# The order of preparation: the user-space kernels (most boots) first.
order=$(userspace_kernels)
for k in $kernels; do
	case " $order " in *" $k "*) ;; *) order="$order $k" ;; esac
done
order=$(echo $order)
queue=$build/logs/vm-queue
rm -f "$queue".*
# SD_VM_PLAN_ONLY=1: print the plan (below), build and boot nothing.
prep_pid=
if [ "${SD_VM_PLAN_ONLY:-0}" != 1 ]; then
	# One lock per kernel, taken here and handed to the preparer, which
	# lets go of each when that kernel is prepared; the workers wait on
	# them. The preparer's children must not inherit them (a build's
	# stray daemon would hold a lock for ever).
	declare -A lockfd=()
	for k in $order; do
		exec {fd}>"$queue.prep-$k"
		flock -x "$fd"
		lockfd[$k]=$fd
	done
	unlock() { # SERIES...: close this shell's copy of their locks
		local j fd
		for j in "$@"; do fd=${lockfd[$j]}; exec {fd}>&-; done
	}
	(
		users=0
		for k in $order; do
			if ! (unlock $order
				SD_USERSPACE_PREPARED=$users exec "$root/tests/vm/check-vm.sh" \
					"$root" "$build" "$k" prepare); then
				echo "$k" >>"$queue.prep-failed"
			fi
			users=1
			echo "== $k prepared at $((SECONDS - t0)) s of the VM phase"
			touch "$queue.ready-$k"
			unlock "$k"
		done
	) >"$build/logs/vm-prepare.log" 2>&1 &
	prep_pid=$!
	unlock $order
fi
# From here on the boots only read what was built (see check-vm.sh).
export SD_VM_PREPARED=1

# The plan. Each boot has an expected length: the last one measured on
# this machine (~/.cache/smbdirect/vm-seconds, written below; only an
# estimate, nothing depends on it) or the defaults here (estimates for
# 2026-11-27). A worker takes the longest boot whose kernel is prepared.
jobs=()
for k in $(userspace_kernels); do jobs+=("$k kernel" "$k smb" "$k user"); done
for k in $(echo $kernels | tr ' ' '\n' | sort -rV); do
	case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) ;; *) jobs+=("$k kernel" "$k subset") ;; esac
done
[ "$demo" = demo ] && jobs+=(demo deb)
# The kernel a boot waits for (the demo builds its own, the light 7.2).
job_kernel() {
	case $1 in
	demo) echo "${SD_DEMO_KERNEL:-7.2}" ;;
	deb) userspace_kernels | head -n 1 ;;
	*) echo "${1% *}" ;;
	esac
}

# The name carries the boots' contents: a new suite in a boot makes the
# old lengths wrong, so such a change names a new file (.2: the two-party
# suites, .3: the hostile peer moved to 7.2's smb boot, 2026-11-24, .4:
# the user and smb boots and the demo on the light kernel, .5: 7.2's kernel
# boot on the light kernel and two CPUs, .6: no two-party suites on 6.12,
# 2026-11-27, .7: 6.12's subset boot and the deb boot on both kernels,
# 2026-12-07).
times_file=${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect/vm-seconds.7
declare -A est=()
for j in "${jobs[@]}"; do
	case $j in
	*" smb") est[$j]=900 ;;
	*" subset") est[$j]=700 ;;
	*" user") est[$j]=650 ;;
	demo) est[$j]=250 ;;
	deb) est[$j]=500 ;;
	*) case " $(userspace_kernels | tr '\n' ' ') " in
		*" ${j% kernel} "*) est[$j]=900 ;;
		*) est[$j]=1000 ;;
		esac ;;
	esac
done
if [ -r "$times_file" ]; then
	while read -r secs j; do
		[[ $secs =~ ^[0-9]+$ ]] && [ -n "${est[$j]+set}" ] && est[$j]=$secs
	done <"$times_file"
fi
# The queue, longest first: "SECONDS KERNEL JOB..." per line.
for j in "${jobs[@]}"; do echo "${est[$j]} $(job_kernel "$j") $j"; done | sort -rn >"$queue.todo"
: >"$queue.failed"
: >"$queue.seconds"
echo "== VM plan: kernels prepared in the order $order; boots, longest first (expected seconds):" \
	"$(awk '{ s = $1; $1 = $2 = ""; sub(/^ +/, ""); printf "%s%s %s", (NR > 1 ? ", " : ""), $0, s }' "$queue.todo")"
[ "${SD_VM_PLAN_ONLY:-0}" = 1 ] && exit 0

# pop: the longest boot left whose kernel is prepared; when none is, wait
# for the next kernel to be prepared, then look again; nothing when no
# boot is left.
pop() {
	local line k j wait_for
	while :; do
		line=$(
			{
				flock 9
				while read -r secs k j; do
					if [ -e "$queue.ready-$k" ]; then
						echo "go $j"
						grep -v -x -F "$secs $k $j" "$queue.todo" >"$queue.todo.new"
						mv "$queue.todo.new" "$queue.todo"
						exit 0
					fi
				done <"$queue.todo"
				# Kernels are prepared in $order: the first not ready is next.
				if [ -s "$queue.todo" ]; then
					for k in $order; do
						[ -e "$queue.ready-$k" ] || { echo "wait $k"; break; }
					done
				fi
			} 9>"$queue.lock"
		)
		case $line in
		"go "*) echo "${line#go }"; return 0 ;;
		"wait "*) flock -s "$queue.prep-${line#wait }" true ;;
		*) return 0 ;;
		esac
	done
}

run_job() { # JOB LOG
	case $1 in
	demo) make --no-print-directory -C "$root" check-demo NO_RESET=1 BUILD="$build" ;;
	deb) "$root/tests/vm/deb-vm.sh" "$root" "$build" "${DEB_KERNELS:-$order}" ;;
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
			echo "$((SECONDS - start)) $job" >>"$queue.seconds"
		) 9>"$queue.lock"
	done
}

echo "== VM boots, two at a time: logs in $build/logs/vm-*.log"
worker &
w1=$!
(
	for k in $order; do flock -s "$queue.prep-$k" true; done
	worker
) &
w2=$!
wait $w1 $w2
wait "$prep_pid" || rc=1
cat "$build/logs/vm-prepare.log"
if [ -s "$queue.prep-failed" ]; then
	echo "== preparing failed for: $(tr '\n' ' ' <"$queue.prep-failed")"
	rc=1
fi
# The lengths for the next plan, for the boots that passed (a failed boot
# may have ended early).
if [ -s "$queue.seconds" ] && mkdir -p "${times_file%/*}" 2>/dev/null; then
	{
		while read -r secs j; do
			grep -q -x -F "$j" "$queue.failed" || echo "$secs $j"
		done <"$queue.seconds"
		if [ -r "$times_file" ]; then
			while read -r secs j; do
				grep -q -F " $j" "$queue.seconds" || echo "$secs $j"
			done <"$times_file"
		fi
	} >"$times_file.new" && mv "$times_file.new" "$times_file"
fi
if [ -s "$queue.failed" ]; then
	echo "== VM boots with failures: $(tr '\n' ' ' <"$queue.failed")"
	rc=1
fi
echo "== VM phase: $((SECONDS - t0)) s"
exit $rc
