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
#   SERIES user   the user-space suites (USERSPACE_KERNELS only; light kernel)
#   SERIES smb    the SMB-stack interop (USERSPACE_KERNELS only; light kernel)
#   SERIES kernel KUnit, kselftests, cifs.ko/ksmbd transport interop
#   demo          `make check-demo` (with "demo"): the README's command
# Each boot's output goes to BUILD/logs/vm-JOB.log and is printed, whole,
# when it ends, with the seconds it took. Exit 1 when any part failed.
set -uo pipefail
root=$1 build=$2 kernels=$3 demo=${4:-}
mkdir -p "$build/logs"
rc=0
t0=$SECONDS
# SD_VM_PLAN_ONLY=1: print the plan (below), build and boot nothing.
for k in $kernels; do
	[ "${SD_VM_PLAN_ONLY:-0}" = 1 ] && break
	"$root/tests/vm/check-vm.sh" "$root" "$build" "$k" prepare || rc=1
done
echo "== VM builds done in $((SECONDS - t0)) s"
# The light kernel (and its module), which only the user and smb boots
# need, is built beside the first boots at nice 19, on what the guests
# leave idle (~15-20 % of the two cores, measured 2026-11-27): on a
# machine without it cached that is a kernel build (~25 CPU minutes) off
# the critical path. It holds prepare-light.lock while it builds; the
# user and smb boots wait for it there (check-vm.sh).
light_pid=
if [ "${SD_VM_PLAN_ONLY:-0}" != 1 ]; then
	exec 7>"$build/logs/prepare-light.lock"
	flock -x 7
	(
		r=0
		for k in $kernels; do
			nice -n 19 "$root/tests/vm/check-vm.sh" "$root" "$build" "$k" prepare-light || r=1
		done
		echo "== light kernel builds done at $((SECONDS - t0)) s of the VM phase"
		exit $r
	) >"$build/logs/vm-prepare-light.log" 2>&1 &
	light_pid=$!
	exec 7>&-
fi
# From here on the boots only read what was built (see check-vm.sh).
export SD_VM_PREPARED=1

# The plan. Each boot has an expected length: the last one measured on
# this machine (~/.cache/smbdirect/vm-seconds, written below; only an
# estimate, nothing depends on it) or the defaults here (estimates for
# 2026-11-24, with the two-party suites). The boots are split into two
# lists with the smallest longer sum (every split is tried: there are at
# most a handful of boots), each list longest first, one per worker. A
# worker whose list is empty takes the last boot of the other list, so a
# wrong estimate costs at most the shorter boot.
userspace_kernels() {
	local k
	for k in $kernels; do
		case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) echo "$k" ;; esac
	done
}
jobs=()
for k in $(userspace_kernels); do jobs+=("$k kernel" "$k smb" "$k user"); done
for k in $(echo $kernels | tr ' ' '\n' | sort -rV); do
	case " ${USERSPACE_KERNELS:-7.2} " in *" $k "*) ;; *) jobs+=("$k kernel") ;; esac
done
[ "$demo" = demo ] && jobs+=(demo)

# The name carries the boots' contents: a new suite in a boot makes the
# old lengths wrong, so such a change names a new file (.2: the two-party
# suites, .3: the hostile peer moved to 7.2's smb boot, 2026-11-24, .4:
# the user and smb boots and the demo on the light kernel, 2026-11-27).
times_file=${XDG_CACHE_HOME:-$HOME/.cache}/smbdirect/vm-seconds.4
declare -A est=()
for j in "${jobs[@]}"; do
	case $j in
	*" smb") est[$j]=850 ;;
	*" user") est[$j]=650 ;;
	demo) est[$j]=210 ;;
	*) case " $(userspace_kernels | tr '\n' ' ') " in
		*" ${j% kernel} "*) est[$j]=1300 ;;
		*) est[$j]=1450 ;;
		esac ;;
	esac
done
if [ -r "$times_file" ]; then
	while read -r secs j; do
		[[ $secs =~ ^[0-9]+$ ]] && [ -n "${est[$j]+set}" ] && est[$j]=$secs
	done <"$times_file"
fi
# Longest first, then the split: bit i of the mask puts jobs[i] in list 1.
mapfile -t jobs < <(for j in "${jobs[@]}"; do echo "${est[$j]} $j"; done | sort -rn | cut -d' ' -f2-)
n=${#jobs[@]} best=-1 best_mask=0
for ((mask = 0; mask < (1 << n); mask++)); do
	a=0 b=0
	for ((i = 0; i < n; i++)); do
		if ((mask >> i & 1)); then a=$((a + est[${jobs[i]}])); else b=$((b + est[${jobs[i]}])); fi
	done
	m=$((a > b ? a : b))
	((best < 0 || m < best)) && best=$m best_mask=$mask
done
queue=$build/logs/vm-queue
: >"$queue.1"
: >"$queue.2"
for ((i = 0; i < n; i++)); do
	if ((best_mask >> i & 1)); then echo "${jobs[i]}" >>"$queue.1"; else echo "${jobs[i]}" >>"$queue.2"; fi
done
: >"$queue.failed"
: >"$queue.seconds"
echo "== VM plan (expected seconds: $(for j in "${jobs[@]}"; do printf '%s %s, ' "$j" "${est[$j]}"; done)longest list $best s):" \
	"worker 1: $(tr '\n' ',' <"$queue.1")" "worker 2: $(tr '\n' ',' <"$queue.2")"
[ "${SD_VM_PLAN_ONLY:-0}" = 1 ] && exit 0

# pop OWN OTHER: the first boot of list OWN, else the last of list OTHER,
# under a lock; nothing when both are empty.
pop() {
	(
		flock 9
		if [ -s "$1" ]; then
			head -n 1 "$1"
			sed -i 1d "$1"
		elif [ -s "$2" ]; then
			tail -n 1 "$2"
			sed -i '$d' "$2"
		fi
	) 9>"$queue.lock"
}

run_job() { # JOB LOG
	case $1 in
	demo) make --no-print-directory -C "$root" check-demo NO_RESET=1 BUILD="$build" ;;
	*) "$root/tests/vm/check-vm.sh" "$root" "$build" $1 ;;
	esac >"$2" 2>&1
}

worker() { # OWN OTHER
	local job log start r
	while job=$(pop "$1" "$2") && [ -n "$job" ]; do
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
worker "$queue.1" "$queue.2" &
w1=$!
worker "$queue.2" "$queue.1" &
w2=$!
wait $w1 $w2
if [ -n "$light_pid" ]; then
	wait "$light_pid" || { echo "== the light kernel builds failed:"; rc=1; }
	cat "$build/logs/vm-prepare-light.log"
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
