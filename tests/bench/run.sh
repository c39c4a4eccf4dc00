#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh ROOT BUILD: `make bench`. Not a test: measures af_smbdirect next to
# perftest on the same rxe device, and SMB over it next to cifs.ko and ksmbd,
# in one VM run of the non-debug kernel (KASAN/lockdep/kmemleak overhead
# would swamp everything) and prints ratios.
set -euo pipefail
root=$1 build=$2
series=${SD_BENCH_KERNEL:-7.2}
kdir=$("$root/tests/vm/build-kernel.sh" "$series" bench)
mkdir -p "$build/bench"
make --no-print-directory -C "$root" module KDIR="$kdir" BUILD="$build" > "$build/bench/module.log"
mdir=$(sed -n 's/^built \(.*\)\/af_smbdirect.ko against .*/\1/p' "$build/bench/module.log")
# `smbdirect perf` and the SMB2 examples from the user-space build the VM
# tests use (RelWithDebInfo).
us=$("$root/tests/userspace/build.sh" "$root" "$build")
out=$build/bench/vm
rm -rf "$out"
SD_MODULE_DIR=$mdir SD_VM_QUIET=1 SD_VM_TIMEOUT=${SD_VM_TIMEOUT:-1800} \
	"$root/tests/vm/run-vm.sh" "$kdir" "$out" \
	tests/bench/guest-bench.sh "$us" "${SD_BENCH_SECONDS:-5}" "${SD_BENCH_SMB_MIB:-64}"
cat "$out/bench.txt"
