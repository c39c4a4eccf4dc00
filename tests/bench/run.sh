#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh ROOT BUILD: `make bench`. Not a test: measures af_smbdirect next to
# perftest on the same rxe device, and SMB over it next to cifs.ko and ksmbd,
# in one VM run of the non-debug kernel (KASAN/lockdep/kmemleak overhead
# would swamp everything) and prints ratios.
#
# Then the counted rows (issue #47): a second boot of the same kernel under
# QEMU with the sdcount TCG plugin (tests/bench/plugin/, -accel
# tcg,thread=single, nokaslr, -cpu without ERMS and FSRM so that the
# kernel's memcpy runs as a loop whose instructions grow with the bytes
# instead of one "rep movsb", which TCG counts once; -icount shift=0,sleep=off
# so that guest time is instruction time: the reaping batches at depth 8
# no longer follow the host's load), tests/bench/guest-count.sh's `smbdirect perf`
# rows three times each, and tests/bench/count-report.py's table of guest
# instructions per byte by bucket (BUILD/bench/count/). Wall-clock time
# does not enter it. SD_BENCH_ONLY=count boots only the counted VM,
# SD_BENCH_ONLY=time only the first; SD_BENCH_RUNS (default 3) runs per row.
set -euo pipefail
root=$1 build=$2
series=${SD_BENCH_KERNEL:-7.2}
kdir=$("$root/tests/vm/build-kernel.sh" "$series" bench)
mkdir -p "$build/bench"
make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" > "$build/bench/module.log"
mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$build/bench/module.log")
# The register+deregister baseline: the module as it was before pooled
# memory regions (the same calls, measured in the same VM run after an
# rmmod/insmod), built from the repository's history when it has it.
base=$(git -C "$root" log --format=%H -1 --grep='pooled MRs per socket' 2>/dev/null || true)
bmdir=
if [ -n "$base" ]; then
	rm -rf "$build/bench/regbase-src"
	mkdir -p "$build/bench/regbase-src"
	git -C "$root" archive "$base^" | tar -x -C "$build/bench/regbase-src"
	if make --no-print-directory -C "$build/bench/regbase-src" module KDIR="$kdir" \
		BUILD="$build/bench/regbase" > "$build/bench/regbase.log" 2>&1; then
		bmdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$build/bench/regbase.log")
	else
		echo "bench: the module before pooled MRs did not build ($build/bench/regbase.log)" >&2
	fi
fi
# `smbdirect perf` and the SMB2 examples from the user-space build the VM
# tests use (RelWithDebInfo).
us=$("$root/tests/userspace/build.sh" "$root" "$build")
# The patched Samba (make samba) for the cifs.ko -> smbd and smbclient rows:
# BUILD/samba/bin, which the guest finds beside the user-space build.
only=${SD_BENCH_ONLY:-}
if [ "$only" != count ] && ! make --no-print-directory -C "$root" samba BUILD="$build" WERROR=1 > "$build/bench/samba.log" 2>&1; then
	echo "bench: make samba failed ($build/bench/samba.log): no patched Samba rows" >&2
fi
if [ "$only" != count ]; then
	out=$build/bench/vm
	rm -rf "$out"
	SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_VM_TIMEOUT:-1800} \
		"$root/tests/vm/run-vm.sh" "$kdir" "$out" \
		tests/bench/guest-bench.sh "$us" "${SD_BENCH_SECONDS:-5}" "${SD_BENCH_SMB_MIB:-64}" \
		"${bmdir:-none}"
	cat "$out/bench.txt"
fi
[ "$only" != time ] || exit 0

# --- the counted rows ---------------------------------------------------------
so=$("$root/tests/bench/plugin/build.sh" "$build/bench/plugin")
names=$build/bench/kernel-names.txt
"$root/tests/bench/plugin/sdsyms.sh" "$kdir" > "$names"
cout=$build/bench/count
rm -rf "$cout"
mkdir -p "$cout"
crc=0
SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_VM_TIMEOUT:-1800} \
	SD_VM_ACCEL=tcg,thread=single SD_VM_ICOUNT=shift=0,sleep=off SD_VM_APPEND=nokaslr \
	SD_VM_CPU=max,la57=off,erms=off,fsrm=off \
	SD_VM_PLUGIN="$so,out=$cout/sdcount.txt,ranges=$cout/ranges.txt,dump=$cout/dump.txt" \
	"$root/tests/vm/run-vm.sh" "$kdir" "$cout" \
	tests/bench/guest-count.sh "$us" "$names" "${SD_BENCH_RUNS:-3}" || crc=$?
"$root/tests/bench/count-report.py" "$cout/runs.txt" "$cout/report.json" |
	tee "$cout/report.txt" || crc=1
echo "profiles: tests/bench/sdprofile.py $cout/dump.txt $cout/kallsyms.txt $cout/ranges.txt PAIR"
exit "$crc"
