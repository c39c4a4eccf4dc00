#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh KDIR OUT SCRIPT [ARGS...]
#
# Boots KDIR's bzImage under QEMU/TCG (KVM guests hang on these machines)
# with the host's root file system read-only over 9p, the repository and the
# writable directory OUT as two more 9p shares, and runs SCRIPT (a path
# inside the repository) in the guest after tests/vm/guest-init.sh has set up
# devices, networking and RDMA links. The guest's console goes to
# OUT/console.log and to stdout. Exit status: the script's, or 124 on timeout,
# or 125 when the guest died without reporting one.
#
# Environment: SD_VM_TIMEOUT (seconds, default 1500), SD_VM_MEM (default 3G),
# SD_MODULE_DIR (build directory holding af_smbdirect.ko), SD_VM_QUIET=1 to
# keep the console off stdout, SD_VM_APPEND (more kernel parameters), SD_VM_CPUS
# (the guest's CPUs, default 1), SD_VM_CPU (QEMU's -cpu, default
# max,la57=off; for experiments with the guest's CPU model), SD_VM_ROOT (the
# directory the guest boots as its root, default /; deb-vm.sh's scratch
# root with the Debian packages installed), SD_VM_ACCEL, SD_VM_PLUGIN and
# SD_VM_ICOUNT (below).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kdir=$1 out=$2 script=$3
shift 3
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/status" "$out/console.log"

timeout=${SD_VM_TIMEOUT:-1500}
kernel=$kdir/arch/x86/boot/bzImage
[ -f "$kernel" ] || { echo "run-vm: no $kernel" >&2; exit 2; }

# no_timer_check: under TCG on a busy host the IO-APIC timer check can
# fail and panic the boot. log_buf_len: a cascade of KASAN reports must not
# push the first one out of dmesg.txt (a 7.2 run lost it from a 128 KiB log).
# Kernel parameters with '=' that the kernel does not know reach init as
# environment variables; that is how the guest learns its paths.
printf '%q ' "$@" > "$out/args"
append="console=ttyS0 loglevel=4 log_buf_len=8M panic=-1 oops=panic kasan_multi_shot no_timer_check
	root=sdroot rootfstype=9p ro
	rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose
	init=$root/tests/vm/guest-init.sh
	SD_REPO=$root SD_SCRIPT=$script SD_MODULE_DIR=${SD_MODULE_DIR:-}
	SD_KVER=$(basename "$kdir") ${SD_VM_APPEND:-}"
append=$(echo $append)

# la57=off: with 5-level paging, an interrupt arriving during early CPU
# identification on a slow TCG host makes KASAN report wild accesses in the
# IRQ code (seen on 7.2 under load); 4-level paging boots reliably.
#
# SD_VM_CPUS (default 1): the guest's CPUs. The test kernels have no ACPI
# (tinyconfig) and find their CPUs in SeaBIOS's MP table, which lists one
# CPU per package: so each CPU is a socket of its own (-smp N with QEMU's
# default topology, N cores in one socket, boots one CPU). Multi-threaded
# TCG runs each vCPU on a host thread of its own: an SMP guest's CPUs run
# at the same time, as on hardware.
cpus=${SD_VM_CPUS:-1}
#
# SD_VM_ACCEL (default tcg,thread=multi) and SD_VM_PLUGIN (a -plugin
# argument): the counted bench (tests/bench/run.sh) runs the guest under
# tcg,thread=single with the sdcount TCG plugin, whose inline counters
# would race between MTTCG's vCPU threads.
qemu=(qemu-system-x86_64 -accel "${SD_VM_ACCEL:-tcg,thread=multi}" -cpu "${SD_VM_CPU:-max,la57=off}"
	-smp "$cpus,sockets=$cpus,cores=1,threads=1"
	-m "${SD_VM_MEM:-3G}" -nodefaults -display none -no-reboot
	-serial stdio -monitor none
	-kernel "$kernel" -append "$append"
	-virtfs "local,path=${SD_VM_ROOT:-/},mount_tag=sdroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$root,mount_tag=sdrepo,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=sdout,security_model=none,multidevs=remap"
	-device virtio-rng-pci)
[ -z "${SD_VM_PLUGIN:-}" ] || qemu+=(-plugin "$SD_VM_PLUGIN")
# SD_VM_ICOUNT: QEMU's -icount (e.g. shift=0,sleep=off: guest time follows
# the instructions executed, not the host's clock; single-threaded TCG only)
[ -z "${SD_VM_ICOUNT:-}" ] || qemu+=(-icount "$SD_VM_ICOUNT")

set +e
# A report storm (a timer firing on freed memory reports every tick, for
# ever; seen once from 7.2's smbdirect under cifs.ko) would otherwise run
# until the timeout: stop the guest once the console has
# SD_VM_STORM (default 100) KASAN reports. A run has one, the canary.
storm_watch() { # CONSOLE PID
	local n
	while kill -0 "$2" 2>/dev/null; do
		sleep 15
		n=$(grep -c 'BUG: KASAN' "$1" 2>/dev/null)
		if [ "${n:-0}" -ge "${SD_VM_STORM:-100}" ]; then
			echo "$n" >"$out/storm"
			kill -TERM "$2" 2>/dev/null
			return
		fi
	done
}
if [ "${SD_VM_QUIET:-0}" = 1 ]; then
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null >"$out/console.log" 2>&1 &
	qpid=$!
	storm_watch "$out/console.log" "$qpid" &
	wpid=$!
	wait "$qpid"
	qrc=$?
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
else
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tee "$out/console.log"
	qrc=${PIPESTATUS[0]}
	[ "$qrc" -ne 124 ] || touch "$out/timed-out"
fi
set -e
if [ -f "$out/storm" ]; then
	echo "run-vm: $(cat "$out/storm") KASAN reports on the console, a report storm: the guest was stopped" >&2
	exit 126
fi
if [ -f "$out/timed-out" ] || [ "$qrc" -eq 124 ]; then
	echo "run-vm: TIMEOUT after ${timeout}s" >&2
	exit 124
fi
if [ ! -s "$out/status" ]; then
	echo "run-vm: the guest stopped without reporting a status (crash or panic?)" >&2
	exit 125
fi
exit "$(cat "$out/status")"
